"""Agreement statistics (`dagtui.calibration.stats`) against independent implementations:
scikit-learn's `cohen_kappa_score` (test extra), brute-force definitions written differently
(pairs of items for chance agreement, pairs of raters for Fleiss), and textbook values."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dagtui.calibration import stats

CLASSES = ["a", "b", "c", "d"]


def brute_kappa(labels: list, verdicts: list) -> float:
    """Cohen's kappa from its definition, chance agreement counted over all (i, j) pairs:
    p_e = P(label of a random item == verdict of another random item)."""
    n = len(labels)
    p_o = sum(a == b for a, b in zip(labels, verdicts, strict=True)) / n
    p_e = sum(labels[i] == verdicts[j] for i in range(n) for j in range(n)) / (n * n)
    return 1.0 if p_o == 1 else (p_o - p_e) / (1 - p_e)


pairs = st.integers(1, 4).flatmap(lambda k: st.lists(
    st.tuples(st.sampled_from(CLASSES[:k]), st.sampled_from(CLASSES[:k])), min_size=1,
    max_size=60))


@given(pairs)
@settings(max_examples=300, deadline=None)
def test_kappa_matches_brute_force_definition(data: list[tuple[str, str]]) -> None:
    labels, verdicts = [a for a, _ in data], [b for _, b in data]
    assert stats.cohen_kappa(labels, verdicts) == pytest.approx(brute_kappa(labels, verdicts))


def test_kappa_matches_scikit_learn_on_random_label_pairs() -> None:
    sklearn = pytest.importorskip("sklearn.metrics", reason="scikit-learn (test extra) is the "
                                  "independent implementation")
    rng = random.Random(7)
    for _ in range(300):
        k = rng.randint(2, 4)
        n = rng.randint(2, 80)
        labels = [rng.choice(CLASSES[:k]) for _ in range(n)]
        # a judge that mostly agrees, so kappa spans the whole range
        noise = rng.random()
        verdicts = [lab if rng.random() > noise else rng.choice(CLASSES[:k]) for lab in labels]
        ours = stats.cohen_kappa(labels, verdicts)
        theirs = sklearn.cohen_kappa_score(labels, verdicts)
        if math.isnan(theirs):  # the degenerate single-class case: defined as 1 here
            assert labels == verdicts and ours == 1.0
        else:
            assert ours == pytest.approx(theirs, abs=1e-12)


def test_kappa_on_booleans_matches_scikit_learn() -> None:
    sklearn = pytest.importorskip("sklearn.metrics")
    labels = [True, True, False, False, True, False, True, True]
    verdicts = [True, False, False, True, True, False, True, True]
    assert stats.cohen_kappa(labels, verdicts) == pytest.approx(
        sklearn.cohen_kappa_score(labels, verdicts))


@given(pairs)
@settings(max_examples=300, deadline=None)
def test_kappa_is_one_exactly_when_every_verdict_matches(data: list[tuple[str, str]]) -> None:
    labels, verdicts = [a for a, _ in data], [b for _, b in data]
    assert (stats.cohen_kappa(labels, verdicts) == 1.0) == (labels == verdicts)
    assert stats.cohen_kappa(labels, labels) == 1.0


def test_degenerate_single_class() -> None:
    assert stats.cohen_kappa([True] * 5, [True] * 5) == 1.0  # 0/0 by the formula: defined 1
    assert stats.cohen_kappa([True] * 4, [True, True, True, False]) == 0.0
    assert stats.cohen_kappa([], []) is None
    assert stats.raw_agreement([], []) is None


def test_known_values() -> None:
    # 50 items: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no -> p_o .7, p_e .5, kappa .4
    labels = ["y"] * 25 + ["n"] * 25
    verdicts = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert stats.raw_agreement(labels, verdicts) == pytest.approx(0.7)
    assert stats.cohen_kappa(labels, verdicts) == pytest.approx(0.4)
    assert stats.confusion(labels, verdicts) == {"y": {"y": 20, "n": 5}, "n": {"y": 10, "n": 15}}


def test_bool_and_int_are_different_classes() -> None:
    assert stats.cohen_kappa([True, False], [1, 0]) < 1.0


def test_bootstrap_interval_is_seeded_and_brackets_kappa() -> None:
    rng = random.Random(3)
    labels = [rng.choice("abc") for _ in range(60)]
    verdicts = [lab if rng.random() < 0.7 else rng.choice("abc") for lab in labels]
    a = stats.bootstrap_kappa(labels, verdicts, seed=11)
    b = stats.bootstrap_kappa(labels, verdicts, seed=11)
    assert a == b and a is not None
    lo, hi = a
    assert -1 <= lo <= stats.cohen_kappa(labels, verdicts) <= hi <= 1
    assert stats.bootstrap_kappa(labels, labels) == (1.0, 1.0)
    assert stats.bootstrap_kappa([], []) is None


def brute_fleiss(items: list[list[str]]) -> float:
    """Fleiss' kappa from rater pairs: observed = share of agreeing ordered pairs of distinct
    ratings within an item (averaged over items); chance = the same for two ratings drawn from
    the pooled ratings with replacement."""
    per_item = []
    for item in items:
        pairs = [(x, y) for i, x in enumerate(item) for j, y in enumerate(item) if i != j]
        per_item.append(sum(x == y for x, y in pairs) / len(pairs))
    observed = sum(per_item) / len(per_item)
    pool = [r for item in items for r in item]
    chance = sum(x == y for x, y in itertools.product(pool, pool)) / len(pool) ** 2
    return 1.0 if observed == 1 else (observed - chance) / (1 - chance)


@given(st.integers(2, 5).flatmap(lambda m: st.lists(
    st.lists(st.sampled_from("xyz"), min_size=m, max_size=m), min_size=1, max_size=25)))
@settings(max_examples=200, deadline=None)
def test_fleiss_matches_pairwise_definition(items: list[list[str]]) -> None:
    assert stats.fleiss_kappa(items) == pytest.approx(brute_fleiss(items))


def test_fleiss_textbook_example() -> None:
    # Fleiss (1971) as tabulated on Wikipedia: 10 subjects, 14 raters, 5 categories -> 0.210
    table = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0],
             [2, 2, 8, 1, 1], [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2],
             [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    items = [[c for c, n in enumerate(row) for _ in range(n)] for row in table]
    assert stats.fleiss_kappa(items) == pytest.approx(0.20993, abs=1e-4)


def test_fleiss_edges() -> None:
    assert stats.fleiss_kappa([["a", "a"], ["a", "a"]]) == 1.0
    assert stats.fleiss_kappa([["a", "b"], ["a"]]) is None  # unequal ratings per item
    assert stats.fleiss_kappa([["a"]]) is None
    assert stats.fleiss_kappa([]) is None


def test_majority_margin() -> None:
    assert stats.majority([True, False, True]) == (True, pytest.approx(1 / 3))
    assert stats.majority(["a", "a", "a", "a", "b"]) == ("a", pytest.approx(0.6))
    assert stats.majority(["b", "a"]) == ("b", 0.0)  # a tie goes to the first seen

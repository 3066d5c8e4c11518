"""Agreement statistics for calibration: raw agreement, Cohen's kappa, Fleiss' kappa, a
seeded bootstrap interval, confusion matrices.

Written here rather than taken from a statistics package because the core stays free of
heavy dependencies (scikit-learn pulls in scipy and numpy for three formulas), and because
the degenerate cases need a definition the product can state: the tests check every formula
against independent implementations (scikit-learn's `cohen_kappa_score` when installed, and
brute-force definitions written differently).

Degenerate single-class case. Cohen's kappa is (p_o - p_e) / (1 - p_e); when the labels and
the verdicts all use one and the same class, p_e = 1 and the formula is 0/0 (scikit-learn
returns NaN). Here that case is defined as 1.0: every verdict matches its label, and kappa is
1 exactly when that holds. The same goes for Fleiss' kappa when every rating of every item is
one class. Computed with exact fractions, so "1.0" never comes from rounding.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from fractions import Fraction

#: bootstrap resamples for the kappa interval (seeded: the same data gives the same interval)
RESAMPLES = 1000
SEED = 20240611


def raw_agreement(labels: Sequence[Hashable], verdicts: Sequence[Hashable]) -> float | None:
    """Share of items whose verdict equals the label (None for no items)."""
    _same_length(labels, verdicts)
    if not labels:
        return None
    return sum(1 for a, b in zip(labels, verdicts, strict=True) if _eq(a, b)) / len(labels)


def cohen_kappa(labels: Sequence[Hashable], verdicts: Sequence[Hashable]) -> float | None:
    """Cohen's kappa between two raters on nominal classes (binary or multi-class).

    None for no items; 1.0 when every verdict matches its label (also in the degenerate
    single-class case, see the module docstring)."""
    _same_length(labels, verdicts)
    if not labels:
        return None
    return counted_agreement(Counter(zip(map(class_key, labels), map(class_key, verdicts),
                                         strict=True)))[1]


def counted_agreement(pairs: Counter) -> tuple[float | None, float | None]:
    """(raw agreement, Cohen's kappa) from counts of (label, verdict) pairs, each as `class_key`
    makes it: the figures `raw_agreement` and `cohen_kappa` give for the lists the counts
    stand for, without the lists (`dagtui run` counts them as cases finish). (None, None)
    for no pairs."""
    n = sum(pairs.values())
    if not n:
        return None, None
    agree = sum(c for (a, b), c in pairs.items() if a == b)
    if agree == n:
        return agree / n, 1.0
    ca: Counter = Counter()
    cb: Counter = Counter()
    for (a, b), c in pairs.items():
        ca[a] += c
        cb[b] += c
    return agree / n, _kappa_of(n, agree, sum(ca[k] * cb[k] for k in ca), exact=True)


def bootstrap_kappa(labels: Sequence[Hashable], verdicts: Sequence[Hashable], *,
                    resamples: int = RESAMPLES, seed: int = SEED,
                    level: float = 0.95) -> tuple[float, float] | None:
    """A percentile bootstrap interval for Cohen's kappa (cases resampled with replacement).

    Seeded, so a rerun on the same data prints the same interval. None for no items."""
    return _bootstrap(labels, verdicts, _kappa, resamples=resamples, seed=seed, level=level)


def bootstrap_agreement(labels: Sequence[Hashable], verdicts: Sequence[Hashable], *,
                        resamples: int = RESAMPLES, seed: int = SEED,
                        level: float = 0.95) -> tuple[float, float] | None:
    """The same percentile bootstrap interval (same resamples) for raw agreement."""
    return _bootstrap(labels, verdicts,
                      lambda a, b: sum(x == y for x, y in zip(a, b, strict=True)) / len(a),
                      resamples=resamples, seed=seed, level=level)


def _bootstrap(labels: Sequence[Hashable], verdicts: Sequence[Hashable],
               statistic: Callable[[list[Hashable], list[Hashable]], float], *,
               resamples: int, seed: int, level: float) -> tuple[float, float] | None:
    _same_length(labels, verdicts)
    n = len(labels)
    if not n:
        return None
    a = [class_key(x) for x in labels]
    b = [class_key(x) for x in verdicts]
    rng = random.Random(seed)
    values: list[float] = []
    for _ in range(resamples):
        idx = [rng.randrange(n) for _ in range(n)]
        values.append(statistic([a[i] for i in idx], [b[i] for i in idx]))
    values.sort()
    tail = (1 - level) / 2
    lo = values[max(0, int(tail * resamples))]
    hi = values[min(resamples - 1, int((1 - tail) * resamples) - 1)]
    return lo, hi


def mcnemar_exact(before_only: int, after_only: int) -> float:
    """The exact two-sided McNemar p-value of a paired change: `before_only` items right
    before and wrong after, `after_only` the reverse; under no change each discordant pair
    goes either way with probability one half (a binomial test on the discordant pairs).
    1.0 when no pair is discordant."""
    n = before_only + after_only
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(before_only, after_only) + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2 ** n)))


def _kappa(a: list[Hashable], b: list[Hashable], *, exact: bool = False) -> float:
    """Cohen's kappa of two non-empty rating lists; `exact` computes in fractions (the
    reported figure), else in floats (the bootstrap's inner loop)."""
    n = len(a)
    agree = sum(1 for x, y in zip(a, b, strict=True) if x == y)
    if agree == n:
        return 1.0
    ca, cb = Counter(a), Counter(b)
    return _kappa_of(n, agree, sum(ca[k] * cb[k] for k in ca), exact=exact)


def _kappa_of(n: int, agree: int, chance: int, *, exact: bool) -> float:
    """Kappa from n ratings, `agree` of them equal, and the chance product sum."""
    # p_o < 1 here, and p_e = 1 would need both raters on one shared class, i.e. p_o = 1
    if exact:
        p_o, p_e = Fraction(agree, n), Fraction(chance, n * n)
        return float((p_o - p_e) / (1 - p_e))
    p_o2, p_e2 = agree / n, chance / (n * n)
    return (p_o2 - p_e2) / (1 - p_e2)


def fleiss_kappa(ratings: Sequence[Sequence[Hashable]]) -> float | None:
    """Fleiss' kappa: agreement among the ratings of each item (here: an item is a case, its
    ratings are the samples of one node's verdict). Every item needs the same number of
    ratings, at least two; None when there is nothing to measure.

    Chosen over Krippendorff's alpha because every case gets the same number of samples, which
    is exactly Fleiss' setting, and its formula is short enough to check by hand. 1.0 when
    every item's ratings are unanimous (also when all are one class: see the module
    docstring)."""
    items = [[class_key(r) for r in item] for item in ratings]
    if not items:
        return None
    m = len(items[0])
    if m < 2 or any(len(item) != m for item in items):
        return None
    if all(len(set(item)) == 1 for item in items):
        return 1.0
    n = len(items)
    totals: Counter = Counter()
    p_bar = Fraction(0)
    for item in items:
        counts = Counter(item)
        totals.update(counts)
        p_bar += Fraction(sum(c * c for c in counts.values()) - m, m * (m - 1))
    p_bar /= n
    p_e = sum(Fraction(c, n * m) ** 2 for c in totals.values())
    if p_e == 1:  # unreachable: one class everywhere means unanimous items
        return 1.0
    return float((p_bar - p_e) / (1 - p_e))


def majority(ratings: Sequence[Hashable]) -> tuple[Hashable, float]:
    """(the most frequent rating, its margin): margin = (top count - runner-up count) / n.

    Ties go to the rating seen first, so the result does not depend on hash order."""
    counts = Counter(class_key(r) for r in ratings)
    order: dict[Hashable, Hashable] = {}
    for r in ratings:
        order.setdefault(class_key(r), r)
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    top_key, top = ranked[0]
    second = ranked[1][1] if len(ranked) > 1 else 0
    return order[top_key], (top - second) / len(ratings)


def confusion(labels: Sequence[Hashable], verdicts: Sequence[Hashable]
              ) -> dict[Hashable, dict[Hashable, int]]:
    """label -> verdict -> count (only cells that occur)."""
    _same_length(labels, verdicts)
    out: dict[Hashable, dict[Hashable, int]] = {}
    for a, b in zip(labels, verdicts, strict=True):
        row = out.setdefault(a, {})
        row[b] = row.get(b, 0) + 1
    return out


def class_key(value: Hashable) -> Hashable:
    """Class identity: `True` and `1` are different classes (a bool verdict is not a number)."""
    return (type(value).__name__, value)


def _eq(a: Hashable, b: Hashable) -> bool:
    return class_key(a) == class_key(b)


def _same_length(a: Sequence[object], b: Sequence[object]) -> None:
    if len(a) != len(b):
        raise ValueError(f"labels and verdicts differ in length ({len(a)} vs {len(b)})")

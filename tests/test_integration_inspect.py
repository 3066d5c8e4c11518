"""`dagtui.integrations.inspect.graph_scorer` inside Inspect AI's own `eval()`.

Inspect's mock model (`mockllm/model`) plays the model under test and answers each sample
with a scripted meeting summary; the graph's judge is litellm against the loopback stub
(tests/stub_server.py), which counts the calls. The log must hold, per sample, the score and
pass, the path as explanation and the per-node verdicts in metadata. Needs inspect-ai (the
`inspect` extra; CI installs it in the interop venv); skips without it.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="inspect-ai is in the 'inspect' extra (interop venv)")

from inspect_ai import Task, eval  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.model import ModelOutput, get_model  # noqa: E402
from inspect_ai.solver import generate  # noqa: E402
from meeting_judge import BAD, GATE_REASON, GOOD, MEETING, headings_judge  # noqa: E402
from stub_server import Fault, StubServer  # noqa: E402

from dagtui.integrations.inspect import graph_scorer  # noqa: E402


@pytest.fixture(autouse=True)
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inspect estimates the prompt's tokens with tiktoken's o200k_base, which tiktoken
    downloads unless it finds it in TIKTOKEN_CACHE_DIR: litellm ships that file, so point
    there and nothing leaves the machine. Files (logs, .dagtui/) land in tmp_path."""
    # found without importing litellm, whose import would first try to fetch a price list
    spec = importlib.util.find_spec("litellm")
    assert spec is not None and spec.submodule_search_locations
    tokenizers = Path(list(spec.submodule_search_locations)[0], "litellm_core_utils", "tokenizers")
    assert tokenizers.is_dir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tokenizers))
    monkeypatch.chdir(tmp_path)


def run_eval(tmp_path: Path, scorer: object) -> object:
    outputs = [ModelOutput.from_content(model="mockllm/model", content=GOOD["actual_output"]),
               ModelOutput.from_content(model="mockllm/model", content=BAD["actual_output"])]
    model = get_model("mockllm/model", custom_outputs=outputs)
    task = Task(dataset=[Sample(input="summarise the meeting", id="good"),
                         Sample(input="summarise the meeting", id="bad")],
                solver=generate(), scorer=scorer)
    logs = eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none",
                max_samples=1)
    assert logs[0].status == "success", logs[0].error
    return logs[0]


def test_eval_scores_with_the_graph(tmp_path: Path) -> None:
    with StubServer(headings_judge()) as stub:
        log = run_eval(tmp_path, graph_scorer(MEETING, judge="openai/gpt-4.1-mini",
                                              api_base=stub.base_url, api_key="test"))
        assert stub.calls == 3 + 2
    scores = {s.id: s.scores["graph_scorer"] for s in log.samples}
    good, bad = scores["good"], scores["bad"]
    assert good.value == {"score": 1.0, "pass": 1.0}
    assert bad.value == {"score": 0.0, "pass": 0.0}
    assert "path: extract ; present=false → score 0" in bad.explanation
    assert f"present (binary): false — {GATE_REASON}" in bad.explanation
    assert bad.metadata["path"] == "extract ; present=false → score 0"
    assert bad.metadata["verdicts"]["present"]["answer"] is False
    assert bad.metadata["verdicts"]["present"]["reason"] == GATE_REASON
    assert good.metadata["verdicts"]["order"]["answer"] == "Correct order"
    assert Path(bad.metadata["trace"]).is_file()
    metrics = {m.name: m.value for r in log.results.scores for m in r.metrics.values()
               if r.name == "score"}
    assert metrics["mean"] == 0.5


def test_a_judge_error_is_unscored_not_zero(tmp_path: Path) -> None:
    with StubServer(lambda body: Fault("400")) as stub:
        log = run_eval(tmp_path, graph_scorer(MEETING, judge="openai/gpt-4.1-mini",
                                              api_base=stub.base_url, api_key="test",
                                              cache=False, retries=0))
    score = log.samples[0].scores["graph_scorer"]
    assert math.isnan(score.value) and "ended in an error" in score.explanation

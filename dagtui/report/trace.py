"""Step records, run results and traces: everything a run did, kept and saved as JSON.

A `StepRecord` is one node of one run: the exact request (messages, response schema, model,
parameters), the raw text received, the parsed answer, the reason, usage, cost, latency,
cache hit, retries and any error — nothing summarised away. A `RunResult` is one
case: score, success, the deciding reason, the path, the steps and totals. A `Trace` binds a
result to the graph's content hash, the case and the judge, so it can be reloaded, replayed
or diffed later.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar

from dagtui.graph.model import Graph, about
from dagtui.judges.base import CallRecord
from dagtui.kinds import decides, extracts
from dagtui.report.outcome import CaseStatus
from dagtui.text import verdict_text

TRACE_VERSION = 1


def trace_file_name(index: int, *parts: str) -> str:
    """The file a `--trace-dir` run writes for the `index`-th case (0-based), e.g.
    `007_span-007.json` or, with the rule of a suite, `007_span-007__correctness.json`:
    the case number keeps a listing in dataset order, each part reduced to characters every
    file system accepts (`_safe_part`)."""
    return f"{index + 1:03d}_{'__'.join(_safe_part(p) for p in parts)}.json"


def save_trace(directory: str | Path, index: int, graph: Graph, case: Any, judge: Any,
               result: RunResult, *parts: str) -> Path:
    """Save one case's trace into a `--trace-dir`, named by `trace_file_name(index, *parts)`
    (default: the result's case): the one writer of a graph run's traces and a suite's."""
    name = trace_file_name(index, *(parts or (result.case,)))
    return Trace.of(graph, case, judge, result).save(Path(directory) / name)


def _safe_part(part: str) -> str:
    """`part` as it is when it is already safe (`A-Za-z0-9._-`, at most 60 characters, no
    `_` or `.` at either end); else its safe form with a short hash of the original, so two
    parts that reduce alike (rules `r/x`, `r_x`, `r:x`) never share one trace file."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", part).strip("_.")[:60] or "x"
    if safe == part:
        return part
    digest = hashlib.sha256(part.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{safe}-{digest}"


def written(record: Any) -> dict[str, Any]:
    """The properties a record's document writes beside its fields (its `WRITTEN`): the
    one list `to_dict` and the JSON Schema (`dagtui.report.documents`) both read."""
    return {name: getattr(record, name) for name in record.WRITTEN}


def record_data(record: Any) -> dict[str, Any]:
    """A record as its document writes it, by what the record declares (and the JSON Schema
    reads, `dagtui.report.documents`): each field but those its `UNWRITTEN` names, under the
    key its `RENAMED` gives, those its `OPTIONAL` names only when set, then each `WRITTEN`
    property. Values are as they are: a record inside is the caller's to turn."""
    renamed = getattr(record, "RENAMED", {})
    optional = getattr(record, "OPTIONAL", ())
    data = {renamed.get(f.name, f.name): getattr(record, f.name) for f in fields(record)
            if f.name not in getattr(record, "UNWRITTEN", ())
            and not (f.name in optional and not getattr(record, f.name))}
    return {**data, **written(record)} if hasattr(record, "WRITTEN") else data


def graph_hash(graph: Graph) -> str:
    """Content hash of what a graph means (its TOML-ready data), not of its formatting."""
    blob = json.dumps(graph.to_raw(), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


@dataclass
class StepRecord:
    """One node's execution in one run.

    `answer` is the node's result: the verdict (bool or label) for judgement and check
    nodes, the evidence text for a task node, the 0..10 score for a geval leaf. `then` is the
    node the verdict led to, `leaf_score` the 0..10 score it ended on (if it ended the path).
    `source` says who answered: judge, check, override (what-if), reused (an earlier step
    with an identical prompt), or error.
    """

    #: properties written beside the fields (`written`)
    WRITTEN: ClassVar[tuple[str, ...]] = ("cached",)

    node: str
    node_type: str
    index: int = 0
    source: str = field(default="judge", metadata=about(
        "Who answered: judge, check, override, reused, error."))
    judge: str | None = None
    prompt: list[dict[str, str]] | None = field(default=None, metadata=about(
        "The messages sent (null in the summary report: the results file and traces keep "
        "them)."))
    request: dict[str, Any] | None = None
    raw: str | None = None
    answer: Any = field(default=None, metadata=about(
        "The verdict (true/false or a label), the evidence text of a task node, or the "
        "0..10 score of a leaf."))
    reason: str = ""
    then: str | None = field(default=None, metadata=about("The node the verdict led to."))
    leaf_score: float | None = field(default=None, metadata=about(
        "The 0..10 score the path ended on here."))
    method: str | None = None
    sampled: Any = None
    evidence_from: list[str] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    latency: float = 0.0
    cache_hit: bool = False
    retries: int = 0
    calls: list[CallRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    error_kind: str | None = None

    @property
    def verdict(self) -> Any:
        """The verdict chosen (None for evidence or a score; the node type's kind says)."""
        return self.answer if decides(self.node_type) else None

    @property
    def evidence(self) -> Any:
        """The evidence text a task extracted (None for any other node)."""
        return self.answer if extracts(self.node_type) else None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def cached(self) -> bool:
        """Answered from the cache, no call sent."""
        return self.cache_hit

    @property
    def calls_made(self) -> int:
        """Requests that reached the provider (cache hits excluded)."""
        return sum(1 for c in self.calls if not c.cache_hit)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["calls"] = [c.to_dict() for c in self.calls]
        return {**data, **written(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StepRecord:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        known["calls"] = [CallRecord.from_dict(c) for c in data.get("calls", [])]
        return cls(**known)


@dataclass
class PathStep:
    """One decision on the path: node, what it answered, where it led."""

    node: str
    verdict: Any = None
    then: str | None = None
    score: float | None = field(default=None, metadata=about(
        "0..10, when this step ended the path."))

    def describe(self) -> str:
        shown = "" if self.verdict is None else verdict_text(self.verdict)
        head = f"{self.node}={shown}" if shown else self.node
        if self.then:
            return f"{head} → {self.then}"
        if self.score is not None:
            return f"{head} → score {self.score:g}"
        return head


@dataclass
class RunResult:
    """One case through the graph.

    `score` is 0..1 (None when the run ended in an error); `status` is pass, fail, error,
    or not_run (the judge halted before the case could be judged: `dagtui.judges.health`).
    """

    #: properties written beside the fields (`written`)
    WRITTEN: ClassVar[tuple[str, ...]] = (
        "status", "calls", "cache_hits", "cached_steps", "retries", "prompt_tokens",
        "completion_tokens", "cost")

    case: str
    score: float | None = field(default=None, metadata=about(
        "0..1; null when the case ended in an error."))
    success: bool | None = None
    threshold: float = 0.5
    reason: str = ""
    path: list[PathStep] = field(default_factory=list)
    steps: list[StepRecord] = field(default_factory=list)
    leaf: str | None = None
    error: str | None = None
    error_kind: str | None = None
    error_node: str | None = None
    wall_time: float = 0.0
    expected_score: float | None = None

    @property
    def status(self) -> CaseStatus:
        """pass or fail (a verdict), error (a judge error), not_run (the judge halted)."""
        if self.error_kind == "not_run":
            return "not_run"
        if self.error is not None or self.score is None:
            return "error"
        return "pass" if self.success else "fail"

    @property
    def calls(self) -> int:
        return sum(s.calls_made for s in self.steps)

    @property
    def cache_hits(self) -> int:
        return sum(1 for s in self.steps for c in s.calls if c.cache_hit)

    @property
    def cached_steps(self) -> int:
        """Steps answered wholly from the cache (no call sent for them)."""
        return sum(1 for s in self.steps if s.cache_hit)

    @property
    def prompt_tokens(self) -> int:
        return sum(s.prompt_tokens for s in self.steps)

    @property
    def completion_tokens(self) -> int:
        return sum(s.completion_tokens for s in self.steps)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def cost(self) -> float | None:
        costs = [s.cost for s in self.steps if s.cost is not None]
        return sum(costs) if costs else None

    @property
    def retries(self) -> int:
        return sum(s.retries for s in self.steps)

    def step(self, node: str) -> StepRecord | None:
        for s in self.steps:
            if s.node == node:
                return s
        return None

    def describe_path(self) -> str:
        return " ; ".join(p.describe() for p in self.path) or "(no steps)"

    def to_dict(self) -> dict[str, Any]:
        """Every field and every `WRITTEN` property, the steps last."""
        data = record_data(self)
        data["path"] = [asdict(p) for p in self.path]
        data["steps"] = [s.to_dict() for s in data.pop("steps")]  # last: the longest
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunResult:
        return cls(
            case=data.get("case", ""), score=data.get("score"), success=data.get("success"),
            threshold=data.get("threshold", 0.5), reason=data.get("reason", ""),
            path=[PathStep(**p) for p in data.get("path", [])],
            steps=[StepRecord.from_dict(s) for s in data.get("steps", [])],
            leaf=data.get("leaf"), error=data.get("error"), error_kind=data.get("error_kind"),
            error_node=data.get("error_node"), wall_time=data.get("wall_time", 0.0),
            expected_score=data.get("expected_score"),
        )


@dataclass
class Trace:
    """A saved run: graph hash, case, judge, steps and result (JSON on disk)."""

    graph_hash: str = field(metadata=about("The content hash of the graph it was run on."))
    case: dict[str, Any]
    judge: dict[str, Any]
    result: RunResult
    graph_path: str | None = None
    #: written as `dagtui_trace` (`to_dict`), the key that tells a trace from other JSON
    version: int = field(default=TRACE_VERSION, metadata=about("The trace format's version."))

    @property
    def steps(self) -> list[StepRecord]:
        return self.result.steps

    @classmethod
    def of(cls, graph: Graph, case: Any, judge: Any, result: RunResult) -> Trace:
        case_dict = case.to_dict() if hasattr(case, "to_dict") else dict(case)
        judge_info = judge.describe() if hasattr(judge, "describe") else {"name": str(judge)}
        return cls(graph_hash(graph), case_dict, judge_info, result, graph.path)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dagtui_trace": self.version, "graph_hash": self.graph_hash,
            "graph_path": self.graph_path, "case": self.case, "judge": self.judge,
            "steps": [s.to_dict() for s in self.result.steps],
            "result": {k: v for k, v in self.result.to_dict().items() if k != "steps"},
        }

    def save(self, path: str | Path) -> Path:
        """Write atomically; text a case or judge gave that no UTF-8 file can hold (a lone
        surrogate) is written as its escape (`dagtui.report.outputs`)."""
        from dagtui.report.outputs import safe_json, write_report

        write_report(path, safe_json(self.to_dict()))
        return Path(path)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trace:
        if "dagtui_trace" not in data:
            raise ValueError("not a dagtui trace (no 'dagtui_trace' key)")
        result = RunResult.from_dict({**data.get("result", {}), "steps": data.get("steps", [])})
        return cls(data.get("graph_hash", ""), data.get("case", {}), data.get("judge", {}),
                   result, data.get("graph_path"), int(data["dagtui_trace"]))

    @classmethod
    def load(cls, path: str | Path) -> Trace:
        """Read a saved trace; every unusable file raises `ValueError` (an `InputError` for
        a FIFO, a device, an oversized or non-UTF-8 file) or `OSError`."""
        from dagtui.inputs import TRACE_LIMIT, InputError, parser_gave_up, read_text

        text = read_text(path, limit=TRACE_LIMIT, what="trace file")
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            raise
        except (RecursionError, ValueError) as exc:  # deep nesting, a 5,000-digit integer
            message, line = parser_gave_up(exc, text)
            raise InputError(message, str(path), line) from None
        if not isinstance(data, dict):
            raise ValueError("not a dagtui trace (not a JSON object)")
        return cls.from_dict(data)

    def matches(self, graph: Graph) -> bool:
        """True when the trace was recorded on a graph with the same content."""
        return self.graph_hash == graph_hash(graph)

"""The documents dagtui writes, as pydantic models, for `dagtui schema` (report, results,
trace, calibration).

A CI job, a dashboard or a notebook reads what `dagtui run` leaves behind: the `--json`
report, its `.results.jsonl` beside it (one line per case as it finishes,
`dagtui.report.stream`), and the `--trace-dir` traces (`dagtui.report.trace`); `dagtui
calibrate --json` its calibration report (`dagtui.calibration.core`). Their JSON Schemas let
such a reader be checked against the format rather than against one sample, and say which
keys can be null; `dagtui merge` checks each shard's report against them.

The records a run keeps are the definition: a call (`CallRecord`), a step (`StepRecord`), a
path step, a case's result (`RunResult`), a trace (`Trace`), a node's figures (`NodeStats`),
a histogram bin and the report itself (`ScoreBin`, `ReportFigures`) are turned into models
from their own dataclass fields and what they declare of them — `WRITTEN` properties,
`UNWRITTEN`, `OPTIONAL` and `RENAMED` fields — which is also what their `to_dict` reads
(`dagtui.report.trace.record_data`); each key's description is its field's `about(...)`
meaning or its property's docstring. What no record holds is declared here: the open objects
(the case's fields, the judge's description), a shard's part, the run's view of the saved
calibration, and the calibration report, whose records keep their per-case findings as plain
dicts (its model says more than they do). Every key a writer always writes is
required, and an object whose writer fixes its keys is closed (`additionalProperties:
false`), so a key renamed on either side shows up as a validation error
(tests/test_schema_documents.py validates real runs).

pydantic is imported when the models are first asked for (`models()`), not with this module:
every module of the package is imported by tests/test_core_imports.py, which holds that none
loads pydantic, so the core and the editor start without it.
"""

import functools
from typing import Any, Literal, NamedTuple

#: the document kinds `dagtui schema` prints, with their titles
TITLES = {
    "report": "dagtui run report (--json FILE)",
    "results": "dagtui results line (one line of FILE.results.jsonl)",
    "trace": "dagtui trace (one file of --trace-dir DIR)",
    "calibration": "dagtui calibration report (dagtui calibrate --json FILE)",
}


class Documents(NamedTuple):
    """The model of each document kind (pydantic model classes)."""

    report: Any
    results: Any
    trace: Any
    calibration: Any


def document_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the document `kind`: report, results, trace or
    calibration."""
    model = getattr(models(), kind)
    out = _drop_null_defaults(model.model_json_schema(by_alias=True))
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": TITLES[kind],
            **{k: v for k, v in out.items() if k != "title"}}


def _drop_null_defaults(schema: Any) -> Any:
    """pydantic's schema without `"default": null`: it marks a key the writer sometimes
    leaves out (a suite's `rule`, a shard's `shard`), which is never written as null."""
    if isinstance(schema, dict):
        return {k: _drop_null_defaults(v) for k, v in schema.items()
                if not (k == "default" and v is None)}
    if isinstance(schema, list):
        return [_drop_null_defaults(v) for v in schema]
    return schema


@functools.cache
def models() -> Documents:
    """The document models, built (and pydantic imported) on the first call."""
    from pydantic import BaseModel, ConfigDict, Field
    from pydantic.json_schema import SkipJsonSchema  # a key left out, never written as null

    from dagtui.judges.base import CallRecord
    from dagtui.report.trace import PathStep, RunResult, StepRecord
    from dagtui.report.trace import Trace as TraceRecord
    from dagtui.run.batch import NodeStats, ReportFigures, ScoreBin

    class Closed(BaseModel):
        model_config = ConfigDict(extra="forbid")

    class Open(BaseModel):
        model_config = ConfigDict(extra="allow")

    class Judge(Open):
        """What the judge recorded about itself (its name, model and settings; never
        secrets)."""

        name: str

    class Case(Open):
        """The case as a cases file would hold it."""

        name: str

    records = _Records()
    records.model(CallRecord, name="Call")
    step = records.model(StepRecord, name="Step")
    records.model(PathStep)
    result = records.model(RunResult, name="Result", leave_out=("steps",))
    report_result = records.model(
        RunResult, name="ReportResult", optional=("steps",),
        doc="One case of the report (its steps when the report was written with them, as "
            "`dagtui run --json` does).")
    results_line = records.model(
        RunResult, name="ResultsLine", add={
            "rule": (str, "A suite run: the rule the case was judged by.", True)},
        doc="One line of FILE.results.jsonl: a case's result, written the moment it ended.")
    trace = records.model(
        TraceRecord, name="Trace", rename={"version": "dagtui_trace"},
        doc="One case's run, saved to be reloaded, replayed or compared.",
        replace={"case": Case, "judge": Judge, "result": result},
        add={"steps": (list[step], None, False)})  # type: ignore[valid-type]

    records.model(
        NodeStats, name="NodeFigures", replace={"verdicts": dict[str, int],
                                                "errors": dict[str, int]})
    records.model(ScoreBin, name="Bin")

    class Shard(Closed):
        """`--shard I/N`: which part of the split this report holds."""

        index: int
        count: int
        positions: list[int] = Field(description="Its cases' positions in the dataset.")

    class NodeState(Closed):
        """One node's calibration: fresh, stale (why) or missing."""

        node: str
        status: Literal["fresh", "stale", "missing"]
        reasons: list[str]

    class CorrectedPassRate(Closed):
        """The pass rate corrected for the judge's measured errors (docs/calibration.md)."""

        raw: float | None
        n: int = Field(description="Cases of the run judged pass or fail.")
        estimate: float | None
        ci: tuple[float, float] | None = Field(description="Its 95% interval.")
        sensitivity: float | None
        specificity: float | None
        calibration_pass: int
        calibration_fail: int
        youden: float | None = Field(description="sensitivity + specificity - 1.")
        unusable: str | None = Field(description="Why no correction could be made.")
        method: str

    class FragileCase(Closed):
        """A case whose pass/fail rests on a weak node (docs/calibration.md)."""

        case: str
        outcome: Literal["pass", "fail"]
        chance: float = Field(description="Its chance of a misjudged outcome.")
        weak: list[str] = Field(description="Its fragile nodes that err often.")
        fragile: list[str] = Field(description="Every node whose one wrong verdict flips it.")

    class FragileNode(Closed):
        """How many cases rest on one node, and its measured error rate."""

        cases: int
        error_rate: float | None

    class Fragile(Closed):
        """The run's fragile outcomes (docs/calibration.md)."""

        judged: int
        unknown: int = Field(description="Cases whose path the path table did not hold.")
        expected_misjudged: float
        weak_cases: int
        weak_error: float
        cases: list[FragileCase]
        nodes: dict[str, FragileNode]
        unavailable: str | None
        method: str

    class RunCalibration(Closed):
        """The saved calibration's state for this run, and the corrected pass rate."""

        state: Literal["fresh", "stale"]
        file: str | None
        line: str
        nodes: list[NodeState]
        end_to_end: list[str] | SkipJsonSchema[None] = None
        removed: list[str] | SkipJsonSchema[None] = None
        corrected_pass_rate: CorrectedPassRate | None
        fragile: Fragile | SkipJsonSchema[None] = None

    report = records.model(ReportFigures, name="Report", replace={
        "judge": Judge, "results": list[report_result],  # type: ignore[valid-type]
        "shard": Shard, "calibration": RunCalibration})

    calibration = _calibration_model(Closed, Judge)
    return Documents(report=report, results=results_line, trace=trace, calibration=calibration)


def _calibration_model(Closed: Any, Judge: Any) -> Any:  # noqa: N803 (the model bases)
    """The model of the calibration report (`dagtui.calibration.core.Calibration.to_dict`).

    Declared here rather than derived like the run's records: the calibration's records keep
    their per-case findings as plain dicts (`NodeCalibration.disagreements`, ...), which say
    less than this model does."""
    from pydantic import Field
    from pydantic.json_schema import SkipJsonSchema

    class Disagreement(Closed):
        """A case where the judge's verdict (or score, off by more than 1) is not the
        label."""

        case: str
        label: str
        verdict: str
        reason: str

    class NodeError(Closed):
        """A case where the node's judge call failed."""

        case: str
        error: str | None
        kind: str | None

    class Dropped(Closed):
        """A task node's evidence that misses labelled items."""

        case: str
        missing: list[str]
        evidence: Any

    class Text(Closed):
        """A task node's evidence beside the evidence text the label expects."""

        case: str
        label: str
        evidence: Any

    class CloseCall(Closed):
        """A case whose samples split nearly evenly."""

        case: str
        majority: str
        margin: float
        votes: dict[str, int]

    class NodeCalibration(Closed):
        """What calibration measured about one node."""

        node: str
        type: str
        classes: list[str] = Field(description="The verdicts, in the graph's order.")
        reached: int = Field(description="Cases the labels' path takes to this node.")
        cases: int = Field(description="Reached, labelled and answered: what is measured.")
        agreement: float | None
        kappa: float | None = Field(description="Cohen's kappa, judge against labels.")
        kappa_ci: tuple[float, float] | None = Field(description="Its bootstrap 95% interval.")
        confusion: dict[str, dict[str, int]] = Field(
            description="label -> verdict -> cases.")
        disagreements: list[Disagreement]
        errors: list[NodeError]
        unlabelled: list[str] = Field(description="Cases reaching the node with no label.")
        unsure: int = Field(description="Cases labelled \"unsure\" here: left out of kappa.")
        items_labelled: int
        items_found: int
        dropped: list[Dropped]
        texts: list[Text]
        mae: float | None = Field(description="A scored leaf: mean absolute error, 0..10.")
        flipped: int = Field(description="Cases whose end-to-end score this node changed.")
        flipped_pass_fail: int
        samples: int
        sampled_cases: int
        flip_rate: float | None
        margin: float | None
        fleiss: float | None = Field(description="Fleiss' kappa across the samples.")
        close_calls: list[CloseCall]
        recall: float | None = Field(description="Task nodes: labelled items found.")

    class PairAgreement(Closed):
        """Two annotators on one judgement node (docs/calibration.md, Several annotators)."""

        node: str
        first: str
        second: str
        cases: int = Field(description="Cases both labelled with a verdict.")
        unsure: int = Field(description="Cases both labelled where either was unsure.")
        agreement: float | None
        kappa: float | None = Field(description="Cohen's kappa between the two.")
        kappa_ci: tuple[float, float] | None = Field(description="Its bootstrap 95% interval.")

    class OutcomeCounts(Closed):
        """Pass/fail end to end: cases people passed (and of those the judge passed), cases
        they failed (and of those the judge failed)."""

        human_pass: int
        judge_pass: int
        human_fail: int
        judge_fail: int

    class EndToEnd(Closed):
        """The judge's scores against the labels' scores."""

        scored: int
        exact: float | None
        pass_fail: float | None
        mae: float | None
        outcomes: OutcomeCounts
        sensitivity: float | None = Field(description="P(judge passes | people pass).")
        specificity: float | None = Field(description="P(judge fails | people fail).")

    class NodeFingerprint(Closed):
        """What one node's figures were measured on, as hashes."""

        parts: dict[str, str] = Field(
            description="criteria, options, params, upstream, prompt, model, endpoint, "
                        "temperature -> hash.")
        labels: str = Field(description="Hash of every (case, label) pair of the node.")
        label_cases: dict[str, str] = Field(description="case -> hash of its label.")

    class Provenance(Closed):
        """What the calibration measured (docs/calibration.md, Staleness)."""

        version: int
        judge: dict[str, Any] = Field(description="model, endpoint (redacted), temperature.")
        nodes: dict[str, NodeFingerprint]
        graph: str = Field(description="Hash of every node, the roots and the threshold.")
        expected_cases: dict[str, str] = Field(
            description="case -> hash of its expected_score and check-node labels.")

    class Outcome(Closed):
        """One case end to end: the labels' score and path against the judge's."""

        case: str
        human_score: float | None
        judge_score: float | None
        human_pass: bool | None
        judge_pass: bool | None
        human_path: str
        judge_path: str
        error: str | None
        blame: str | None = Field(description="The node that moved the score away.")
        why: str
        differs: bool

    class ProbeFlip(Closed):
        """A verdict that changed under a probe."""

        case: str
        variant: str = Field(description="reversed, rotated (order) or padded (padding).")
        label: str
        normal: str = Field(description="The verdict with the normal prompt.")
        probed: str = Field(description="The verdict with the probe's prompt.")
        reason: str

    class ProbeError(Closed):
        """A probe call that failed."""

        case: str
        variant: str
        kind: str | None

    class ProbeResult(Closed):
        """One bias probe on one judgement node (docs/calibration.md, Bias probes)."""

        node: str
        type: str
        probe: Literal["order", "padding"]
        variants: list[str]
        skipped: str | None = Field(description="Why the probe did not apply (a binary node "
                                                 "has no options to reorder).")
        compared: int = Field(description="(case, variant) pairs with both verdicts usable.")
        flipped: int
        flip_rate: float | None
        agreement: float | None = Field(description="Raw agreement with the labels, normal "
                                                    "prompt, on the compared pairs.")
        agreement_probed: float | None
        kappa: float | None = Field(description="Cohen's kappa, normal prompt.")
        kappa_probed: float | None
        flips: list[ProbeFlip]
        errors: list[ProbeError]

    class Probes(Closed):
        """The bias probes' results (written only when --probes ran)."""

        probes: list[Literal["order", "padding"]]
        pad_share: float = Field(description="Padding length, a share of the case material.")
        nodes: dict[str, dict[str, ProbeResult]] = Field(
            description="node -> probe -> result (binary and non-binary nodes).")
        calls: int
        cache_hits: int

    class Calibration(Closed):
        """The report `dagtui calibrate --json FILE` writes (and keeps under
        .dagtui/calibration/)."""

        graph: str
        graph_path: str | None
        judge: Judge
        threshold: float
        samples: int
        temperature: float | None
        cases: int
        cases_file: str | None
        halt: str | None
        nodes: dict[str, NodeCalibration]
        end_to_end: EndToEnd
        outcomes: list[Outcome]
        notes: list[str]
        label_problems: list[str]
        #: the bad labels `--lenient` ignored (`dagtui.labels.check`), one line each
        ignored_labels: list[str]
        calls: int
        cache_hits: int
        cost: float | None
        wall_time: float
        provenance: Provenance | None = Field(
            description="Fingerprints of what was measured; null in files from before them.")
        probes: Probes | SkipJsonSchema[None] = Field(
            None, description="The bias probes (calibrate --probes); absent without them.")
        annotator: str | None = Field(
            description="Whose labels the judge is compared with (--annotator); null: the "
                        "adjudicated 'expected'.")
        human_agreement: dict[str, list[PairAgreement]] = Field(
            description="node -> each pair of annotators' agreement (the ceiling).")

    return Calibration


class _Records:
    """Closed pydantic models made from the record dataclasses themselves: every field but
    those its `UNWRITTEN` names (typed from its annotation, described by its `about(...)`
    meaning) and every property
    the record's `WRITTEN` names (typed from its return annotation, described by its
    docstring) is a required key, since `to_dict` writes them all
    (`dagtui.report.trace.written`); a record inside a record becomes its model."""

    def __init__(self) -> None:
        self.made: dict[type, Any] = {}

    def model(self, cls: type, *, name: str | None = None, leave_out: tuple[str, ...] = (),
              optional: tuple[str, ...] = (), rename: dict[str, str] | None = None,
              replace: dict[str, Any] | None = None,
              add: dict[str, tuple[Any, str | None, bool]] | None = None,
              doc: str | None = None) -> Any:
        """The model of `cls`'s document: `leave_out` keys it does not write there,
        `optional` keys it sometimes leaves out, `rename` keys written under another name,
        `replace` a key's model, `add` keys written beside (type, meaning, optional); `doc`
        the document's description where it is not the record's."""
        import dataclasses
        import typing

        from pydantic import ConfigDict, create_model

        hints = typing.get_type_hints(cls)
        spec: dict[str, Any] = {}
        unwritten = (*leave_out, *getattr(cls, "UNWRITTEN", ()))
        optional = (*optional, *getattr(cls, "OPTIONAL", ()))
        renamed = {**getattr(cls, "RENAMED", {}), **(rename or {})}
        for f in dataclasses.fields(cls):
            if f.name in unwritten:
                continue
            ann = (replace or {}).get(f.name) or self._annotation(hints[f.name])
            spec[f.name] = _key(ann, f.metadata.get("meaning"), f.name in optional,
                                alias=renamed.get(f.name))
        for prop in getattr(cls, "WRITTEN", ()):
            getter = getattr(cls, prop).fget
            ann = self._annotation(typing.get_type_hints(getter)["return"])
            spec[prop] = _key(ann, _doc_line(getter.__doc__), False)
        for key, (ann, meaning, skip) in (add or {}).items():
            spec[key] = _key(ann, meaning, skip)
        made = create_model(name or cls.__name__, __config__=ConfigDict(extra="forbid"),
                            __doc__=doc or _doc_line(cls.__doc__, paragraph=True), **spec)
        self.made.setdefault(cls, made)
        return made

    def _annotation(self, ann: Any) -> Any:
        """`ann` with each record type in it replaced by the record's model."""
        import functools
        import operator
        import types
        import typing

        if ann in self.made:
            return self.made[ann]
        origin, args = typing.get_origin(ann), typing.get_args(ann)
        if origin in (types.UnionType, typing.Union):
            return functools.reduce(operator.or_, [self._annotation(a) for a in args])
        if origin in (list, dict, tuple):
            mapped = tuple(self._annotation(a) for a in args)
            return origin[mapped if len(mapped) > 1 else mapped[0]]
        return ann


def _key(ann: Any, meaning: str | None, optional: bool, *, alias: str | None = None
         ) -> tuple[Any, Any]:
    """A model field: required, or (`optional`) sometimes left out but never null; `alias`
    the key it is written under when that is not its name (`from`, `dagtui_trace`)."""
    from pydantic import Field
    from pydantic.json_schema import SkipJsonSchema

    if optional:
        skipped: Any = SkipJsonSchema  # a generic a type checker cannot apply at run time
        return ann | skipped[None], Field(None, alias=alias, description=meaning)
    return ann, Field(alias=alias, description=meaning)


def _doc_line(doc: str | None, *, paragraph: bool = False) -> str | None:
    """A docstring's first line (or first paragraph), on one line; None for a dataclass's
    generated signature."""
    text = (doc or "").strip()
    if not text or "(" in text.split("\n")[0] and text.split("(")[0].isidentifier():
        return None
    first = text.split("\n\n")[0] if paragraph else text.split("\n")[0]
    return " ".join(first.split())

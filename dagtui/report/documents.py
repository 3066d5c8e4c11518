"""The documents dagtui writes, as pydantic models, for `dagtui schema report|results|trace`.

A CI job, a dashboard or a notebook reads what `dagtui run` leaves behind: the `--json`
report, its `.results.jsonl` beside it (one line per case as it finishes, `dagtui.report.stream`),
and the `--trace-dir` traces (`dagtui.report.trace`); `dagtui calibrate --json` its calibration report
(`dagtui.calibration.core`). Their JSON Schemas let such a reader be checked
against the format rather than against one sample, and say which keys can be null.

The models follow the writers (`RunReport.to_dict`, `RunResult.to_dict`, `StepRecord.to_dict`,
`CallRecord.to_dict`, `Trace.to_dict`, `Calibration.to_dict`): every key a writer always writes is required, and an
object whose writer fixes its keys is closed (`additionalProperties: false`), so a key renamed
on either side shows up as a validation error (tests/test_schema_documents.py validates real
runs). Open objects are those holding what the user or the judge chose: the case's fields,
the judge's description, a request sent to a model.

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

#: a case's status: a verdict (pass, fail), a judge error, unscored (a judge could not tell
#: and the node's `unsure` ended the case), or never judged (the judge halted)
Status = Literal["pass", "fail", "error", "unscored", "not_run"]


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

    class Closed(BaseModel):
        model_config = ConfigDict(extra="forbid")

    class Open(BaseModel):
        model_config = ConfigDict(extra="allow")

    class Call(Closed):
        """One request to a model and what came back (a cache hit cost nothing)."""

        request: dict[str, Any] = Field(
            description="What was sent: model, messages, response format, parameters "
                        "(emptied in the summary report, kept in the results and traces).")
        raw: str | None = Field(description="The text received, as received.")
        prompt_tokens: int
        completion_tokens: int
        cost: float | None = Field(description="USD, when the provider prices the model.")
        latency: float = Field(description="Seconds.")
        cache_hit: bool
        retries: int
        retry_kinds: list[str] = Field(
            description="The error kind of each failed attempt that was retried.")
        error: str | None
        error_kind: str | None
        purpose: str = Field(
            description="Why the call was made: answer, correction, geval_steps, metric.")

    class Step(Closed):
        """One node's execution in one case."""

        node: str
        node_type: str
        index: int
        source: str = Field(description="Who answered: judge, check, override, reused, "
                                        "error.")
        judge: str | None
        prompt: list[dict[str, str]] | None = Field(
            description="The messages sent (null in the summary report: the results file "
                        "and traces keep them).")
        request: dict[str, Any] | None
        raw: str | None
        answer: Any = Field(description="The verdict (true/false or a label), the evidence "
                                        "text of a task node, or the 0..10 score of a leaf.")
        reason: str
        then: str | None = Field(description="The node the verdict led to.")
        leaf_score: float | None = Field(description="The 0..10 score the path ended on here.")
        method: str | None
        sampled: Any
        evidence_from: list[str]
        prompt_tokens: int
        completion_tokens: int
        cost: float | None
        latency: float
        cache_hit: bool
        retries: int
        calls: list[Call]
        notes: list[str]
        error: str | None
        error_kind: str | None
        cached: bool = Field(description="Answered from the cache, no call sent.")
        unsure: bool = Field(description="The judge could not tell from the material.")
        unscored: bool = Field(description="The case ended here unscored (the node's "
                                           "unsure).")
        items: list[dict[str, Any]] | None = Field(
            description="A map node's items: each one's item text, answer, reason and "
                        "cached, or error; those past max_items with judged = false.")

    class PathStep(Closed):
        """One decision on the case's path."""

        node: str
        verdict: Any
        then: str | None
        score: float | None = Field(description="0..10, when this step ended the path.")

    class Result(Closed):
        """One case through the graph (its steps: see the results file and the trace)."""

        case: str
        score: float | None = Field(description="0..1; null when the case ended in an error.")
        success: bool | None
        status: Status
        threshold: float
        reason: str
        path: list[PathStep]
        leaf: str | None
        error: str | None
        error_kind: str | None
        error_node: str | None
        wall_time: float
        expected_score: float | None
        unscored: str | None = Field(description="Why the case is unscored, when it is.")
        unscored_node: str | None
        calls: int
        cache_hits: int
        cached_steps: int
        retries: int
        prompt_tokens: int
        completion_tokens: int
        cost: float | None

    class ResultWithSteps(Result):
        """One case through the graph, with every step."""

        steps: list[Step]

    class ReportResult(Result):
        """One case of the report (its steps when the report was written with them, as
        `dagtui run --json` does)."""

        steps: list[Step] | SkipJsonSchema[None] = None

    class ResultsLine(ResultWithSteps):
        """One line of FILE.results.jsonl: a case's result, written the moment it ended."""

        rule: str | SkipJsonSchema[None] = Field(
            None, description="A suite run: the rule the case was judged by.")

    class Bin(Closed):
        """One bin of the score histogram."""

        from_: float = Field(alias="from")
        to: float
        count: int

    class NodeFigures(Closed):
        """How one node behaved across the run."""

        reached: int
        verdicts: dict[str, int] = Field(description="Cases by the verdict (or score) given.")
        calls: int
        cache_hits: int
        prompt_tokens: int
        completion_tokens: int
        cost: float
        latency_p50: float | None
        latency_p95: float | None
        errors: dict[str, int] = Field(description="Judge errors by kind.")
        unsure: int = Field(description="Visits where the judge could not tell.")
        unsure_rate: float | None = Field(description="unsure / reached.")

    class Shard(Closed):
        """`--shard I/N`: which part of the split this report holds."""

        index: int
        count: int
        positions: list[int] = Field(description="Its cases' positions in the dataset.")

    class Judge(Open):
        """What the judge recorded about itself (its name, model and settings; never
        secrets)."""

        name: str

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

    class RunCalibration(Closed):
        """The saved calibration's state for this run, and the corrected pass rate."""

        state: Literal["fresh", "stale"]
        file: str | None
        line: str
        nodes: list[NodeState]
        end_to_end: list[str] | SkipJsonSchema[None] = None
        removed: list[str] | SkipJsonSchema[None] = None
        corrected_pass_rate: CorrectedPassRate | None

    class Report(Closed):
        """The report `dagtui run --json FILE` writes when the run ends."""

        metric: str
        threshold: float
        judge: Judge
        cases: int
        passed: int
        failed: int
        errors: int
        not_run: int
        unscored: int = Field(description="Cases a judge could not tell about, ended by the "
                                          "node's unsure: neither pass, fail nor error.")
        halt: str | None = Field(description="Why the judge halted, when it did.")
        pass_rate: float | None
        wall_time: float
        calls: int
        cache_hits: int
        cached_steps: int
        tokens: int
        cost: float | None
        judge_errors: dict[str, int]
        retried: dict[str, int]
        corrections: int
        histogram: list[Bin]
        nodes: dict[str, NodeFigures]
        results: list[ReportResult]
        exit_code: Literal[0, 1, 3] = Field(
            description="The run's exit code: 3 when the judge halted, else 1 when a case "
                        "failed (or, with --fail-on-unscored, was unscored), else 3 when a "
                        "case ended in a judge error, else 0.")
        shard: Shard | SkipJsonSchema[None] = None
        calibration: RunCalibration | SkipJsonSchema[None] = Field(
            None, description="The graph's saved calibration as the run saw it (absent when "
                              "none is saved).")

    class Case(Open):
        """The case as a cases file would hold it."""

        name: str

    class Trace(Closed):
        """One case's run, saved to be reloaded, replayed or compared."""

        dagtui_trace: int = Field(description="The trace format's version.")
        graph_hash: str = Field(description="The content hash of the graph it was run on.")
        graph_path: str | None
        case: Case
        judge: Judge
        steps: list[Step]
        result: Result

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
        judge_unsure: int = Field(description="The judge's \"cannot tell\" answers on the "
                                              "cases measured (a map node's: items).")
        unsure_both: int = Field(description="Cases labelled \"unsure\" where the judge's "
                                             "own run could not tell either.")
        item_cases: int = Field(description="Map nodes: cases with every judged item "
                                            "labelled.")
        case_agreement: float | None = Field(
            description="Map nodes: the share of those cases whose aggregate (verdict or "
                        "fraction score) is the one the item labels give.")

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

    return Documents(report=Report, results=ResultsLine, trace=Trace, calibration=Calibration)

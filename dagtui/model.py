"""The graph model: what a dagtui TOML file means, as typed Python objects.

The model is deliberately *permissive*: it can hold a graph that is wrong (a verdict with both
`score` and `then`, a score of 11, a binary node with one verdict) because the editor must be
able to show and fix such a graph. Whether a graph is runnable is the validator's job
(`dagtui.validate`), never the model's. The loader (`dagtui.loader`) fills the model from TOML
and reports every field it could not use as a diagnostic with a position.

The classes are plain dataclasses, kept cheap to import because every editor start pays for
it (`dagtui.fieldtypes` says why there is no validation library). Besides their fields they offer
`Record.replace` (a copy with some fields changed) and, for the classes filled from TOML
tables, `TomlRecord.from_toml` (build from a table, reporting each value of the wrong type),
`TomlRecord.to_toml` (the table back, defaults left out) and `TomlRecord.toml_keys`. Values
are checked against the field annotations by `dagtui.fieldtypes`.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import KeysView, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Self

from .fieldtypes import Checker, FieldProblem, Mismatch, checker_for

SINGLE_TURN_PARAMS: tuple[str, ...] = (
    "input",
    "actual_output",
    "expected_output",
    "context",
    "retrieval_context",
    "tools_called",
    "expected_tools",
    "metadata",
    "tags",
)
MULTI_TURN_PARAMS: tuple[str, ...] = (
    "role",
    "content",
    "scenario",
    "expected_outcome",
    "user_description",
    "chatbot_role",
    "context",
    "retrieval_context",
    "tools_called",
    "metadata",
    "tags",
)

CHECK_KINDS: tuple[str, ...] = (
    "regex",
    "json",
    "json_schema",
    "length",
    "contains",
    "equals",
    "tools",
    "python",
)

VerdictValue = bool | str


#: field metadata of a field that lives in Python only (a node's `id`, a graph's `path`)
NOT_IN_TOML: Mapping[str, Any] = {"toml_key": None}


def toml_name(key: str) -> Mapping[str, Any]:
    """Field metadata giving a field a TOML key other than its Python name (`schema_`)."""
    return {"toml_key": key}


#: field metadata of a node field that must be present and non-empty (`NodeBase.REQUIRED`)
REQUIRED_FIELD: Mapping[str, Any] = {"required": True}


class Record:
    """What every model class shares: copying with changes."""

    def replace(self, **changes: Any) -> Self:
        """A shallow copy with `changes` (Python attribute names) applied, unchecked."""
        # every subclass is a dataclass; this base is not one
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]


@dataclass(frozen=True)
class _Spec:
    """One TOML record class's fields, worked out once from its annotations."""

    #: TOML key -> (attribute name, checker), in declaration order
    by_key: dict[str, tuple[str, Checker]]
    #: (attribute, TOML key, default) for `to_toml`, in declaration order
    dump: tuple[tuple[str, str, Any], ...]
    #: TOML keys of the fields without a default
    required: tuple[str, ...]


_NO_DEFAULT = object()
_SPECS: dict[type, _Spec] = {}


class TomlRecord(Record):
    """A model class filled from a TOML table: checked on the way in, defaults dropped on the
    way out. Unknown keys are the loader's concern (it reports them with a position and a
    suggestion), so `from_toml` ignores them."""

    @classmethod
    def _spec(cls) -> _Spec:
        spec = _SPECS.get(cls)
        if spec is None:
            spec = _SPECS[cls] = _build_spec(cls)
        return spec

    @classmethod
    def toml_keys(cls) -> tuple[str, ...]:
        """The TOML keys of this class's fields, in declaration order."""
        return tuple(cls._spec().by_key)

    @classmethod
    def attr_for(cls, key: str) -> str:
        """The Python attribute holding TOML key `key` (`schema` -> `schema_`)."""
        entry = cls._spec().by_key.get(key)
        return entry[0] if entry else key

    @classmethod
    def from_toml(cls, table: Mapping[str, Any]) -> tuple[Self | None, list[FieldProblem]]:
        """Build from a TOML table, leaving out (and reporting) each value of the wrong type,
        so the rest stays usable in the editor while the bad value is shown.

        The record is None only when a field without a default is missing or wrong.
        """
        spec = cls._spec()
        values: dict[str, Any] = {}
        problems: list[FieldProblem] = []
        for key, value in table.items():
            entry = spec.by_key.get(key)
            if entry is None:
                continue
            attr, check = entry
            try:
                values[attr] = check(value)
            except Mismatch as exc:
                problems.append(FieldProblem(key, value, exc.wanted))
        missing = [k for k in spec.required if spec.by_key[k][0] not in values]
        if missing:
            problems.extend(FieldProblem.missing(k) for k in missing if k not in table)
            return None, problems
        return cls(**values), problems

    def to_toml(self, *, skip_defaults: bool = True) -> dict[str, Any]:
        """The record as a plain TOML-ready table (fresh lists and dicts, records as tables,
        tuples kept), leaving out the fields still at their defaults when `skip_defaults`."""
        out: dict[str, Any] = {}
        for attr, key, default in self._spec().dump:
            value = getattr(self, attr)
            if skip_defaults and default is not _NO_DEFAULT and value == default:
                continue
            out[key] = _plain(value, skip_defaults)
        return out


def _build_spec(cls: type) -> _Spec:
    hints = typing.get_type_hints(cls)
    by_key: dict[str, tuple[str, Checker]] = {}
    dump: list[tuple[str, str, Any]] = []
    required: list[str] = []
    for f in dataclasses.fields(cls):
        key = f.metadata.get("toml_key", f.name)
        if key is None:
            continue
        by_key[key] = (f.name, checker_for(hints[f.name], _record_from_table))
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = _NO_DEFAULT
            required.append(key)
        dump.append((f.name, key, default))
    return _Spec(by_key, tuple(dump), tuple(required))


def _record_from_table(cls: type, value: Any) -> Any:
    """A nested record (a node's verdicts): a table with every value right, or a mismatch."""
    if type(value) is not dict or not issubclass(cls, TomlRecord):
        raise Mismatch("a table")
    record, problems = cls.from_toml(value)
    if record is None or problems:
        raise Mismatch("a table")
    return record


_ATOMS = (str, int, float, bool, type(None))


def _plain(value: Any, skip_defaults: bool) -> Any:
    """A field value as TOML data: containers copied, records as tables."""
    if type(value) in _ATOMS:
        return value
    if isinstance(value, TomlRecord):
        return value.to_toml(skip_defaults=skip_defaults)
    if isinstance(value, list):
        return [_plain(v, skip_defaults) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v, skip_defaults) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v, skip_defaults) for k, v in value.items()}
    return value


class _NodeLayout:
    """`FIELDS` or `REQUIRED` of a node class, derived from its dataclass fields once."""

    def __init__(self, which: str) -> None:
        self.which = which
        self.value: tuple[str, ...] | None = None

    def __get__(self, obj: object, owner: type[NodeBase]) -> tuple[str, ...]:
        if self.value is None:
            self.value = _node_layout(owner, self.which)
        return self.value


def _node_layout(cls: type[NodeBase], which: str) -> tuple[str, ...]:
    by_name = {f.name: f for f in dataclasses.fields(cls)}
    names = ["type", "label"]
    for klass in reversed(cls.__mro__):
        if not issubclass(klass, NodeBase) or klass is NodeBase:
            continue
        for name in klass.__dict__.get("__annotations__", {}):
            if name in by_name and name not in names:
                names.append(name)
    fields = [by_name[n] for n in names if by_name[n].metadata.get("toml_key", n) is not None]
    if which == "required":
        fields = [f for f in fields if f.metadata.get("required")]
    return tuple(f.metadata.get("toml_key", f.name) for f in fields)


@dataclass(kw_only=True)
class Verdict(TomlRecord):
    """One outcome of a judgement or check node.

    Exactly one of `score` (ends the path with score/10) or `then` (continues at a node) is
    meant to be set; the validator reports both/neither (DAG012) and bad scores (DAG013).
    `score` is typed loosely so that a wrong value (11, 2.5) survives to be reported and fixed.
    """

    verdict: VerdictValue
    score: int | float | None = None
    then: str | None = None

    @property
    def is_leaf(self) -> bool:
        return self.score is not None and self.then is None


@dataclass(kw_only=True)
class Example(TomlRecord):
    """One worked example a judgement or task node's prompt shows before the case (the
    `examples` field): the material as the node sees it, the right answer (`verdict` for a
    binary or non_binary node, `evidence` for a task node) and a one-line `reason`.
    `dagtui align` writes them from labelled cases; `dagtui.prompts.examples_block` renders
    them."""

    material: str
    verdict: VerdictValue | None = None
    evidence: str | None = None
    reason: str = ""


@dataclass(kw_only=True)
class Metric(TomlRecord):
    """The `[metric]` table: name, threshold, judge model and run settings."""

    name: str = "Untitled metric"
    threshold: float = 0.5
    model: str | None = None
    include_reason: bool = True
    strict: bool = False
    multi_turn: bool = False
    roots: list[str] | None = None
    cases: str | None = None

    @property
    def effective_threshold(self) -> float:
        """Strict mode makes every path but a perfect score fail."""
        return 1.0 if self.strict else self.threshold


@dataclass(kw_only=True)
class NodeBase(TomlRecord):
    """Fields every node has. `id` is the TOML key under `[nodes]`, not a TOML field."""

    id: str = field(default="", metadata=NOT_IN_TOML)
    type: str
    label: str | None = None
    params: list[str] = field(default_factory=list)
    turn_window: tuple[int, int] | None = None

    #: TOML keys of this node type, in canonical order (used by fmt and the editor form):
    #: `type`, `label`, then the fields the class declares, in declaration order (a class
    #: re-declares `params` and `turn_window` where they belong in its table; a check node
    #: does not, so they are not part of its table)
    FIELDS: ClassVar[tuple[str, ...]]
    #: TOML keys of the fields that must be present and non-empty (metadata `REQUIRED_FIELD`)
    REQUIRED: ClassVar[tuple[str, ...]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # the dataclass decorator runs after this: the lists are worked out on first use
        # descriptors that read as tuples (`_NodeLayout.__get__`)
        cls.FIELDS = _NodeLayout("fields")  # type: ignore[assignment]
        cls.REQUIRED = _NodeLayout("required")  # type: ignore[assignment]

    @property
    def display_name(self) -> str:
        return self.label or self.id

    @property
    def is_judgement(self) -> bool:
        """True for nodes that choose a verdict (binary, non_binary, check)."""
        return False

    @property
    def uses_llm(self) -> bool:
        return True

    @property
    def is_scored_leaf(self) -> bool:
        """True for leaves scored when they run (geval, metric): the path ends there with
        the score the judge or the metric gives, not a fixed one."""
        return False

    def targets(self) -> list[str]:
        """Ids this node points at (data edges and control edges), in declared order."""
        return []


@dataclass(kw_only=True)
class TaskNode(NodeBase):
    """Extracts evidence with the judge; its output is shown to its `children`."""

    type: Literal["task"] = "task"
    instructions: str = field(default="", metadata=REQUIRED_FIELD)
    output_label: str = field(default="", metadata=REQUIRED_FIELD)
    params: list[str] = field(default_factory=list)
    turn_window: tuple[int, int] | None = None
    children: list[str] = field(default_factory=list)
    examples: list[Example] = field(default_factory=list)

    def targets(self) -> list[str]:
        return list(self.children)


class Judgement:
    """What the nodes that choose a verdict share (binary, non_binary, check): the engine
    follows the verdict matching the answer."""

    verdicts: list[Verdict]

    @property
    def is_judgement(self) -> bool:
        return True

    def targets(self) -> list[str]:
        seen: list[str] = []
        for v in self.verdicts:
            if v.then is not None and v.then not in seen:
                seen.append(v.then)
        return seen


@dataclass(kw_only=True)
class BinaryNode(Judgement, NodeBase):
    """A yes/no question: exactly one `true` and one `false` verdict."""

    type: Literal["binary"] = "binary"
    criteria: str = field(default="", metadata=REQUIRED_FIELD)
    params: list[str] = field(default_factory=list)
    turn_window: tuple[int, int] | None = None
    verdicts: list[Verdict] = field(default_factory=list, metadata=REQUIRED_FIELD)
    examples: list[Example] = field(default_factory=list)


@dataclass(kw_only=True)
class NonBinaryNode(Judgement, NodeBase):
    """Picks one of several labels, offered to the judge in declared order."""

    type: Literal["non_binary"] = "non_binary"
    criteria: str = field(default="", metadata=REQUIRED_FIELD)
    params: list[str] = field(default_factory=list)
    turn_window: tuple[int, int] | None = None
    verdicts: list[Verdict] = field(default_factory=list, metadata=REQUIRED_FIELD)
    examples: list[Example] = field(default_factory=list)

    @property
    def labels(self) -> list[str]:
        return [str(v.verdict) for v in self.verdicts]


@dataclass(kw_only=True)
class CheckNode(Judgement, NodeBase):
    """A deterministic check run in code: no judge call.

    `check` names the kind; the kind's own settings live beside it. What the check reads is
    either one test-case field (`param`) or the output of a task parent (`evidence`, the task's
    id). The verdicts are booleans for every kind except `python`, which may return a label.
    """

    type: Literal["check"] = "check"
    check: str = field(default="", metadata=REQUIRED_FIELD)
    param: str | None = None
    evidence: str | None = None
    # regex
    pattern: str | None = None
    flags: str | None = None
    # json_schema
    # `schema` in TOML, `schema_` in Python: the mapping is this field's metadata
    schema_: dict[str, Any] | str | None = field(default=None, metadata=toml_name("schema"))
    # length
    unit: Literal["chars", "words", "sentences"] | None = None
    min: int | None = None
    max: int | None = None
    # contains
    values: list[str] | None = None
    mode: str | None = None  # contains: any|all ; tools: subset|exact|ordered
    case_sensitive: bool | None = None
    # tools
    allowed: list[str] | None = None
    # python
    function: str | None = None
    verdicts: list[Verdict] = field(default_factory=list, metadata=REQUIRED_FIELD)

    KIND_FIELDS: ClassVar[dict[str, tuple[str, ...]]] = {
        "regex": ("pattern", "flags"),
        "json": (),
        "json_schema": ("schema",),
        "length": ("unit", "min", "max"),
        "contains": ("values", "mode", "case_sensitive"),
        "equals": ("case_sensitive",),
        "tools": ("mode", "allowed"),
        "python": ("function",),
    }
    KIND_REQUIRED: ClassVar[dict[str, tuple[str, ...]]] = {
        "regex": ("pattern",),
        "json_schema": ("schema",),
        "contains": ("values",),
        "python": ("function",),
    }

    @property
    def uses_llm(self) -> bool:
        return False


@dataclass(kw_only=True)
class GEvalNode(NodeBase):
    """A G-Eval leaf: the judge scores 0..10 against steps; ends the path with that score."""

    type: Literal["geval"] = "geval"
    name: str = field(default="", metadata=REQUIRED_FIELD)
    params: list[str] = field(default_factory=list, metadata=REQUIRED_FIELD)
    turn_window: tuple[int, int] | None = None
    evaluation_steps: list[str] | None = None
    criteria: str | None = None
    model: str | None = None


    @property
    def is_scored_leaf(self) -> bool:
        return True


@dataclass(kw_only=True)
class MetricNode(NodeBase):
    """A DeepEval metric as a leaf (`AnswerRelevancyMetric`, `FaithfulnessMetric`, ...): its
    0..1 score, times 10, ends the path, like a G-Eval leaf's.

    `metric` is the class name in `deepeval.metrics`, `args` its constructor arguments
    (`{ threshold = 0.7 }`); the judge model is passed as `model` (the node's own, else the
    run's). It needs DeepEval installed to run; `params`, when given, are the case fields
    checked before the run (the metric itself reads what it needs).
    """

    type: Literal["metric"] = "metric"
    metric: str = field(default="", metadata=REQUIRED_FIELD)
    args: dict[str, Any] = field(default_factory=dict)
    params: list[str] = field(default_factory=list)
    turn_window: tuple[int, int] | None = None
    model: str | None = None


    @property
    def is_scored_leaf(self) -> bool:
        return True


Node = TaskNode | BinaryNode | NonBinaryNode | CheckNode | GEvalNode | MetricNode
#: node type -> its dataclass; `dagtui.kinds.register` adds a new type here (and the kind
#: that says how the rest of dagtui treats it)
NODE_CLASSES: dict[str, type[NodeBase]] = {
    "task": TaskNode,
    "binary": BinaryNode,
    "non_binary": NonBinaryNode,
    "check": CheckNode,
    "geval": GEvalNode,
    "metric": MetricNode,
}
#: the node type names, in order (a live view: a registered type shows up)
NODE_TYPES: KeysView[str] = NODE_CLASSES.keys()

JudgementNode = BinaryNode | NonBinaryNode | CheckNode


@dataclass(kw_only=True)
class Graph(Record):
    """A whole graph file: metric settings and nodes in file order.

    `path` is where it was loaded from (None for a graph built in memory); diagnostics and
    relative paths (json_schema files, cases files) are resolved against it.
    """

    metric: Metric = field(default_factory=Metric)
    nodes: dict[str, NodeBase] = field(default_factory=dict)
    path: str | None = None

    def node(self, node_id: str) -> NodeBase:
        return self.nodes[node_id]

    def parents(self) -> dict[str, list[str]]:
        """Map node id -> ids of nodes pointing at it (data or control), in file order,
        each parent once (two verdicts of one judgement into one node are one edge)."""
        result: dict[str, list[str]] = {nid: [] for nid in self.nodes}
        for nid, node in self.nodes.items():
            for target in node.targets():
                if target in result and nid not in result[target]:
                    result[target].append(nid)
        return result

    def roots(self, parents: dict[str, list[str]] | None = None) -> list[str]:
        """Declared roots, or else the nodes nothing points to, in file order.

        `parents` (from `parents()`) saves recomputing the edges when the caller has them.
        """
        if self.metric.roots is not None:
            return [r for r in self.metric.roots if r in self.nodes]
        parents = parents if parents is not None else self.parents()
        return [nid for nid in self.nodes if not parents[nid]]

    def dependents(self, node_id: str) -> list[str]:
        """Nodes that reference `node_id` (they must change before it can be deleted)."""
        return self.parents().get(node_id, [])

    def task_parents(self, node_id: str) -> list[str]:
        """Task nodes whose output (evidence) this node receives."""
        return [
            p for p in self.parents().get(node_id, [])
            if isinstance(self.nodes[p], TaskNode)
        ]

    def to_raw(self) -> dict[str, Any]:
        """Plain dict in the TOML layout (what `tomlio.render` / the tomlkit merge write).

        Fields left at their defaults are omitted so a saved file holds only what the user
        set; field order follows each node type's canonical order.
        """
        metric = self.metric.to_toml()
        metric.setdefault("name", self.metric.name)
        metric.setdefault("threshold", self.metric.threshold)
        out: dict[str, Any] = {"metric": _order(metric, list(Metric.toml_keys()))}
        nodes: dict[str, Any] = {}
        for nid, node in self.nodes.items():
            nodes[nid] = node_to_raw(node)
        out["nodes"] = nodes
        return out


def node_to_raw(node: NodeBase) -> dict[str, Any]:
    """One node as a TOML-ready dict (type first, defaults dropped, canonical order)."""
    data = node.to_toml()
    data["type"] = node.type
    for key in node.REQUIRED:
        if key not in data:
            value = getattr(node, node.attr_for(key))
            if value is not None:
                data[key] = _plain(value, True)
    if "turn_window" in data and data["turn_window"] is not None:
        data["turn_window"] = list(data["turn_window"])
    if "verdicts" in data:
        data["verdicts"] = [
            {k: v for k, v in verdict.items() if v is not None} for verdict in data["verdicts"]
        ]
    return _order(data, list(node.FIELDS))


def _order(data: dict[str, Any], order: list[str]) -> dict[str, Any]:
    ranked = {k: i for i, k in enumerate(order)}
    return dict(sorted(data.items(), key=lambda kv: ranked.get(kv[0], len(ranked))))

"""The graph model: what a dagtui TOML file means, as typed Python objects.

The model is deliberately *permissive*: it can hold a graph that is wrong (a verdict with both
`score` and `then`, a score of 11, a binary node with one verdict) because the editor must be
able to show and fix such a graph. Whether a graph is runnable is the validator's job
(`dagtui.graph.validate`), never the model's. The loader (`dagtui.graph.loader`) fills the model from TOML
and reports every field it could not use as a diagnostic with a position.

The classes are plain dataclasses, kept cheap to import because every editor start pays for
it (`dagtui.graph.fieldtypes` says why there is no validation library). Besides their fields they offer
`Record.replace` (a copy with some fields changed; `Record` gives every model class its
equality and repr: dagtui/record.py) and, for the classes filled from TOML
tables, `TomlRecord.from_toml` (build from a table, reporting each value of the wrong type),
`TomlRecord.to_toml` (the table back, defaults left out) and `TomlRecord.toml_keys`. Values
are checked against the field annotations by `dagtui.graph.fieldtypes`.

Each field is described once, here, in its metadata (`about`): its one-line meaning, the
values and range it may take, and how docs/format.md names its type and default. The
validator's range and choice checks, the editor form's hints and choices, `dagtui schema`
and the field tables of docs/format.md (scripts/gen_format_docs.py) read it through
`field_specs`. Which settings a check kind takes, needs and allows is `CHECK_SETTINGS`.
"""

from __future__ import annotations

import dataclasses
import sys
import typing
from collections.abc import Collection, Iterator, KeysView, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Self, overload

from dagtui.graph.fieldtypes import Checker, FieldProblem, Mismatch, checker_for, describe
from dagtui.graph.mapping import is_fraction
from dagtui.graph.unsure import CANNOT_TELL, Unsure, read_unsure
from dagtui.record import FrozenRecord, Record, Shown, frozen

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

VerdictValue = bool | str


class LiveNames(Sequence[str]):
    """The keys of a registry as a sequence that follows it: a type or check kind registered
    later shows up (`NODE_TYPES`, `CHECK_KINDS`)."""

    def __init__(self, table: Mapping[str, Any]) -> None:
        self._table = table

    def __len__(self) -> int:
        return len(self._table)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return list(self._table)[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __contains__(self, name: object) -> bool:
        return name in self._table

    def __repr__(self) -> str:
        return repr(tuple(self._table))


#: node type -> its dataclass (filled below the classes); `dagtui.kinds.register` adds a new
#: type here (and the kind that says how the rest of dagtui treats it)
NODE_CLASSES: dict[str, type[NodeBase]] = {}
#: the node type names, in order (a live view: a registered type shows up)
NODE_TYPES: KeysView[str] = NODE_CLASSES.keys()


# -- what each field is ------------------------------------------------------------------
_INHERIT = object()


def about(meaning: str | None = None, *, short: str | None = None, required: bool = False,
          choices: Collection[Any] | None = None, bounds: tuple[float, float] | None = None,
          unset: Any = _INHERIT, type_words: str | None = None,
          default_words: str | None = None, codes: tuple[str, ...] = (),
          toml_key: Any = _INHERIT) -> dict[str, Any]:
    """Field metadata saying what a field is, once for every reader (`FieldSpec`).

    `meaning` is one line (docs/format.md, `dagtui schema`, the editor's tooltip), `short` a
    few words for the editor's placeholder when the meaning is too long for it. `required`:
    it must be present and non-empty (`NodeBase.REQUIRED`). `choices` are the values it (or,
    for a list, each item) may take, besides those an annotated `Literal` gives; `bounds` an
    inclusive numeric range; `unset` what an absent value means where that is not the
    dataclass default (a check's `unit` is chars). `type_words` and `default_words` say the
    type and default in docs/format.md where the derived words would say less; `codes` are
    the diagnostics that guard it there. A field that re-declares an inherited one (for its
    place in the table) keeps what the base says and adds what it gives.
    """
    given = {"meaning": meaning, "short": short, "choices": choices, "bounds": bounds,
             "type_words": type_words, "default_words": default_words}
    meta: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
    if required:
        meta["required"] = True
    if unset is not _INHERIT:
        meta["unset"] = unset
    if codes:
        meta["codes"] = tuple(codes)
    if toml_key is not _INHERIT:
        meta["toml_key"] = toml_key
    return meta


#: field metadata of a field that lives in Python only (a node's `id`, a graph's `path`)
NOT_IN_TOML: Mapping[str, Any] = {"toml_key": None}


def toml_name(key: str) -> Mapping[str, Any]:
    """Field metadata giving a field a TOML key other than its Python name (`schema_`)."""
    return {"toml_key": key}


#: field metadata of a node field that must be present and non-empty (`NodeBase.REQUIRED`)
REQUIRED_FIELD: Mapping[str, Any] = {"required": True}

#: the default of a field that has none (it must be given)
NO_DEFAULT: Any = object()


@frozen
class FieldSpec(FrozenRecord):
    """One field of a model class as its declaration says: its TOML key, annotation and
    default (from the dataclass) and what `about` added. Compared by value: docs/format.md's
    tables list a node type's field where it differs from the base's."""

    key: str
    attr: str
    annotation: Any
    #: the dataclass default (`NO_DEFAULT` when it has none)
    default: Any
    meaning: str
    #: the editor's placeholder: `short`, else the meaning
    short: str
    required: bool
    #: the values it (each item, for a list) may take; None: any of its type
    choices: Sequence[Any] | None
    bounds: tuple[float, float] | None
    #: what an absent value means (the default, unless `about(unset=...)` says otherwise)
    unset: Any
    codes: tuple[str, ...]
    type_words: str | None
    default_words: str | None

    def in_bounds(self, value: float) -> bool:
        """True when `value` is inside `bounds` (NaN never is); always without bounds."""
        if self.bounds is None:
            return True
        low, high = self.bounds
        return low <= value <= high

    @property
    def bounds_words(self) -> str:
        """The range as docs and messages write it, e.g. `0..1`."""
        return f"{self.bounds[0]:g}..{self.bounds[1]:g}" if self.bounds else ""

    @property
    def words(self) -> str:
        """What the annotation accepts, e.g. "a list of strings" (`fieldtypes.describe`)."""
        return describe(self.annotation)


_FIELD_SPECS: dict[type, dict[str, FieldSpec]] = {}


def field_specs(cls: type) -> dict[str, FieldSpec]:
    """TOML key -> `FieldSpec` of every TOML field of dataclass `cls`, in declaration order
    (worked out once per class)."""
    specs = _FIELD_SPECS.get(cls)
    if specs is None:
        specs = _FIELD_SPECS[cls] = _read_specs(cls)
    return specs


def field_spec(cls: type, key: str) -> FieldSpec:
    """The `FieldSpec` of TOML key `key` of `cls` (KeyError for a key it does not have)."""
    return field_specs(cls)[key]


def field_types(cls: type) -> dict[str, Any]:
    """Attribute name -> the evaluated annotation of each field of dataclass `cls`.

    What `typing.get_type_hints` gives for the fields, for less: it compiles each annotation
    string on its own (this module's are strings, `from __future__ import annotations`),
    about 50 us apiece and 8-22 per node class, on every editor start before its first
    frame. This evaluates each declaring module's strings as one tuple: a node class in
    ~0.1 ms instead of ~0.6 (tests/test_records.py checks both agree).
    """
    fields = dataclasses.fields(cls)
    types: dict[str, Any] = {f.name: f.type for f in fields}
    by_owner: dict[type, list[str]] = {}
    for f in fields:
        if isinstance(f.type, str):  # evaluated where it was written (maybe a base class)
            owner = next(k for k in cls.__mro__ if f.name in k.__dict__.get("__annotations__", {}))
            by_owner.setdefault(owner, []).append(f.name)
    for owner, names in by_owner.items():
        # the names get_type_hints sees: the module's first, then the class body's
        values = eval(f"({', '.join(types[n] for n in names)},)",  # noqa: S307
                      dict(vars(owner)), vars(sys.modules[owner.__module__]))
        types.update(zip(names, values, strict=True))
    return types


def _read_specs(cls: type) -> dict[str, FieldSpec]:
    hints = field_types(cls)
    out: dict[str, FieldSpec] = {}
    for f in dataclasses.fields(cls):
        meta: dict[str, Any] = {}
        for klass in reversed(cls.__mro__):  # the base's words, then each re-declaration's
            own = klass.__dict__.get("__dataclass_fields__", {}).get(f.name)
            if own is not None and f.name in klass.__dict__.get("__annotations__", {}):
                meta.update(own.metadata)
        key = meta.get("toml_key", f.name)
        if key is None:
            continue
        default = default_of(f)
        choices = meta.get("choices")
        if choices is None:
            choices = _literal_values(hints[f.name])
        meaning = meta.get("meaning", "")
        out[key] = FieldSpec(
            key=key, attr=f.name, annotation=hints[f.name], default=default, meaning=meaning,
            short=meta.get("short", meaning),
            required=bool(meta.get("required")) or default is NO_DEFAULT,
            # a live registry (`LiveNames`) is read each time; other values are fixed
            choices=choices if isinstance(choices, LiveNames) or choices is None
            else tuple(choices),
            bounds=meta.get("bounds"), unset=meta.get("unset", default),
            codes=tuple(meta.get("codes", ())), type_words=meta.get("type_words"),
            default_words=meta.get("default_words"))
    return out


def default_of(f: dataclasses.Field[Any]) -> Any:
    """A dataclass field's default (a fresh one from its factory), or `NO_DEFAULT`."""
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return NO_DEFAULT


def _literal_values(ann: Any) -> tuple[Any, ...] | None:
    """The values of a `Literal[...]` annotation (also inside `X | None`), else None."""
    if typing.get_origin(ann) is Literal:
        return typing.get_args(ann)
    for member in typing.get_args(ann):
        if typing.get_origin(member) is Literal:
            return typing.get_args(member)
    return None


@frozen
class _Spec(Shown):
    """One TOML record class's fields, worked out once from its annotations."""

    #: TOML key -> (attribute name, checker), in declaration order
    by_key: dict[str, tuple[str, Checker]]
    #: (attribute, TOML key, default) for `to_toml`, in declaration order
    dump: tuple[tuple[str, str, Any], ...]
    #: TOML keys of the fields without a default
    required: tuple[str, ...]


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
            if skip_defaults and default is not NO_DEFAULT and value == default:
                continue
            out[key] = _plain(value, skip_defaults)
        return out


def _build_spec(cls: type) -> _Spec:
    hints = field_types(cls)
    by_key: dict[str, tuple[str, Checker]] = {}
    dump: list[tuple[str, str, Any]] = []
    required: list[str] = []
    for f in dataclasses.fields(cls):
        key = f.metadata.get("toml_key", f.name)
        if key is None:
            continue
        by_key[key] = (f.name, checker_for(hints[f.name], _record_from_table))
        default = default_of(f)
        if default is NO_DEFAULT:
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


@dataclass(kw_only=True, eq=False, repr=False)  # eq and repr: Record's
class Verdict(TomlRecord):
    """One outcome of a judgement or check node.

    Exactly one of `score` (ends the path with score/10) or `then` (continues at a node) is
    meant to be set; the validator reports both/neither (DAG012) and bad scores (DAG013).
    `score` is typed loosely so that a wrong value (11, 2.5) survives to be reported and fixed.
    """

    verdict: VerdictValue = field(metadata=about(
        "the answer this entry matches", codes=("DAG003", "DAG011", "DAG017"),
        type_words="bool (binary, boolean checks) or string (non-binary labels, python "
                   "checks)"))
    score: int | float | None = field(default=None, metadata=about(
        "ends the path: the run's score is `score / 10`", bounds=(0, 10),
        codes=("DAG012", "DAG013"),
        type_words="number 0..10, integer or fractional (`7`, `7.5`, `6.66`, kept as "
                   "written)"))
    then: str | None = field(default=None, metadata=about(
        "a control edge: the run continues at that node", type_words="node id",
        codes=("DAG008", "DAG012")))

    @property
    def is_leaf(self) -> bool:
        return self.score is not None and self.then is None


@dataclass(kw_only=True, eq=False, repr=False)  # eq and repr: Record's
class Example(TomlRecord):
    """One worked example a judgement or task node's prompt shows before the case (the
    `examples` field): the material as the node sees it, the right answer (`verdict` for a
    binary or non_binary node, `evidence` for a task node) and a one-line `reason`.
    `dagtui align` writes them from labelled cases; `dagtui.judges.prompts.examples_block` renders
    them."""

    material: str
    verdict: VerdictValue | None = None
    evidence: str | None = None
    reason: str = ""


#: the `examples` field of task and judgement nodes (`Example`)
EXAMPLES_FIELD = about(
    "worked examples shown before the case (see [Worked examples](#worked-examples-examples))",
    short="worked examples (edit them in the file)",
    type_words="list of example tables", codes=("DAG004",))


@dataclass(kw_only=True, eq=False, repr=False)  # eq and repr: Record's
class Metric(TomlRecord):
    """The `[metric]` table: name, threshold, judge model and run settings."""

    name: str = field(default="Untitled metric", metadata=about(
        "the metric's name (reports, exports)", codes=("DAG004",)))
    threshold: float = field(default=0.5, metadata=about(
        "a run passes when its score (the leaf's 0..10 / 10) is at least this",
        short="pass when score >= threshold (0..1)", bounds=(0, 1),
        codes=("DAG021", "DAG104", "DAG004")))
    model: str | None = field(default=None, metadata=about(
        "the judge: any litellm model; `--model` and `DAGTUI_MODEL` override it",
        short="judge model (any litellm model)",
        codes=("DAG108 (not pinned while an LLM node exists)",)))
    include_reason: bool = field(default=True, metadata=about(
        "ask the judge for a short reason before each verdict; `false` drops it from every "
        "prompt and schema, and the result carries no reason", codes=("DAG004",)))
    strict: bool = field(default=False, metadata=about(
        "only a perfect score passes (the threshold becomes 1.0)", codes=("DAG004",)))
    multi_turn: bool = field(default=False, metadata=about(
        "nodes read multi-turn params (`turns` cases) instead of single-turn ones",
        codes=("DAG006", "DAG111")))
    roots: list[str] | None = field(default=None, metadata=about(
        "where a run starts", short="comma separated; empty: nodes nothing points to",
        type_words="list of node ids", default_words="the nodes nothing points at",
        codes=("DAG008", "DAG018", "DAG019")))
    cases: str | None = field(default=None, metadata=about(
        "the default cases file of `run`, `test`, `step`, `calibrate`",
        short="default cases file, relative to the graph",
        type_words="string (path relative to the graph's folder)", codes=("DAG113",)))

    @property
    def effective_threshold(self) -> float:
        """Strict mode makes every path but a perfect score fail."""
        return 1.0 if self.strict else self.threshold


@dataclass(kw_only=True, eq=False, repr=False)  # eq and repr: Record's
class NodeBase(TomlRecord):
    """Fields every node has. `id` is the TOML key under `[nodes]`, not a TOML field."""

    id: str = field(default="", metadata=NOT_IN_TOML)
    type: str = field(metadata=about(
        "what the node is and does; each type has keys of its own",
        choices=LiveNames(NODE_CLASSES), codes=("DAG003", "DAG005")))
    label: str | None = field(default=None, metadata=about(
        "the name shown in the editor, debugger and reports", short="shown instead of the id",
        default_words="the id", codes=("DAG004",)))
    params: list[str] = field(default_factory=list, metadata=about(
        "the case fields shown to the judge", short="test-case fields put in the prompt",
        choices=tuple(dict.fromkeys(SINGLE_TURN_PARAMS + MULTI_TURN_PARAMS)),
        type_words="list of strings", codes=("DAG006", "DAG101")))
    turn_window: tuple[int, int] | None = field(default=None, metadata=about(
        "multi-turn only: the turns the node sees, `0 <= start <= end`",
        short="start, end (multi-turn only)", type_words="`[start, end]`",
        default_words="none (every turn)", codes=("DAG111", "DAG004")))

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


@dataclass(kw_only=True, eq=False, repr=False)  # eq and repr: Record's
class TaskNode(NodeBase):
    """Extracts evidence with the judge; its output is shown to its `children`."""

    type: Literal["task"] = "task"
    instructions: str = field(default="", metadata=about(
        "what the judge extracts", short="what the judge extracts (task)", required=True,
        codes=("DAG003",)))
    output_label: str = field(default="", metadata=about(
        "the name its output is shown under in each child's prompt",
        short="heading children see the evidence under", required=True, codes=("DAG003",)))
    params: list[str] = field(default_factory=list)
    turn_window: tuple[int, int] | None = None
    children: list[str] = field(default_factory=list, metadata=about(
        "data edges: these nodes receive the extracted text",
        short="nodes that receive this output, comma separated", type_words="list of node ids",
        codes=("DAG008", "DAG019", "DAG103")))
    examples: list[Example] = field(default_factory=list, metadata=EXAMPLES_FIELD)

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
        for v in self.branches():
            if v.then is not None and v.then not in seen:
                seen.append(v.then)
        return seen

    @property
    def unsure_rule(self) -> Unsure | None:
        """What the node's `unsure` declares (None: the judge must pick a verdict; a check,
        decided in code, has none)."""
        return read_unsure(getattr(self, "unsure", None))

    def branches(self) -> list[Verdict]:
        """The verdicts, and the one an unsure answer takes when `unsure` routes it (`{ score
        = N }` or `{ then = "node" }`): everything a run of this node may follow."""
        rule = self.unsure_rule
        if rule is None or rule.ends_unscored:
            return list(self.verdicts)
        return [*self.verdicts, Verdict(verdict=CANNOT_TELL, score=rule.score, then=rule.then)]

    def verdict_for(self, value: Any) -> Verdict | None:
        """The verdict an answer (or a label) `value` picks, None when it picks none: equal
        and of the same type, so `1` never picks `true` nor `"true"` a boolean verdict (the
        engine follows it; the label check asks it of each label). An unsure answer picks
        the branch `unsure` routes it to."""
        for v in self.branches():
            if v.verdict == value and type(v.verdict) is type(value):
                return v
        return None


def branches_of(node: Any) -> list[Verdict]:
    """What a run of `node` may follow: a judgement's `branches` (its verdicts, and where
    `unsure` routes), nothing for a node without verdicts (a task, a scored leaf)."""
    return node.branches() if isinstance(node, Judgement) else []


#: what a judge's node says of its criteria and verdicts (binary and non_binary alike)
CRITERIA = about("the question put to the judge", short="the question the judge answers",
                 required=True, codes=("DAG003", "DAG109"))
JUDGEMENT_VERDICTS = about(
    "the answers; `binary`: exactly one `true` and one `false` (DAG010); `non_binary`: "
    "distinct string labels offered in declared order", required=True,
    type_words="list of verdict tables",
    codes=("DAG010", "DAG011", "DAG014", "DAG017", "DAG105", "DAG106"))


#: a judgement's own judge model (a stronger one for what `unsure` routes to it)
NODE_MODEL = about(
    "this node's own judge model, e.g. a stronger one for the question another node's "
    "`unsure` routes here", short="judge model for this node only",
    default_words="the run's judge", codes=("DAG004", "DAG118"))

#: a judgement's `unsure` (`dagtui.graph.unsure`)
UNSURE_FIELD = about(
    "what a \"cannot tell from the material\" answer does; declared, the judge is offered "
    "that answer (see [Unsure](#unsure-cannot-tell))",
    short='unscored, human, { score = N } or { then = "node" }',
    type_words='`"unscored"`, `"human"`, `{ score = N }` or `{ then = "node" }`',
    default_words="none (the judge must pick a verdict)", codes=("DAG026", "DAG008"))


@dataclass(kw_only=True, eq=False, repr=False)  # eq and repr: Record's
class BinaryNode(Judgement, NodeBase):
    """A yes/no question: exactly one `true` and one `false` verdict."""

    type: Literal["binary"] = "binary"
    criteria: str = field(default="", metadata=CRITERIA)
    params: list[str] = field(default_factory=list)
    turn_window: tuple[int, int] | None = None
    verdicts: list[Verdict] = field(default_factory=list, metadata=JUDGEMENT_VERDICTS)
    unsure: str | dict[str, Any] | None = field(default=None, metadata=UNSURE_FIELD)
    model: str | None = field(default=None, metadata=NODE_MODEL)
    examples: list[Example] = field(default_factory=list, metadata=EXAMPLES_FIELD)


@dataclass(kw_only=True, eq=False, repr=False)  # eq and repr: Record's
class NonBinaryNode(Judgement, NodeBase):
    """Picks one of several labels, offered to the judge in declared order."""

    type: Literal["non_binary"] = "non_binary"
    criteria: str = field(default="", metadata=CRITERIA)
    params: list[str] = field(default_factory=list)
    turn_window: tuple[int, int] | None = None
    verdicts: list[Verdict] = field(default_factory=list, metadata=JUDGEMENT_VERDICTS)
    unsure: str | dict[str, Any] | None = field(default=None, metadata=UNSURE_FIELD)
    model: str | None = field(default=None, metadata=NODE_MODEL)
    examples: list[Example] = field(default_factory=list, metadata=EXAMPLES_FIELD)


    @property
    def labels(self) -> list[str]:
        return [str(v.verdict) for v in self.verdicts]


@frozen
class CheckSettings(FrozenRecord):
    """What one check kind reads from its node, beside `check`, `param` and `evidence`: the
    `CheckNode` settings it takes, those it needs, and the values a setting may take for
    it (`mode` means one thing to a contains check and another to a tools check). What it
    does is its `dagtui.graph.checks.CheckKind`."""

    #: one line: what the check holds true for
    meaning: str
    #: the `CheckNode` settings (TOML keys) it takes
    fields: tuple[str, ...] = ()
    #: those it cannot run without
    required: tuple[str, ...] = ()
    #: setting -> the values it may take for this kind; the first is what an unset one means
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


#: check kind -> its settings, in the order the kinds are offered; `dagtui.graph.checks.register`
#: adds a kind here (and the behaviour)
CHECK_SETTINGS: dict[str, CheckSettings] = {
    "regex": CheckSettings("the pattern matches somewhere in the text", ("pattern", "flags"),
                           ("pattern",)),
    "json": CheckSettings("the text parses as JSON"),
    "json_schema": CheckSettings("the text parses as JSON and validates against the schema",
                                 ("schema",), ("schema",)),
    "length": CheckSettings("the text is between min and max units long",
                            ("unit", "min", "max")),
    "contains": CheckSettings("the text contains any (or all) of the values",
                              ("values", "mode", "case_sensitive"), ("values",),
                              {"mode": ("any", "all")}),
    "equals": CheckSettings("the text equals the case's `expected_output` (surrounding "
                            "whitespace ignored)", ("case_sensitive",)),
    "tools": CheckSettings("the tools called (`tools_called`) are allowed, or match "
                           "`expected_tools`", ("mode", "allowed"),
                           choices={"mode": ("subset", "exact", "ordered")}),
    "python": CheckSettings("a function of yours returns the verdict: true/false or a label",
                            ("function",), ("function",)),
}
#: the check kind names, in order (a live view: a registered kind shows up)
CHECK_KINDS: Sequence[str] = LiveNames(CHECK_SETTINGS)


class _BySettings:
    """`CheckNode.KIND_FIELDS` and `KIND_REQUIRED`: check kind -> the settings it takes (or
    needs), read from `CHECK_SETTINGS` each time, for the callers that read those tables."""

    def __init__(self, which: str) -> None:
        self.which = which

    def __get__(self, obj: object, owner: type) -> dict[str, tuple[str, ...]]:
        return {k: getattr(s, self.which) for k, s in CHECK_SETTINGS.items()}


def check_settings(kind: str | None) -> CheckSettings:
    """The settings of check kind `kind`; none at all for an unknown (or no) kind."""
    return CHECK_SETTINGS.get(kind or "", _NO_SETTINGS)


_NO_SETTINGS = CheckSettings("")


@dataclass(kw_only=True, eq=False, repr=False)  # eq and repr: Record's
class CheckNode(Judgement, NodeBase):
    """A deterministic check run in code: no judge call.

    `check` names the kind; the kind's own settings live beside it. What the check reads is
    either one test-case field (`param`) or the output of a task parent (`evidence`, the task's
    id). The verdicts are booleans for every kind except `python`, which may return a label.
    """

    type: Literal["check"] = "check"
    check: str = field(default="", metadata=about(
        "the kind of check; each kind takes settings of its own",
        short="kind of code check", required=True, choices=CHECK_KINDS,
        codes=("DAG003", "DAG007")))
    param: str | None = field(default=None, metadata=about(
        "the case field the check reads", short="test-case field the check reads",
        codes=("DAG006", "DAG020")))
    evidence: str | None = field(default=None, metadata=about(
        "or: the output of this task parent (exactly one of `param` / `evidence`)",
        short="or: id of a task whose output the check reads", type_words="node id",
        codes=("DAG008", "DAG020")))
    # the kinds' settings: which kind takes which is `CHECK_SETTINGS`
    pattern: str | None = field(default=None, metadata=about(
        "`re.search(pattern, text)`, in bounded time", short="regular expression",
        codes=("DAG003", "DAG020", "DAG117")))
    flags: str | None = field(default=None, metadata=about(
        "letters `i` (ignore case), `m` (multiline), `s` (dot matches newline), `x` "
        "(verbose)", short="regex flags, e.g. i m s", unset="", codes=("DAG020",)))
    # `schema` in TOML, `schema_` in Python: the mapping is this field's metadata
    schema_: dict[str, Any] | str | None = field(default=None, metadata=about(
        "the JSON Schema the text must validate against; its `$ref`s stay inside it", short="inline JSON schema, or a path relative to the graph",
        type_words="table, or string path relative to the graph's folder",
        codes=("DAG003", "DAG020", "DAG025", "DAG117"), toml_key="schema"))
    unit: Literal["chars", "words", "sentences"] | None = field(default=None, metadata=about(
        "what is counted", short="chars, words or sentences", unset="chars",
        codes=("DAG004",)))
    min: int | None = field(default=None, metadata=about(
        "at least this many (one of `min`/`max` required)", codes=("DAG020",)))
    max: int | None = field(default=None, metadata=about(
        "at most this many", codes=("DAG020",)))
    values: list[str] | None = field(default=None, metadata=about(
        "the strings looked for", short="comma separated", codes=("DAG003",)))
    mode: str | None = field(default=None, metadata=about(
        "how the values are looked for, or the tools called compared with `expected_tools`",
        codes=("DAG020",)))
    case_sensitive: bool | None = field(default=None, metadata=about(
        "whether case counts (`false`: compared in lower case)", unset=True,
        codes=("DAG004",)))
    allowed: list[str] | None = field(default=None, metadata=about(
        "every call must be one of these (else `expected_tools` and `mode` decide)",
        short="allowed tool names, comma separated", codes=("DAG004",)))
    function: str | None = field(default=None, metadata=about(
        "called with the value (or the value and the case's fields); the module is a file "
        "beside the graph or in `--python-path`",
        short="module:function returning bool or a label",
        type_words='string `"module:function"`',
        codes=("DAG003", "DAG020", "DAG114", "DAG115")))
    verdicts: list[Verdict] = field(default_factory=list, metadata=about(
        "`true`/`false` for every kind; a `python` check may return labels", required=True,
        type_words="list of verdict tables", codes=("DAG010", "DAG014", "DAG017")))

    KIND_FIELDS = _BySettings("fields")
    KIND_REQUIRED = _BySettings("required")

    @property
    def uses_llm(self) -> bool:
        return False


#: a scored leaf's own judge model (geval, metric)
LEAF_MODEL = about("this leaf's own judge model", short="judge model for this node only",
                   default_words="the run's judge", codes=("DAG004",))


@dataclass(kw_only=True, eq=False, repr=False)  # eq and repr: Record's
class GEvalNode(NodeBase):
    """A G-Eval leaf: the judge scores 0..10 against steps; ends the path with that score."""

    type: Literal["geval"] = "geval"
    name: str = field(default="", metadata=about(
        "the G-Eval metric's name", short="name of the G-Eval metric", required=True,
        codes=("DAG003",)))
    params: list[str] = field(default_factory=list, metadata=about(
        "the case fields it judges", required=True, codes=("DAG003", "DAG006")))
    turn_window: tuple[int, int] | None = None
    evaluation_steps: list[str] | None = field(default=None, metadata=about(
        "the fixed steps the judge scores against (preferred)", short="one step per line",
        codes=("DAG003", "DAG107")))
    criteria: str | None = field(default=None, metadata=about(
        "criteria to derive steps from when `evaluation_steps` is absent",
        short="criteria to derive the steps from", codes=("DAG003", "DAG107")))
    model: str | None = field(default=None, metadata=LEAF_MODEL)

    @property
    def is_scored_leaf(self) -> bool:
        return True


@dataclass(kw_only=True, eq=False, repr=False)  # eq and repr: Record's
class MetricNode(NodeBase):
    """A DeepEval metric as a leaf (`AnswerRelevancyMetric`, `FaithfulnessMetric`, ...): its
    0..1 score, times 10, ends the path, like a G-Eval leaf's.

    `metric` is the class name in `deepeval.metrics`, `args` its constructor arguments
    (`{ threshold = 0.7 }`); the judge model is passed as `model` (the node's own, else the
    run's). It needs DeepEval installed to run; `params`, when given, are the case fields
    checked before the run (the metric itself reads what it needs).
    """

    type: Literal["metric"] = "metric"
    metric: str = field(default="", metadata=about(
        'e.g. `"AnswerRelevancyMetric"`', short="DeepEval metric class, e.g. "
        "AnswerRelevancyMetric", required=True,
        type_words="string (a class name in `deepeval.metrics`)",
        codes=("DAG003", "DAG004", "DAG116")))
    args: dict[str, Any] = field(default_factory=dict, metadata=about(
        "the class's keyword arguments; not `model` or `self` (the judge model is passed for "
        "you)", short="its arguments as TOML: threshold = 0.7, include_reason = false",
        codes=("DAG004",)))
    params: list[str] = field(default_factory=list)
    turn_window: tuple[int, int] | None = None
    model: str | None = field(default=None, metadata=LEAF_MODEL)

    @property
    def is_scored_leaf(self) -> bool:
        return True


@dataclass(kw_only=True, eq=False, repr=False)  # eq and repr: Record's
class MapNode(Judgement, NodeBase):
    """Judges every item of a task parent's list with its own call (`dagtui.graph.mapping`):
    the same `criteria` asked of each item alone, the answers aggregated into a true/false
    verdict (`all`, `any`, `{ at_least = share }`) or, with `aggregate = "fraction"`, a
    leaf scoring the share of passing items times 10."""

    type: Literal["map"] = "map"
    criteria: str = field(default="", metadata=about(
        "the question put to the judge about each item, one item per call",
        short="the question asked of each item", required=True, codes=("DAG003",)))
    params: list[str] = field(default_factory=list)
    turn_window: tuple[int, int] | None = None
    aggregate: str | dict[str, Any] = field(default="all", metadata=about(
        "how the items' answers make the node's: `all` pass, `any` passes, a share "
        "`{ at_least = 0.8 }` (each a true/false verdict), or `fraction`: a leaf scoring "
        "the share of passing items x 10",
        short='all, any, fraction or { at_least = 0.8 }',
        type_words='`"all"`, `"any"`, `"fraction"` or `{ at_least = share }`',
        codes=("DAG026",)))
    empty: bool = field(default=False, metadata=about(
        "what an empty list counts as: `true` passes (a fraction leaf scores 10), `false` "
        "fails (0)", codes=("DAG004",)))
    max_items: int | None = field(default=None, metadata=about(
        "judge at most this many items (the first ones); the rest are reported as not "
        "judged", short="cap on items judged", default_words="none (every item)",
        type_words="integer, at least 1", bounds=(1, 1_000_000), codes=("DAG004",)))
    verdicts: list[Verdict] = field(default_factory=list, metadata=about(
        "one `true` and one `false` verdict for `all`, `any` and `at_least`; none for "
        "`fraction` (the node is the leaf)", type_words="list of verdict tables",
        codes=("DAG010", "DAG014", "DAG026")))
    unsure: str | dict[str, Any] | None = field(default=None, metadata=about(
        "what an item the judge cannot tell about does to the node (see "
        "[Unsure](#unsure-cannot-tell))", short=UNSURE_FIELD["short"],
        type_words=UNSURE_FIELD["type_words"], default_words=UNSURE_FIELD["default_words"],
        codes=("DAG026", "DAG008")))
    model: str | None = field(default=None, metadata=NODE_MODEL)

    @property
    def is_judgement(self) -> bool:
        return not self.is_scored_leaf

    @property
    def is_scored_leaf(self) -> bool:
        return is_fraction(self.aggregate)


Node = TaskNode | BinaryNode | NonBinaryNode | CheckNode | GEvalNode | MetricNode | MapNode
NODE_CLASSES.update({
    "task": TaskNode,
    "binary": BinaryNode,
    "non_binary": NonBinaryNode,
    "check": CheckNode,
    "geval": GEvalNode,
    "metric": MetricNode,
    "map": MapNode,
})

JudgementNode = BinaryNode | NonBinaryNode | CheckNode | MapNode


@dataclass(kw_only=True, eq=False, repr=False)  # eq and repr: Record's
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

"""`NodeKind`: everything that differs between node types, in one object per type.

A node type is a dataclass (`dagtui.graph.model`: its TOML fields) plus a `NodeKind` saying how
the rest of dagtui treats it: what a judge is asked and may answer (or the code that decides
it instead), how many judge calls a visit costs, its icon and its box in drawings, the field
"edit & re-run" changes, the fields the editor form shows and a new node's content, its
DeepEval class (or why DeepEval refuses it) and its validation. Code that used to switch on
the node's class looks the kind up instead (`kind_of(node)`), or asks a flag of the type
named in a trace step (`scores`, `extracts`).

A new node type a judge answers is one dataclass (`NodeBase` subclass; `Judgement` when it
chooses a verdict) and one `register(NodeKind(...))`: `tests/test_kinds.py` adds a toy type
that way, and the loader, fmt, the validator, the engine, the judges (labels, replay, a
person), the traces and batch summaries, the cost estimate, the editor form, the debugger,
the tree's icon and the DOT/Mermaid drawings handle it; the DeepEval exports refuse it. A new
answer shape adds one `Answer` (`answers`). Calibration, align, the probes and the label
check ask the kind (`chooses`, `extracts`, `in_code`, `options`, `editable`). Still written
per built-in type: the DeepEval exports (a table per export keyed by type name, as DeepEval
has one class per built-in type) and import, the structure of data edges (a task's
`children`, a check's `evidence`), and the prose of docs/format.md (its field tables are written from the dataclass's field
metadata by scripts/gen_format_docs.py). Check kinds have the same shape of registry:
`dagtui.graph.checks.CheckKind`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import field
from typing import Any

from dagtui.graph.model import NODE_CLASSES, NodeBase, Verdict
from dagtui.kinds.answers import Answer
from dagtui.record import FrozenRecord, Shown, frozen


@frozen
class Request(FrozenRecord):
    """The node-specific part of a judge request (`dagtui.judges.prompts.build_prompt` adds the
    evidence, the case params and the answer line around it)."""

    parts: list[str]
    #: the labels the judge chooses from (non_binary), in declared order
    labels: list[str] = field(default_factory=list)
    #: params shown instead of the node's own (a metric leaf without params shows every
    #: field the case gives)
    params: list[str] | None = None


def one_call(node: Any) -> int:
    """A judge call per visit: the reason comes with the answer."""
    return 1


def nothing_editable(node: Any) -> str | None:
    return None


def no_variant(node: Any) -> str | None:
    return None


#: fields the form does not show as a text field: the verdicts (edited apart, one row each)
#: and the worked examples (kept as they are by every edit; written by `dagtui align` or by
#: hand in the file)
NOT_IN_FORM = ("verdicts", "examples")


def own_form_fields(node: NodeBase) -> list[str]:
    """The node's TOML fields but those in `NOT_IN_FORM`."""
    return [f for f in node.FIELDS if f not in NOT_IN_FORM]


#: (node, case fields, steps) -> the Request; `steps` are a G-Eval leaf's evaluation steps
RequestFn = Callable[[Any, dict[str, Any], "list[str] | None"], Request]
#: (node, graph, case fields, evidence, python consent) -> an object with `value` and
#: `reason`: a node decided in code (`dagtui.graph.checks.CheckResult`); raises CheckError
CodeRun = Callable[[Any, Any, dict[str, Any], dict[str, Any], Any], Awaitable[Any]]

#: the boxes drawings know (`dagtui.export.dot`, `dagtui.export.mermaid`): a plain box, a
#: diamond (a yes/no question), a hexagon (a choice among labels), a parallelogram (a check
#: in code), a scored leaf's double box and a stack of boxes (a map node: one call per item)
SHAPES = ("box", "diamond", "hexagon", "parallelogram", "leaf", "stack")
#: the DeepEval exports' refusal of a type DeepEval has no node for (`{type}` filled in)
NO_DEEPEVAL = "DeepEval's DAG has no node for the type {type}"


def label_or_id(node: NodeBase) -> str:
    return node.label or node.id


def drawn_text(node: NodeBase) -> tuple[str, str]:
    """A box's title and detail: the label (or id) and the text the debugger edits."""
    text = getattr(node, kind_of(node).editable(node) or "", None)
    return label_or_id(node), text if isinstance(text, str) else ""


@frozen
class NodeKind(Shown):
    """One node type's behaviour, registered once per type (so equal only to itself).

    Only `cls` and `icon` are required; a type a judge answers also gives `answer` and
    `request`, a type decided in code `run`. The other defaults: one judge call per visit,
    nothing for the debugger to edit, every field but the verdicts in the form, a plain box
    in drawings, refused by the DeepEval exports, no checks beyond those every node gets,
    and a new node with the dataclass's defaults."""

    #: the dataclass; its `type` default is the type's name in TOML
    cls: type[NodeBase]
    #: one character shown before the node in the tree and in drawings
    icon: str
    #: what a judge answers (None: no judge is asked, e.g. a code check)
    answer: Answer | None = None
    #: the node-specific request text (None when no judge is asked)
    request: RequestFn | None = None
    #: judge calls one visit costs (estimates, `dagtui run --dry-run`)
    calls: Callable[[Any], int] = one_call
    #: the text field the debugger's "edit & re-run" changes (None: not editable there)
    editable: Callable[[Any], str | None] = nothing_editable
    #: the fields the editor form shows, in order
    form_fields: Callable[[Any], list[str]] = own_form_fields
    #: DeepEval's class for this node in exports and imports (None: exported otherwise, or
    #: refused)
    deepeval: str | None = None
    #: the type's own validation, after the checks every node gets: called with the
    #: validator's `dagtui.graph.validate.nodes.NodeChecks` (its `add`, `require`, `raw_has` and
    #: `check_*` helpers), the node id and the node
    validate: Callable[[Any, str, Any], None] | None = None
    #: the node's box in drawings: one of `SHAPES`
    shape: str = "box"
    #: the box's title and detail (shortened by the drawing); default `drawn_text`
    drawn: Callable[[Any], tuple[str, str]] = drawn_text
    #: why both DeepEval exports refuse a node of this type (`{type}` is filled in); None
    #: for a type they write (its `deepeval` class, or a metric leaf's own metric class)
    deepeval_refusal: str | None = NO_DEEPEVAL
    #: decides the node in code instead of asking a judge (a check); see `CodeRun`
    run: CodeRun | None = None
    #: the case fields a node decided in code reads (a judge reads the node's `params`)
    inputs: Callable[[Any], list[str]] | None = None
    #: the node measures itself with its own code and calls, given the judge's model,
    #: instead of dagtui's request (a DeepEval metric: the model judge hands it to
    #: `dagtui.judges.deepeval_metric.run_metric`); no other judge call is made or cached
    measured: bool = False
    #: the request lists evaluation steps, generated by one extra call when the node has
    #: none (a G-Eval leaf; `dagtui.judges.prompts.geval_steps_prompt`)
    steps: bool = False
    #: a judge chooses one of the node's verdicts, case by case (binary, non_binary): its
    #: label is a verdict, calibration measures agreement and kappa against it, the probes
    #: re-ask it, align rewrites its wording (`editable`) with worked examples
    chooses: bool = False
    #: the options the request lists for the judge to pick from, in declared order (a
    #: non_binary's labels: the order probe reorders them); None: the request lists none
    options: Callable[[Any], list[str]] | None = None
    #: whether the node's verdicts are true and false (default: when a judge answers true
    #: or false); the editor offers those, the validator asks for exactly one of each
    boolean: Callable[[Any], bool] | None = None
    #: a new node of this type, with the content the editor starts from, given its id
    #: (default: the dataclass's defaults)
    blank: Callable[[str], NodeBase] | None = None
    #: what the node is within its type, written after it (`check/regex`); None: nothing
    variant: Callable[[Any], str | None] = no_variant
    #: asks its request of each item of a task parent's list, one call per item (a map
    #: node, `dagtui.run.map_run`); `calls` then counts the calls besides those
    per_item: bool = False
    #: the node's max_items: the most items (so calls) one visit judges; None: no cap
    item_cap: Callable[[Any], int | None] = lambda node: None
    #: the words path descriptions name a run-time scored leaf of this kind by
    leaf_word: str = "G-Eval"

    @property
    def type(self) -> str:
        """The `type = "..."` value in TOML."""
        return str(self.cls.__dataclass_fields__["type"].default)

    @property
    def scored(self) -> bool:
        """A judge answers with a 0..10 score (a scored leaf: geval, metric)."""
        return self.answer is not None and self.answer.scored

    @property
    def extracts(self) -> bool:
        """The answer is evidence for the node's children (a task), not a verdict."""
        return self.answer is not None and self.answer.evidence

    @property
    def decides(self) -> bool:
        """The answer is a verdict (binary, non_binary, check): neither evidence nor score."""
        return not (self.scored or self.extracts)

    @property
    def in_code(self) -> bool:
        """Decided in code, not by a judge (a check): its label is followed, never measured."""
        return self.run is not None

    def options_of(self, node: Any) -> list[str]:
        """The options `node`'s request lists (see `options`); empty when it lists none."""
        return self.options(node) if self.options is not None else []

    def boolean_verdicts(self, node: Any) -> bool:
        """True when `node`'s verdicts are true and false."""
        if self.boolean is not None:
            return self.boolean(node)
        return self.answer is not None and self.answer.choices([]) == [True, False]

    def new_node(self, node_id: str) -> NodeBase:
        """A fresh node of this type named `node_id` (see `blank`)."""
        # every node class defaults its own `type`; NodeBase, as typed here, does not
        node = self.blank(node_id) if self.blank is not None else self.cls()  # type: ignore[call-arg]
        node.id = node_id
        return node


_KINDS: dict[str, NodeKind] = {}


def register(kind: NodeKind) -> NodeKind:
    """Make a node type known everywhere: the loader, the editor, the engine, the exports."""
    _KINDS[kind.type] = kind
    NODE_CLASSES[kind.type] = kind.cls
    return kind


def unregister(type_name: str) -> None:
    """Forget a registered type (a test's toy kind)."""
    _KINDS.pop(type_name, None)
    NODE_CLASSES.pop(type_name, None)


def kind_of(node: NodeBase) -> NodeKind:
    """The kind of a node of a registered type."""
    return _KINDS[node.type]


def kind_text(node: NodeBase) -> str:
    """The node's type, and its variant where its kind has one: `binary`, `check/regex`."""
    kind = _KINDS.get(node.type)
    variant = kind.variant(node) if kind is not None else None
    return node.type if variant is None else f"{node.type}/{variant}"


def find_kind(type_name: str) -> NodeKind | None:
    """The kind named `type_name`, or None for a type nobody registered."""
    return _KINDS.get(type_name)


def icon(type_name: str) -> str:
    """The type's icon (`•` for a type nobody registered)."""
    kind = _KINDS.get(type_name)
    return kind.icon if kind is not None else "•"


def scores(type_name: str) -> bool:
    """True for a type a judge answers with a 0..10 score (a scored leaf: geval, metric),
    e.g. a trace step's `node_type`."""
    kind = _KINDS.get(type_name)
    return kind is not None and kind.scored


def extracts(type_name: str) -> bool:
    """True for a type whose answer is evidence text (a task), e.g. a trace step's
    `node_type`; a type nobody registered (an old trace) is taken for a verdict."""
    kind = _KINDS.get(type_name)
    return kind is not None and kind.extracts


def decides(type_name: str) -> bool:
    """True for a type whose answer is a verdict: neither evidence nor a score."""
    return not (scores(type_name) or extracts(type_name))


def all_kinds() -> list[NodeKind]:
    """Every registered kind, in registration order (the built-in ones first)."""
    return list(_KINDS.values())


def verdicts_of(node: NodeBase) -> list[Verdict]:
    """The verdicts a node declares (binary, non_binary, check), in declared order; none for
    a node that chooses none (a task, a scored leaf)."""
    return list(getattr(node, "verdicts", None) or [])


def verdict_values(node: NodeBase) -> list[Any]:
    """The verdicts a node chooses among (binary, non_binary, check), in declared order: the
    labels it may take (keys 1-9 in the labelling screen), calibration's classes; none for a
    node that chooses none (a task, a scored leaf)."""
    return [v.verdict for v in verdicts_of(node)]

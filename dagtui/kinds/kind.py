"""`NodeKind`: everything that differs between node types, in one object per type.

A node type is a dataclass (`dagtui.model`: its TOML fields) plus a `NodeKind` saying how
the rest of dagtui treats it: what a judge is asked and may answer, how many judge calls a
visit costs, its icon, the field "edit & re-run" changes, the fields the editor form shows,
its DeepEval class and its validation. Code that used to switch on the node's class looks the
kind up instead (`kind_of(node)`).

A new node type a judge answers is one dataclass (`NodeBase` subclass; `Judgement` when it
chooses a verdict) and one `register(NodeKind(...))`: `tests/test_kinds.py` adds a toy type
that way, and the loader, fmt, the validator, the engine, the cost estimate, the editor form,
the debugger's edit and the tree's icon handle it. Still written per built-in type: the
DeepEval exports (they refuse any other type), the DOT/Mermaid/picture drawings' box shapes,
the judges' and the TUI's treatment of particular answers (the human judge's dialog, labels,
replay, G-Eval log-probabilities), code-run nodes (checks) and G-Eval step generation in the
engine, and docs/format.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..model import NODE_CLASSES, NodeBase
from .answers import Answer


@dataclass(frozen=True)
class Request:
    """The node-specific part of a judge request (`dagtui.prompts.build_prompt` adds the
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


def own_form_fields(node: NodeBase) -> list[str]:
    """The node's TOML fields but its verdicts (edited apart, one row each)."""
    return [f for f in node.FIELDS if f != "verdicts"]


#: (node, case fields, steps) -> the Request; `steps` are a G-Eval leaf's evaluation steps
RequestFn = Callable[[Any, dict[str, Any], "list[str] | None"], Request]


@dataclass(frozen=True)
class NodeKind:
    """One node type's behaviour. Only `cls` and `icon` are required; a type a judge
    answers also gives `answer` and `request`. The other defaults: one judge call per visit,
    nothing for the debugger to edit, every field but the verdicts in the form, no DeepEval
    class and no checks beyond those every node gets."""

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
    #: validator's `dagtui.validate.nodes.NodeChecks` (its `add`, `require`, `raw_has` and
    #: `check_*` helpers), the node id and the node
    validate: Callable[[Any, str, Any], None] | None = None

    @property
    def type(self) -> str:
        """The `type = "..."` value in TOML."""
        return str(self.cls.__dataclass_fields__["type"].default)


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
    return kind is not None and kind.answer is not None and kind.answer.scored


def all_kinds() -> list[NodeKind]:
    """Every registered kind, in registration order (the built-in ones first)."""
    return list(_KINDS.values())

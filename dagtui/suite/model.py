"""The suite model: rules (graph files or inline checks) chained by `depends_on`.

A suite file names rules; each rule scores a case. A rule with `depends_on` runs on a case
only when every rule it depends on scored that case above 0, so cheap code checks filter the
dataset before expensive judges see it. This module holds the typed suite and the *editing
operations* whose refusals are part of the product (a cycle is refused when it is made, not
discovered at run time; a rule others depend on cannot be deleted). It never touches files
or judges: loading is `dagtui.suite.loader`, running is `dagtui.suite.gating`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from dagtui.graph import cycles as graphcycles
from dagtui.graph.model import about

#: rule statuses: a paused rule does not run, and its dependents see no pass from it
STATUSES: tuple[str, ...] = ("active", "paused")

#: filter operators -> canonical name. Aliases are accepted so a hand-written file reads
#: naturally (`op = ">="` or `op = "ge"`); the canonical name is what summaries print.
FILTER_OPS: dict[str, str] = {
    "eq": "eq", "equals": "eq", "==": "eq",
    "ne": "ne", "not_equals": "ne", "!=": "ne",
    "in": "in",
    "not_in": "not_in",
    "regex": "regex",
    "contains": "contains",
    "exists": "exists",
    "lt": "lt", "<": "lt",
    "le": "le", "<=": "le",
    "gt": "gt", ">": "gt",
    "ge": "ge", ">=": "ge",
}


class SuiteEditError(ValueError):
    """An edit the suite refuses; the message says why in the user's terms."""


class CycleError(SuiteEditError):
    """Adding the dependency (or loading the file) would make the rules depend on themselves.

    `cycle` lists the rules around the loop with the first repeated at the end, e.g.
    `["a", "b", "a"]`, so messages can print `a -> b -> a`.
    """

    def __init__(self, cycle: list[str], message: str | None = None) -> None:
        self.cycle = cycle
        super().__init__(message or f"dependency cycle: {' -> '.join(cycle)}")


class RuleInUseError(SuiteEditError):
    """Deleting a rule that other rules depend on; `dependents` are their names."""

    def __init__(self, rule: str, dependents: list[str]) -> None:
        self.rule = rule
        self.dependents = dependents
        names = ", ".join(dependents)
        super().__init__(
            f"cannot delete rule '{rule}': {names} depend{'s' if len(dependents) == 1 else ''} "
            f"on it; remove the dependency from {'it' if len(dependents) == 1 else 'them'} first"
        )


@dataclass
class Sample:
    """Keep a seeded, reproducible fraction of the cases a rule would otherwise evaluate."""

    rate: float = field(default=1.0, metadata=about(
        "the fraction of cases kept", bounds=(0, 1)))
    seed: int = field(default=0, metadata=about("the seed that picks them"))


@dataclass
class FilterCond:
    """One case condition: `field` is a dotted path into the case (`metadata.kind`)."""

    field: str
    op: str = "eq"
    value: Any = None

    @property
    def canonical_op(self) -> str:
        return FILTER_OPS.get(self.op, self.op)

    def describe(self) -> str:
        if self.canonical_op == "exists":
            return f"{self.field} exists" if self.value in (None, True) else f"{self.field} missing"
        return f"{self.field} {self.canonical_op} {self.value!r}"


@dataclass
class Rule:
    """One rule of a suite: exactly one of `graph` (a path, relative to the suite file) or
    `check` (an inline deterministic check, scored 1 when it holds and 0 when not)."""

    id: str
    label: str | None = field(default=None, metadata=about(
        "shown in reports and the editor (default: the rule's name)"))
    graph: str | None = field(default=None, metadata=about(
        "a graph file (beside the suite) that scores the case"))
    check: dict[str, Any] | None = field(default=None, metadata=about(
        "or an inline check: a check node's settings, scored 1 or 0"))
    depends_on: list[str] = field(default_factory=list)
    sample: Sample | None = None
    max_calls: int | None = None
    #: at most this many judge requests a minute for this rule (a judge of its own)
    rpm: float | None = None
    filter: list[FilterCond] = field(default_factory=list)
    status: str = "active"
    description: str | None = None

    @property
    def display_name(self) -> str:
        return self.label or self.id

    @property
    def active(self) -> bool:
        return self.status == "active"

    @property
    def source(self) -> Literal["graph", "check", "none"]:
        if self.graph is not None:
            return "graph"
        if self.check is not None:
            return "check"
        return "none"


@dataclass
class SuiteMeta:
    """The `[suite]` table."""

    name: str = "Untitled suite"
    cases: str | None = None
    #: cases carrying human labels per rule, for `dagtui test` (default: `cases`)
    labels: str | None = None
    concurrency: int | None = None
    description: str | None = None


@dataclass
class Suite:
    """A whole suite file: settings plus rules in file order.

    `path` is where it was loaded from; graph paths of rules resolve against its folder.
    """

    meta: SuiteMeta = field(default_factory=SuiteMeta)
    rules: dict[str, Rule] = field(default_factory=dict)
    path: str | None = None

    # -- graph queries ---------------------------------------------------------------------
    def dependents(self, rule_id: str) -> list[str]:
        """Rules that name `rule_id` in `depends_on` (direct only), in file order."""
        return [rid for rid, r in self.rules.items() if rule_id in r.depends_on]

    def upstream(self, rule_id: str) -> list[str]:
        """Every rule `rule_id` depends on, directly or not, in file order."""
        return self._closure(rule_id, lambda rid: self._known_deps(rid))

    def downstream(self, rule_id: str) -> list[str]:
        """Every rule that depends on `rule_id`, directly or not, in file order."""
        return self._closure(rule_id, self.dependents)

    def _known_deps(self, rule_id: str) -> list[str]:
        rule = self.rules.get(rule_id)
        return [d for d in rule.depends_on if d in self.rules] if rule else []

    def _closure(self, start: str, step: Any) -> list[str]:
        seen: set[str] = set()
        todo = list(step(start))
        while todo:
            rid = todo.pop()
            if rid in seen or rid == start:
                continue
            seen.add(rid)
            todo.extend(step(rid))
        return [rid for rid in self.rules if rid in seen]

    def _needs(self, *, skip_self: bool = False) -> dict[str, list[str]]:
        """Each rule with the known rules it depends on (what must come first, as
        `graphcycles` takes a graph), in file order."""
        return {rid: [d for d in self._known_deps(rid) if not (skip_self and d == rid)]
                for rid in self.rules}

    def find_cycle(self, *, skip_self: bool = False) -> list[str] | None:
        """One dependency cycle as `[a, b, ..., a]`, or None. Unknown names are ignored
        (they are reported on their own); a self-dependency is the cycle `[a, a]` unless
        `skip_self` (the validator reports those apart and looks for longer loops)."""
        found = graphcycles.find_cycle(self._needs(skip_self=skip_self))
        return None if found is None else self._reading_order(found)

    def _reading_order(self, cycle: list[str]) -> list[str]:
        """A cycle as `graphcycles` gives it (each rule before the rules that need it) in the
        direction a reader follows, rule -> what it needs, from its first rule in file order."""
        loop = cycle[:0:-1]
        position = {rid: k for k, rid in enumerate(self.rules)}
        first = min(range(len(loop)), key=lambda k: position[loop[k]])
        return [*loop[first:], *loop[:first], loop[first]]

    def levels(self) -> list[list[str]]:
        """Topological levels: level 0 depends on nothing; level n only on levels < n, at
        least one of them n-1. File order inside a level. Raises `CycleError`."""
        try:
            return graphcycles.levels(self._needs())
        except graphcycles.CycleError as exc:
            raise CycleError(self._reading_order(list(exc.args[1]))) from None

    def level_of(self) -> dict[str, int]:
        return {rid: n for n, ids in enumerate(self.levels()) for rid in ids}

    # -- edits (the TUI and the library call these; each refusal is immediate) -----------
    def add_rule(self, rule: Rule) -> None:
        if rule.id in self.rules:
            raise SuiteEditError(f"a rule named '{rule.id}' already exists")
        for dep in rule.depends_on:
            if dep not in self.rules:
                raise SuiteEditError(f"rule '{rule.id}' depends on unknown rule '{dep}'")
        self.rules[rule.id] = rule

    def remove_rule(self, rule_id: str) -> Rule:
        """Delete a rule; refused (`RuleInUseError`, naming them) while others depend on it."""
        if rule_id not in self.rules:
            raise SuiteEditError(f"no rule named '{rule_id}'")
        dependents = self.dependents(rule_id)
        if dependents:
            raise RuleInUseError(rule_id, dependents)
        return self.rules.pop(rule_id)

    def add_dependency(self, rule_id: str, dep_id: str) -> None:
        """Make `rule_id` depend on `dep_id`; refused at once if that would make a cycle."""
        if rule_id not in self.rules:
            raise SuiteEditError(f"no rule named '{rule_id}'")
        if dep_id not in self.rules:
            raise SuiteEditError(f"no rule named '{dep_id}' to depend on")
        if dep_id == rule_id:
            raise CycleError([rule_id, rule_id], f"rule '{rule_id}' cannot depend on itself")
        rule = self.rules[rule_id]
        if dep_id in rule.depends_on:
            return
        # a cycle appears iff rule_id is already upstream of dep_id (dep needs rule)
        path = self._dep_path(dep_id, rule_id)
        if path is not None:
            cycle = [rule_id] + path
            raise CycleError(
                cycle,
                f"'{rule_id}' cannot depend on '{dep_id}': that makes a cycle "
                f"{' -> '.join(cycle)}",
            )
        rule.depends_on.append(dep_id)

    def remove_dependency(self, rule_id: str, dep_id: str) -> None:
        rule = self.rules.get(rule_id)
        if rule is None:
            raise SuiteEditError(f"no rule named '{rule_id}'")
        if dep_id not in rule.depends_on:
            raise SuiteEditError(f"rule '{rule_id}' does not depend on '{dep_id}'")
        rule.depends_on.remove(dep_id)

    def set_status(self, rule_id: str, status: str) -> None:
        if status not in STATUSES:
            raise SuiteEditError(f"status must be one of {', '.join(STATUSES)}")
        if rule_id not in self.rules:
            raise SuiteEditError(f"no rule named '{rule_id}'")
        self.rules[rule_id].status = status

    def _dep_path(self, start: str, goal: str) -> list[str] | None:
        """Rules from `start` to `goal` following depends_on edges, or None."""
        prev: dict[str, str | None] = {start: None}
        todo = [start]
        while todo:
            rid = todo.pop(0)
            if rid == goal:
                out = [rid]
                while (back := prev[out[-1]]) is not None:
                    out.append(back)
                return list(reversed(out))
            for dep in self._known_deps(rid):
                if dep not in prev:
                    prev[dep] = rid
                    todo.append(dep)
        return None

    # -- saving -----------------------------------------------------------------------------
    def to_raw(self) -> dict[str, Any]:
        """Plain dict in the file layout (defaults left out), for a TOML writer or a tomlkit
        merge."""
        meta: dict[str, Any] = {"name": self.meta.name}
        for key in ("cases", "labels", "concurrency", "description"):
            value = getattr(self.meta, key)
            if value is not None:
                meta[key] = value
        rules: dict[str, Any] = {}
        for rid, r in self.rules.items():
            rules[rid] = rule_to_raw(r)
        return {"suite": meta, "rules": rules}


def rule_to_raw(rule: Rule) -> dict[str, Any]:
    """One rule as a TOML-ready dict, defaults dropped, in a fixed reading order."""
    out: dict[str, Any] = {}
    if rule.label:
        out["label"] = rule.label
    if rule.description:
        out["description"] = rule.description
    if rule.graph is not None:
        out["graph"] = rule.graph
    if rule.check is not None:
        out["check"] = dict(rule.check)
    if rule.depends_on:
        out["depends_on"] = list(rule.depends_on)
    if rule.filter:
        out["filter"] = [
            {"field": f.field, "op": f.op, **({"value": f.value} if f.value is not None else {})}
            for f in rule.filter
        ]
    if rule.sample is not None:
        out["sample"] = {"rate": rule.sample.rate, "seed": rule.sample.seed}
    if rule.max_calls is not None:
        out["max_calls"] = rule.max_calls
    if rule.rpm is not None:
        out["rpm"] = rule.rpm
    if rule.status != "active":
        out["status"] = rule.status
    return out

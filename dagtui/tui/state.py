"""The editor's domain state: the graph being edited, undo/redo, dirty flag, selection, file.

Kept free of textual so every editing rule (rename updates references, delete is refused
while something points at the node, undo restores exactly, saving never overwrites a file
that did not parse) is tested and timed without a terminal. The app only calls these
methods and redraws.

Node objects are treated as immutable: every edit replaces the node in `graph.nodes` with a
modified copy. An undo snapshot is therefore a shallow copy of the nodes dict, cheap even at
1,000 nodes, and so is a `CheckJob`: the copy a worker validates after the keystroke, while
the next keystrokes already edit the state.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dagtui.diagnostics import Diagnostic, Severity, sort_key
from dagtui.graph.loader import LoadResult
from dagtui.graph.model import CheckNode, Graph, Metric, NodeBase, TaskNode, Verdict
from dagtui.graph.positions import Positions
from dagtui.kinds import find_kind, kind_of
from dagtui.record import Record, Shown, frozen
from dagtui.tui import backend

if TYPE_CHECKING:
    from dagtui.graph.analysed import CheckedGraph

#: codes only the loader can find (they describe the file text, not the model)
LOADER_ONLY = frozenset({"DAG001", "DAG002", "DAG004", "DAG005", "DAG017", "DAG022"})
NODE_ID = re.compile(r"^[A-Za-z0-9_-]+$")


class EditRefused(Exception):
    """An edit that would break the graph in a way the user did not ask for."""


@dataclass(eq=False, repr=False)
class Snapshot(Shown):
    """Everything undo restores (each one taken once: equal only to itself)."""

    metric: Metric
    nodes: dict[str, Any]
    renames: dict[str, str]
    selected: str | None
    description: str
    key: tuple[Any, ...] | None = None
    version: int = 0


@frozen
class CheckJob(Shown):
    """One validation with everything it reads copied, so it can run in a worker while the
    state moves on; `EditorState.apply_check` takes its result only if no newer
    job was issued since (the very same job: equal only to itself)."""

    graph: Graph
    positions: Positions | None
    #: the parsed file of a deferred open (its check also reports what the loader found)
    loaded: LoadResult | None = None

    def run(self) -> backend.Checked:
        """Validate and analyse paths."""
        if self.loaded is not None:
            return backend.check_loaded(self.loaded)
        return backend.check_graph(self.graph, self.positions)


@dataclass(eq=False, repr=False)
class FileStamp(Record):
    """What the file on disk looked like when we last read or wrote it."""

    mtime_ns: int = 0
    size: int = -1

    @classmethod
    def of(cls, path: Path) -> FileStamp:
        try:
            st = path.stat()
        except OSError:
            return cls()
        return cls(st.st_mtime_ns, st.st_size)


@dataclass(eq=False, repr=False)
class EditorState(Shown):
    """One open graph file and its editing history (one object per open file: equal only to
    itself, which also spares compiling a field-by-field `__eq__` before the first frame)."""

    path: Path
    graph: Graph = field(default_factory=Graph)
    #: text as last loaded/saved: the base tomlio merges into (None for a new file)
    text: str | None = None
    positions: Positions | None = None
    #: a file that did not parse: shown, never saved over
    read_only: bool = False
    #: the file does not exist yet (created on first save)
    new_file: bool = False
    diagnostics: list[Diagnostic] = field(default_factory=list)
    paths: Any = None
    selected: str | None = None
    renames: dict[str, str] = field(default_factory=dict)
    stamp: FileStamp = field(default_factory=FileStamp)
    #: the bytes `text` was read from (or last written): a save refuses when the file on disk
    #: no longer holds them, so another program's edit is never silently overwritten
    disk: backend.Stamp | None = None
    #: the file had CRLF line breaks throughout: `text` holds `\n`, saving writes CRLF
    crlf: bool = False
    _load_diags: list[Diagnostic] = field(default_factory=list)
    _undo: list[Snapshot] = field(default_factory=list)
    _redo: list[Snapshot] = field(default_factory=list)
    #: identifies the current content: every edit gets a fresh number, undo/redo restore
    _version: int = 0
    _counter: int = 0
    _saved_version: int = 0
    #: the content the file on disk holds (metric, nodes, renames), None for a starter not
    #: saved yet: an edit that comes back to it (a field's own ctrl+z undoing every
    #: keystroke) leaves the file unmodified
    _saved_content: tuple[Any, ...] | None = field(default=None, repr=False)
    #: versions whose content is the saved one (the saved version and any edit back to it)
    _clean_versions: set[int] = field(default_factory=set, repr=False)
    _coalesce_open: bool = False
    #: the parsed file whose validation `finish_check` still has to run
    _pending_check: Any = None
    #: set by the editor app: an edit then calls it instead of validating at once, and the
    #: app runs the validation (`check_job`, `apply_check`) in a worker
    check_later: Callable[[], None] | None = field(default=None, repr=False)
    #: an edit's validation is still to run (`check_later` was called for it)
    _stale: bool = False
    #: the newest job `check_job` handed out: only its result is applied
    _job: CheckJob | None = field(default=None, repr=False)

    # -- opening --------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path, starter: str | None = None, *,
             defer_check: bool = False) -> EditorState:
        """Open `path`; a missing file starts from `starter` (None: caller must choose).

        `defer_check`: only parse the file now (the tree can be drawn from that) and leave
        validation and path analysis to `finish_check`, which the editor runs right after
        its first frame is on screen. Until then `diagnostics` holds the loader's findings.
        """
        state = cls(Path(path))
        if state.path.exists():
            state.reload(defer_check=defer_check)
            return state
        state.disk = backend.Stamp.absent()  # a file created meanwhile is not overwritten
        if starter is not None:
            state.start_from(starter)
        else:
            state.new_file = True
        return state

    def start_from(self, starter: str) -> None:
        """Fill a not-yet-existing file from a starter graph; unsaved until ctrl+s."""
        text = backend.starter_text(starter)
        self._apply_text(text)
        self.text = text
        self.new_file = True
        self._counter += 1
        self._version = self._counter  # dirty: nothing on disk yet
        self._saved_version = -1
        self._saved_content = None
        self._clean_versions = set()

    def reload(self, *, defer_check: bool = False) -> None:
        """(Re)read the file from disk, discarding history (see `open` for `defer_check`)."""
        try:
            text, self.disk, self.crlf = backend.read_text(self.path)
        except (OSError, ValueError) as exc:  # ValueError: InputError (a FIFO, ...), not UTF-8
            self.read_only = True
            self.text = None
            why = getattr(exc, "message", None) or f"cannot read: {exc}"
            self.diagnostics = [Diagnostic("DAG022", Severity.ERROR, why, str(self.path),
                                           getattr(exc, "line", 0), getattr(exc, "col", 0))]
            self.stamp = FileStamp.of(self.path)  # not "changed on disk" at every poll
            return
        self.stamp = FileStamp.of(self.path)
        self.new_file = False
        self._apply_text(text, defer_check=defer_check)
        self._undo.clear()
        self._redo.clear()
        self._version = self._saved_version = 0
        self.renames = {}
        self._mark_saved()

    def _apply_text(self, text: str, *, defer_check: bool = False) -> None:
        if defer_check:
            loaded = backend.load(text, file=str(self.path))
            checked = backend.Checked(list(loaded.diagnostics), None, loaded)
            self._pending_check = loaded if loaded.parsed and loaded.graph else None
        else:
            checked = backend.check_text(text, file=str(self.path))
            self._pending_check = None
        load = checked.load
        self._job, self._stale = None, False
        self.text = text
        if load is None or not load.parsed or load.graph is None:
            self.read_only = True
            self.graph = Graph(path=str(self.path))
            self.positions = None
        else:
            self.read_only = False
            self.graph = load.graph
            self.graph.path = str(self.path)
            self.positions = load.positions
        self._load_diags = [d for d in (load.diagnostics if load else []) if d.code in LOADER_ONLY]
        self.diagnostics = list(checked.diagnostics)
        self.paths = checked.paths
        if self.selected not in self.graph.nodes:
            self.selected = next(iter(self.graph.nodes), None)

    def finish_check(self) -> bool:
        """Run the validation `open(defer_check=True)` left for later; False when nothing
        was pending (an edit since then has already revalidated the graph)."""
        if self._pending_check is None:
            return False
        job = self.check_job()
        assert job is not None
        return self.apply_check(job, job.run())

    @property
    def checking(self) -> bool:
        """True between a deferred open and `finish_check`: the problems are not known yet."""
        return self._pending_check is not None

    @property
    def stale(self) -> bool:
        """An edit's validation has not run yet: `diagnostics` describe the graph before it."""
        return self._stale

    # -- status ---------------------------------------------------------------------------
    @property
    def version(self) -> int:
        """Bumped by every edit (and moved back by undo): a cheap 'did anything change'."""
        return self._version

    @property
    def dirty(self) -> bool:
        """The content differs from the file's: not merely 'edited since the save'."""
        return self._version != self._saved_version and self._version not in self._clean_versions

    def _content(self) -> tuple[Any, ...]:
        return (self.graph.metric, dict(self.graph.nodes), dict(self.renames))

    def _mark_saved(self) -> None:
        self._saved_content = self._content()
        self._clean_versions = {self._version}

    def _back_to_saved(self) -> bool:
        """The content equals the saved one (nodes are replaced on edit, so unchanged ones
        compare by identity: cheap even for a large graph)."""
        saved = self._saved_content
        if saved is None:
            return False
        metric, nodes, renames = saved
        return (self.graph.metric == metric and self.graph.nodes == nodes
                and self.renames == renames)

    @property
    def errors(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity is Severity.ERROR)

    @property
    def warnings(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity is Severity.WARNING)

    @property
    def valid(self) -> bool:
        return not self.read_only and self.errors == 0

    @property
    def can_undo(self) -> bool:
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        return bool(self._redo)

    @property
    def first_error(self) -> Diagnostic | None:
        return next((d for d in self.diagnostics if d.is_error), None)

    def problems_of(self, node_id: str) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.node == node_id]

    def problem_counts(self) -> dict[str, tuple[int, int]]:
        """node id -> (errors, warnings) for tree badges."""
        counts: dict[str, list[int]] = {}
        for d in self.diagnostics:
            if d.node is None:
                continue
            c = counts.setdefault(d.node, [0, 0])
            if d.severity is Severity.ERROR:
                c[0] += 1
            elif d.severity is Severity.WARNING:
                c[1] += 1
        return {k: (v[0], v[1]) for k, v in counts.items()}

    # -- checking -------------------------------------------------------------------------
    def revalidate(self) -> None:
        """Recheck the edited graph. Loader-only findings about the file text stay shown
        until the next save or reload re-reads the text."""
        self._pending_check, self._job, self._stale = None, None, False
        self._take(backend.check_graph(self.graph, self.positions))

    def settle(self) -> None:
        """Validate now whatever is still waiting for a worker (before acting on `errors`)."""
        if self._pending_check is not None:
            self.finish_check()
        elif self._stale:
            self.revalidate()

    def current_check(self) -> CheckedGraph | None:
        """The latest check as the graph's, when it describes the graph as it is now (no
        edit's or deferred open's validation still owed: F5 settles those first), so the
        debugger runs on it instead of validating again; else None (the debugger
        validates)."""
        if self.stale or self.checking or self.read_only:
            return None
        from dagtui.graph.analysed import CheckedGraph

        return CheckedGraph.of_check(self.graph, self.diagnostics, self.paths)

    def check_job(self) -> CheckJob | None:
        """The validation still owed (None: none is), copied for a worker; it
        supersedes every job handed out before."""
        if self._pending_check is not None:
            job = CheckJob(self.graph, self.positions, self._pending_check)
        elif self._stale:
            graph = Graph(metric=self.graph.metric, nodes=dict(self.graph.nodes),
                          path=self.graph.path)
            job = CheckJob(graph, self.positions)
        else:
            return None
        self._job = job
        return job

    def apply_check(self, job: CheckJob, checked: backend.Checked) -> bool:
        """Take a worker's result; False (ignored) when a newer job or a reload came since."""
        if job is not self._job:
            return False
        self._job, self._stale = None, False
        if job.loaded is not None:
            self._pending_check = None
            self.diagnostics = list(checked.diagnostics)
            self.paths = checked.paths
        else:
            self._take(checked)
        return True

    def _changed(self) -> None:
        """After an edit, undo or redo: validate now, or leave it to `check_later`."""
        if self.check_later is None:
            self.revalidate()
            return
        self._pending_check, self._stale = None, True
        self.check_later()

    def _take(self, checked: backend.Checked) -> None:
        keep = [
            d for d in self._load_diags
            if d.node is None or d.node in self.graph.nodes or d.code in ("DAG005", "DAG003")
        ]
        seen = {(d.code, d.node, d.field, d.message) for d in checked.diagnostics}
        extra = [d for d in keep if (d.code, d.node, d.field, d.message) not in seen]
        self.diagnostics = sorted(checked.diagnostics + extra, key=sort_key)
        self.paths = checked.paths

    # -- history --------------------------------------------------------------------------
    def _snapshot(self, description: str, key: tuple[Any, ...] | None = None) -> Snapshot:
        return Snapshot(self.graph.metric, dict(self.graph.nodes), dict(self.renames),
                        self.selected, description, key, self._version)

    def _restore(self, snap: Snapshot) -> None:
        self.graph.metric = snap.metric
        self.graph.nodes = dict(snap.nodes)
        self.renames = dict(snap.renames)
        self._version = snap.version
        if snap.selected in self.graph.nodes or snap.selected is None:
            self.selected = snap.selected

    def _check_writable(self) -> None:
        if self.read_only:
            raise EditRefused("the file did not parse: fix it on disk, then reload (ctrl+r)")

    def edit(self, description: str, change: Callable[[], None],
             key: tuple[Any, ...] | None = None) -> None:
        """Apply `change` as one undoable step.

        Consecutive edits with the same `key` (typing into one field) merge into one step, so
        undo takes back the whole word rather than one character.
        """
        self._check_writable()
        merge = key is not None and self._undo and self._undo[-1].key == key and self._coalesce_open
        if not merge:
            self._undo.append(self._snapshot(description, key))
            if len(self._undo) > 500:
                del self._undo[0]
        self._redo.clear()
        try:
            change()
        except Exception:
            if not merge:
                self._restore(self._undo.pop())
            raise
        self._coalesce_open = key is not None
        self._counter += 1
        self._version = self._counter
        if self._back_to_saved():
            self._clean_versions.add(self._version)
        self._changed()

    def break_coalescing(self) -> None:
        """Start a new undo step even for the same field (focus moved away)."""
        self._coalesce_open = False

    def undo(self) -> str | None:
        if self.read_only or not self._undo:
            return None
        snap = self._undo.pop()
        self._redo.append(self._snapshot(snap.description))
        self._restore(snap)
        self._coalesce_open = False
        self._changed()
        return snap.description

    def redo(self) -> str | None:
        if self.read_only or not self._redo:
            return None
        snap = self._redo.pop()
        self._undo.append(self._snapshot(snap.description))
        self._restore(snap)
        self._coalesce_open = False
        self._changed()
        return snap.description

    # -- node edits -----------------------------------------------------------------------
    def node(self, node_id: str) -> NodeBase:
        return self.graph.nodes[node_id]

    def _replace(self, node_id: str, **update: Any) -> None:
        node = self.graph.nodes[node_id]
        new = node.replace(**{node.attr_for(key): value for key, value in update.items()})
        new.id = node_id
        self.graph.nodes[node_id] = new

    def set_field(self, node_id: str, name: str, value: Any) -> None:
        """Set one field of a node (typing coalesces into one undo step per field)."""
        self._check_writable()
        node = self.graph.nodes[node_id]
        if getattr(node, node.attr_for(name), None) == value:
            return
        self.edit(f"edit {node_id}.{name}", lambda: self._replace(node_id, **{name: value}),
                  key=("field", node_id, name))

    def set_metric(self, name: str, value: Any) -> None:
        self._check_writable()
        if getattr(self.graph.metric, name) == value:
            return

        def change() -> None:
            self.graph.metric = self.graph.metric.replace(**{name: value})

        self.edit(f"edit metric.{name}", change, key=("metric", name))

    def change_type(self, node_id: str, new_type: str) -> None:
        """Turn a node into another type, keeping the fields both types share."""
        self._check_writable()
        old = self.graph.nodes[node_id]
        if old.type == new_type:
            return
        kind = find_kind(new_type)
        if kind is None:
            raise KeyError(new_type)
        cls, blank = kind.cls, kind.new_node(node_id)
        data = {k: getattr(old, k) for k in ("label", "params", "turn_window")}
        # the text the judge reads (criteria, instructions, ...) moves to the new type's
        text = getattr(old, kind_of(old).editable(old) or "", None)
        to = kind.editable(blank)
        if text and isinstance(text, str) and to:
            data[to] = text
        # no verdicts yet: those a new node of the type starts with
        verdicts = list(getattr(old, "verdicts", []) or getattr(blank, "verdicts", []) or [])

        def change() -> None:
            # from_toml copies the lists and leaves out a value the new type cannot hold
            new, _ = cls.from_toml({"type": new_type, **{k: v for k, v in data.items()
                                                         if v is not None}})
            assert new is not None  # every node field has a default
            if hasattr(new, "verdicts"):
                new.verdicts = verdicts
            if "children" in new.FIELDS:  # data edges: the old node's targets
                # a type with `children` (NodeBase, as typed here, has none)
                new.children = [t for t in old.targets()]  # type: ignore[attr-defined]
            new.id = node_id
            self.graph.nodes[node_id] = new

        self.edit(f"change {node_id} to {new_type}", change)

    def new_node(self, node_type: str, node_id: str) -> NodeBase:
        """A fresh node with placeholder content the validator will point at (its kind's
        `new_node`)."""
        kind = find_kind(node_type)
        if kind is None:
            raise KeyError(node_type)
        return kind.new_node(node_id)

    def check_new_id(self, node_id: str) -> str | None:
        """Why `node_id` cannot name a new node, or None when it can."""
        if not node_id:
            return "an id is required"
        if not NODE_ID.fullmatch(node_id):
            return "use letters, digits, _ and - only"
        if node_id in self.graph.nodes:
            return f"'{node_id}' already exists"
        return None

    def suggest_id(self, base: str) -> str:
        i = 1
        while f"{base}_{i}" in self.graph.nodes:
            i += 1
        return f"{base}_{i}"

    def add_node(self, node_type: str, node_id: str, *, parent: str | None = None,
                 verdict_index: int | None = None) -> None:
        """Add a node: a child of task `parent`, or the `then` of one of `parent`'s
        verdicts (the verdict's score is dropped), or unattached (a new root)."""
        self._check_writable()
        problem = self.check_new_id(node_id)
        if problem:
            raise EditRefused(problem)
        node = self.new_node(node_type, node_id)

        def change() -> None:
            self.graph.nodes[node_id] = node
            if parent is not None:
                owner = self.graph.nodes[parent]
                if verdict_index is not None and hasattr(owner, "verdicts"):
                    vs = list(owner.verdicts)
                    v = vs[verdict_index]
                    vs[verdict_index] = Verdict(verdict=v.verdict, score=None, then=node_id)
                    self._replace(parent, verdicts=vs)
                elif isinstance(owner, TaskNode):
                    self._replace(parent, children=[*owner.children, node_id])
            self.selected = node_id

        self.edit(f"add {node_id}", change)

    # -- verdicts -------------------------------------------------------------------------
    def verdicts(self, node_id: str) -> list[Verdict]:
        return list(getattr(self.graph.nodes[node_id], "verdicts", []) or [])

    def add_verdict(self, node_id: str) -> int:
        """Append a verdict with a value that does not clash; returns its index."""
        self._check_writable()
        node = self.graph.nodes[node_id]
        if not hasattr(node, "verdicts"):
            raise EditRefused(f"a {node.type} node has no verdicts")
        vs = self.verdicts(node_id)
        if not kind_of(node).boolean_verdicts(node):  # labels
            taken = {str(v.verdict) for v in vs}
            n = len(vs) + 1
            while f"Label {n}" in taken:
                n += 1
            value: bool | str = f"Label {n}"
        else:
            have = {v.verdict for v in vs if isinstance(v.verdict, bool)}
            value = not (True in have and False not in have)
        vs.append(Verdict(verdict=value, score=0, then=None))
        self.edit(f"add verdict to {node_id}", lambda: self._replace(node_id, verdicts=vs))
        return len(vs) - 1

    def remove_verdict(self, node_id: str, index: int) -> None:
        self._check_writable()
        vs = self.verdicts(node_id)
        if not 0 <= index < len(vs):
            raise EditRefused("no such verdict")
        del vs[index]
        self.edit(f"remove verdict from {node_id}", lambda: self._replace(node_id, verdicts=vs))

    def set_verdict(self, node_id: str, index: int, *, verdict: Any = ..., score: Any = ...,
                    then: Any = ...) -> None:
        """Change one verdict. Setting `score` clears `then` and vice versa (exactly one)."""
        self._check_writable()
        vs = self.verdicts(node_id)
        old = vs[index]
        new_verdict = old.verdict if verdict is ... else verdict
        new_score, new_then = old.score, old.then
        if score is not ...:
            new_score = score
            if score is not None:
                new_then = None
        if then is not ...:
            new_then = then
            if then is not None:
                new_score = None
        if (new_verdict, new_score, new_then) == (old.verdict, old.score, old.then):
            return
        vs[index] = Verdict(verdict=new_verdict, score=new_score, then=new_then)
        self.edit(f"edit verdict of {node_id}", lambda: self._replace(node_id, verdicts=vs),
                  key=("verdict", node_id, index, verdict is ..., score is ..., then is ...))

    def move_verdict(self, node_id: str, index: int, delta: int) -> int:
        self._check_writable()
        vs = self.verdicts(node_id)
        j = index + delta
        if not (0 <= index < len(vs) and 0 <= j < len(vs)):
            return index
        vs[index], vs[j] = vs[j], vs[index]
        self.edit(f"move verdict of {node_id}", lambda: self._replace(node_id, verdicts=vs))
        return j

    # -- structure ------------------------------------------------------------------------
    def move_child(self, parent: str, child: str, delta: int) -> bool:
        """Move `child` up/down in task `parent`'s `children` list (saved as written)."""
        self._check_writable()
        owner = self.graph.nodes[parent]
        if not isinstance(owner, TaskNode) or child not in owner.children:
            raise EditRefused(f"{child} is not a child of {parent}")
        children = list(owner.children)
        i = children.index(child)
        j = i + delta
        if not 0 <= j < len(children):
            return False
        children[i], children[j] = children[j], children[i]
        self.edit(f"move {child} in {parent}.children",
                  lambda: self._replace(parent, children=children))
        return True

    def move_node(self, node_id: str, delta: int) -> None:
        """Move a node up/down in the model's node order. Note: saving keeps the tables in
        the order the file has them (tomlio merges, it does not reorder), so the editor
        offers moves only where the order is a value: verdicts and `children`."""
        self._check_writable()
        ids = list(self.graph.nodes)
        i = ids.index(node_id)
        j = i + delta
        if not 0 <= j < len(ids):
            return
        ids[i], ids[j] = ids[j], ids[i]

        def change() -> None:
            self.graph.nodes = {k: self.graph.nodes[k] for k in ids}

        self.edit(f"move {node_id}", change)

    def delete_node(self, node_id: str, *, detach: bool = False) -> None:
        """Delete a node. Refused while anything points at it unless `detach`, which
        removes it from every `children` list and empties every verdict `then` naming it
        (those verdicts then show a problem until given a score or a new target)."""
        self._check_writable()
        dependents = self.dependents(node_id)
        if dependents and not detach:
            raise EditRefused(
                f"'{node_id}' is used by {', '.join(dependents)}; remove those references "
                "first, or use 'delete and detach'"
            )

        def change() -> None:
            for pid in dependents:
                owner = self.graph.nodes[pid]
                if isinstance(owner, TaskNode):
                    self._replace(pid, children=[c for c in owner.children if c != node_id])
                if hasattr(owner, "verdicts"):
                    vs = [Verdict(verdict=v.verdict, score=v.score, then=None)
                          if v.then == node_id else v for v in owner.verdicts]
                    self._replace(pid, verdicts=vs)
                if isinstance(owner, CheckNode) and owner.evidence == node_id:
                    self._replace(pid, evidence=None)
            del self.graph.nodes[node_id]
            # a renamed node that is deleted: forget the rename, or a node later added
            # under that id would take over the deleted node's table and comments
            for origin in [k for k, v in self.renames.items() if v == node_id]:
                del self.renames[origin]
            if self.graph.metric.roots and node_id in self.graph.metric.roots:
                self.graph.metric = self.graph.metric.replace(
                    roots=[r for r in self.graph.metric.roots if r != node_id])
            if self.selected == node_id:
                self.selected = dependents[0] if dependents else next(iter(self.graph.nodes),
                                                                      None)

        self.edit(f"delete {node_id}", change)

    def dependents(self, node_id: str) -> list[str]:
        """Nodes that name `node_id` (children, verdict then, check evidence)."""
        out = list(self.graph.dependents(node_id))
        for nid, node in self.graph.nodes.items():
            if isinstance(node, CheckNode) and node.evidence == node_id and nid not in out:
                out.append(nid)
        return out

    def rename(self, old: str, new: str) -> None:
        """Rename a node and every reference to it (children, then, evidence, roots)."""
        self._check_writable()
        if old == new:
            return
        problem = self.check_new_id(new)
        if problem:
            raise EditRefused(problem)

        def swap(ids: Iterable[str]) -> list[str]:
            return [new if i == old else i for i in ids]

        def change() -> None:
            nodes: dict[str, Any] = {}
            for nid, node in self.graph.nodes.items():
                update: dict[str, Any] = {}
                if isinstance(node, TaskNode) and old in node.children:
                    update["children"] = swap(node.children)
                if hasattr(node, "verdicts") and any(v.then == old for v in node.verdicts):
                    update["verdicts"] = [
                        Verdict(verdict=v.verdict, score=v.score, then=new)
                        if v.then == old else v for v in node.verdicts]
                if isinstance(node, CheckNode) and node.evidence == old:
                    update["evidence"] = new
                if update or nid == old:
                    node = node.replace(**update)
                key = new if nid == old else nid
                node.id = key
                nodes[key] = node
            self.graph.nodes = nodes
            if self.graph.metric.roots:
                self.graph.metric = self.graph.metric.replace(
                    roots=swap(self.graph.metric.roots))
            # chain renames so tomlio maps the ORIGINAL key to the newest name
            origin = next((k for k, v in self.renames.items() if v == old), old)
            self.renames[origin] = new
            if self.selected == old:
                self.selected = new

        self.edit(f"rename {old} to {new}", change)

    # -- files ----------------------------------------------------------------------------
    def render(self) -> str:
        text = backend.render(self.graph, self.text, self.renames)
        return re.sub(r"(?<!\r)\n", "\r\n", text) if self.crlf else text

    def save(self, *, force: bool = False) -> str:
        """Write atomically, keeping comments; returns the text written.

        Raises `backend.ChangedOnDisk` when the file no longer holds what was read (another
        program changed it: `accept_disk_version` then save to overwrite it anyway), and
        `backend.ReadOnlyFile` for a read-only file unless `force`.
        """
        if self.read_only:
            raise EditRefused("this file did not parse; it is never overwritten by the editor")
        text = self.render()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.disk = backend.atomic_write(self.path, text, expected=self.disk, force=force)
        self.stamp = FileStamp.of(self.path)
        self.new_file = False
        selected = self.selected
        self._rebase_history_renames()
        self._apply_text(text.replace("\r\n", "\n") if self.crlf else text)
        if selected in self.graph.nodes:
            self.selected = selected
        self.renames = {}
        self._saved_version = self._version
        self._mark_saved()
        return text

    def _rebase_history_renames(self) -> None:
        """After a save the file holds the new ids: restate every undo/redo snapshot's
        renames relative to it, so undoing a saved rename is saved as a rename back (the
        table keeps its comments) rather than as a delete plus a new table."""
        saved_to_original = {new: old for old, new in self.renames.items()}
        for snap in (*self._undo, *self._redo):
            relative: dict[str, str] = {}
            for saved_id in self.graph.nodes:
                original = saved_to_original.get(saved_id, saved_id)
                theirs = snap.renames.get(original, original)
                if theirs != saved_id:
                    relative[saved_id] = theirs
            snap.renames = relative

    def changed_on_disk(self) -> bool:
        """True when the file's stamp differs from the one we read or wrote."""
        if self.new_file and not self.path.exists():
            return False
        now = FileStamp.of(self.path)
        if now == self.stamp:
            return False
        try:  # through dagtui.inputs: a file swapped for a FIFO must not freeze the editor
            text = backend.read_text(self.path)[0]
        except (OSError, ValueError):
            return True
        if text == self.text:
            self.stamp = now  # touched, not changed
            return False
        return True

    def note_disk_change(self) -> None:
        """The person saw the file change on disk and kept their edits: stop reporting this
        change, but a save still refuses to overwrite it silently (`save` raises
        `ChangedOnDisk`, and the editor asks: merge, overwrite or reload)."""
        self.stamp = FileStamp.of(self.path)

    def merge_disk(self) -> list[str]:
        """Take the other program's change to the file into the edits (`disk_merge`), so the
        next save writes both: the nodes only they changed come from the file, the ones
        edited here stay as edited, and the file's text (their comments) is the base saved
        into. Returns what conflicts (both changed it) and then changes nothing; also
        refused (a one-line reason) while a rename is unsaved or the file does not parse.
        """
        from dagtui.tui.disk_merge import merge

        if self.text is None:
            return ["the file did not exist when it was opened"]
        if self.renames:
            return ["a rename is not saved yet (save it first, or overwrite)"]
        try:
            text, disk, crlf = backend.read_text(self.path)
        except (OSError, ValueError) as exc:
            return [f"the file cannot be read: {exc}"]
        theirs = backend.load(text, file=str(self.path))
        base = backend.load(self.text, file=str(self.path))
        if not (theirs.parsed and theirs.graph and base.graph):
            return ["the file on disk does not parse"]
        merged = merge(base.graph, self.graph, theirs.graph)
        if merged.conflicts:
            return merged.conflicts
        metric = merged.metric
        assert metric is not None  # no conflict: one side's metric

        def change() -> None:
            self.graph.metric = metric
            self.graph.nodes = merged.nodes
            self.text, self.disk, self.crlf = text, disk, crlf
            self.positions = theirs.positions
            self.stamp = FileStamp.of(self.path)

        self.break_coalescing()
        self.edit("merge the change made on disk", change)
        self.break_coalescing()
        return []

    def accept_disk_version(self) -> None:
        """Forget the file's new contents' difference (keep our edits; saving overwrites)."""
        self.stamp = FileStamp.of(self.path)
        self.disk = backend.Stamp.of_path(self.path)


def environment_editor() -> str | None:
    """The user's editor command from $VISUAL or $EDITOR (None when neither is set)."""
    return os.environ.get("VISUAL") or os.environ.get("EDITOR") or None


#: tried in order when neither $VISUAL nor $EDITOR is set: nano first, as the one a newcomer
#: can leave without knowing the keys (its bottom line names them)
FALLBACK_EDITORS: tuple[str, ...] = ("nano", "vi")


def fallback_editor() -> str | None:
    """The path of an editor found on PATH for when the user named none, else None."""
    import shutil

    return next((found for name in FALLBACK_EDITORS if (found := shutil.which(name))), None)

"""The tree panel: the graph as an outline with live problem badges.

Rebuilding a Textual tree costs tens of milliseconds and loses the reader's place, so the
widget rebuilds only when the graph's *shape* changes (`outline.structure_key`) and
otherwise relabels in place the rows whose text changed. Cursor and collapsed rows are
kept across rebuilds by each row's stable key.
"""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import Any

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from dagtui.graph.model import Graph, TaskNode
from dagtui.kinds import icon
from dagtui.text import verdict_text
from dagtui.tui.calibration import badge, labelled, stale_nodes
from dagtui.tui.fit import Piece, fit_row, narrowest
from dagtui.tui.keys import TREE_KEYS, bindings
from dagtui.tui.outline import Item, ItemRef, build_outline, score_text, structure_key

Counts = dict[str, tuple[int, int]]


class GraphTree(Tree[ItemRef]):
    """Roots → nodes; verdicts as branches; shared nodes once in full, elsewhere as links."""

    BINDINGS = bindings(TREE_KEYS)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("graph", **kwargs)
        self.show_root = False
        self.guide_depth = 3
        self.auto_expand = False
        self._structure: tuple[object, ...] | None = None
        #: row keys by the node id they show (key[1]), for relabelling only changed nodes;
        #: None when rows were added or removed since it was built
        self._by_node: dict[object, list[tuple[object, ...]]] | None = None
        self._rows: dict[tuple[object, ...], TreeNode[ItemRef]] = {}
        #: each row's label in pieces (joined, its text in full), so a row wider than the
        #: panel can give up its detail (`render_label`, `dagtui.tui.fit.fit_row`)
        self._pieces: dict[tuple[object, ...], list[Piece]] = {}
        self._collapsed: set[tuple[object, ...]] = set()
        self._graph: Graph | None = None
        self._seen: dict[str | None, tuple[int, tuple[int, int]]] = {}
        self._restore_to: TreeNode[ItemRef] | None = None
        #: top-level entries: (subtree signature, row, keys of every row in the subtree)
        self._top: list[tuple[object, TreeNode[ItemRef], list[tuple[object, ...]]]] | None \
            = None
        self.metric_name = ""
        #: a saved calibration result (`dagtui calibrate`): each node's kappa as a badge
        self.calibration: dict[str, object] | None = None
        #: the labelled cases it was run on (read once) and, per calibrated node whose
        #: figures no longer hold, why (worked out again on each `show`)
        self._labelled: list[object] | None = None
        self.stale: dict[str, list[str]] = {}
        self._stale_of: object = None
        #: a narrow tree (`compact`): rows leave out the node's type (its icon and the
        #: form's title say it) and indent less, so an id and its label still fit
        self.compact = False

    # -- public API -----------------------------------------------------------------------
    def show(self, graph: Graph, counts: Counts, metric_name: str = "", *,
             read_only: bool = False) -> bool:
        """Bring the tree up to date; returns True when it had to rebuild."""
        self._graph = graph
        self.metric_name = metric_name
        if read_only:
            if self._structure != ("read-only",):
                self.clear()
                self._rows, self._pieces = {}, {}
                self._by_node = None
                self._top = None
                self.root.add_leaf(Text("✖ does not parse: see the file →", style="red"))
                self.root.add_leaf(Text("  fix it on disk, then ctrl+r", style="dim"))
                self._structure = ("read-only",)
            return False
        self._mark_stale(graph)
        key = structure_key(graph)
        if key != self._structure:
            self._rebuild(graph, counts)
            self._structure = key
            return True
        self._relabel(graph, counts)
        return False

    def set_calibration(self, data: dict[str, object] | None) -> None:
        """Show `data`'s per-node badges from the next `show` on (every row relabelled)."""
        self.calibration = data
        self._labelled = labelled(data)
        self._stale_of = None
        self._seen = {}

    def _mark_stale(self, graph: Graph) -> None:
        """Which calibrated nodes are stale in this version of the graph; a node whose mark
        changed is relabelled (an upstream label edit marks the node below it too)."""
        # nodes are replaced on edit, the graph object may stay: its nodes' identities tell
        stamp = (id(graph.metric), *map(id, graph.nodes.values()))
        if not self.calibration or self._stale_of == stamp:
            return
        self._stale_of = stamp
        now = stale_nodes(self.calibration, graph, self._labelled)
        for nid in (set(now) ^ set(self.stale)) | {n for n in now if now[n] != self.stale.get(n)}:
            self._seen.pop(nid, None)
        self.stale = now
    def set_compact(self, compact: bool) -> None:
        """Narrow rows from the next `show` on (every row relabelled)."""
        if compact != self.compact:
            self.compact = compact
            self.guide_depth = 2 if compact else 3
            self._seen = {}

    def force_rebuild(self) -> None:
        """Rebuild every row on the next `show` (after a reload or a save)."""
        self._structure = None
        self._top = None

    def select_ref(self, predicate_key: tuple[object, ...]) -> bool:
        """Put the cursor on the row with this key (now, and again once the tree has laid
        out its lines: a freshly rebuilt tree does not know row positions yet)."""
        row = self._rows.get(predicate_key)
        if row is None:
            return False
        parent = row.parent
        while parent is not None:
            parent.expand()
            parent = parent.parent
        if row.line >= 0:
            self.move_cursor(row)
            self.scroll_to_node(row, animate=False)
        self._restore_to = row
        self.call_after_refresh(self._restore_cursor, row)
        return True

    def select_node_id(self, node_id: str) -> bool:
        """Put the cursor on the row showing `node_id` in full."""
        for key, _row in self._rows.items():
            if key[0] == "node" and key[1] == node_id:
                return self.select_ref(key)
        return False

    def select_verdict(self, node_id: str, index: int) -> bool:
        for key in self._rows:
            if key[0] == "verdict" and key[1] == node_id and key[2] == index:
                return self.select_ref(key)
        return False

    @property
    def current(self) -> ItemRef | None:
        node = self.cursor_node
        return node.data if node is not None else None

    def row_label(self, key: tuple[object, ...]) -> str:
        """Plain text of a row (tests and the tmux check read this)."""
        pieces = self._pieces.get(key)
        return _joined(pieces).plain if pieces is not None else ""

    # -- actions --------------------------------------------------------------------------
    def action_collapse_or_parent(self) -> None:
        node = self.cursor_node
        if node is None:
            return
        if node.is_expanded and node.children:
            node.collapse()
        elif node.parent is not None and node.parent is not self.root:
            self.move_cursor(node.parent)

    def action_expand_row(self) -> None:
        node = self.cursor_node
        if node is not None and node.children:
            node.expand()

    def on_tree_node_collapsed(self, event: Tree.NodeCollapsed[ItemRef]) -> None:
        if event.node.data is not None:
            self._collapsed.add(event.node.data.key)

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[ItemRef]) -> None:
        if event.node.data is not None:
            self._collapsed.discard(event.node.data.key)

    # -- building -------------------------------------------------------------------------
    def _rebuild(self, graph: Graph, counts: Counts) -> None:
        """Bring the rows in line with a changed shape. Only the top-level entries whose
        subtree changed are replaced (a big graph is many entries: long chains continue
        as new entries), so an edit costs a few rows, not the whole tree."""
        self._by_node = None
        cursor_key = self.current.key if self.current is not None else None
        cursor_node_id = self.current.node if self.current is not None else None
        items = build_outline(graph)
        sigs = [_signature(item) for item in items]
        if self._top is None:
            self.clear()
            self._rows, self._pieces = {}, {}
            self._top = []
            for item, sig in zip(items, sigs, strict=True):
                keys: list[tuple[object, ...]] = []
                row = self._add(self.root, item, graph, counts, keys=keys)
                self._top.append((sig, row, keys))
            self.root.expand()
            # every label was just drawn from this graph and these counts: relabelling all
            # 2,600 rows of a 1,000-node graph again cost its first frame ~25 ms
            self._seen = self._stamps(graph, counts)
        else:
            old = self._top
            matcher = SequenceMatcher(a=[t[0] for t in old], b=sigs, autojunk=False)
            top: list[tuple[object, TreeNode[ItemRef], list[tuple[object, ...]]]] = []
            for tag, i1, i2, j1, j2 in matcher.get_opcodes():
                if tag == "equal":
                    top.extend(old[i1:i2])
                    continue
                for _sig, row, keys in old[i1:i2]:
                    row.remove()
                    for key in keys:
                        self._rows.pop(key, None)
                        self._pieces.pop(key, None)
                before = old[i2][1] if i2 < len(old) else None
                for item, sig in zip(items[j1:j2], sigs[j1:j2], strict=True):
                    keys = []
                    row = self._add(self.root, item, graph, counts, keys=keys, before=before)
                    top.append((sig, row, keys))
            self._top = top
            # labels can depend on what changed elsewhere (a link to a deleted node): recheck
            # all
            self._seen = {}
        self._relabel(graph, counts)
        target = self._rows.get(cursor_key) if cursor_key else None
        if target is None and cursor_node_id is not None:
            target = self._rows.get(("node", cursor_node_id, None, None, None))
            if target is None:
                target = next((r for k, r in self._rows.items()
                               if k[0] == "node" and k[1] == cursor_node_id), None)
        if target is not None:
            self._restore_to = target
            self.call_after_refresh(self._restore_cursor, target)

    def _restore_cursor(self, target: TreeNode[ItemRef]) -> None:
        # skipped when something chose a row explicitly in the meantime (select_ref)
        if self._restore_to is target and target in self._rows.values():
            if self.cursor_node is not target:
                self.move_cursor(target)
                self.scroll_to_node(target, animate=False)
            self._restore_to = None

    def _add(self, parent: TreeNode[ItemRef], item: Item, graph: Graph, counts: Counts, *,
             keys: list[tuple[object, ...]], before: TreeNode[ItemRef] | None = None,
             ) -> TreeNode[ItemRef]:
        key = item.ref.key
        pieces = self._pieces[key] = self._label(item.ref, graph, counts)
        text = _joined(pieces)
        if item.children:
            row = parent.add(text, item.ref, expand=key not in self._collapsed, before=before)
            for child in item.children:
                self._add(row, child, graph, counts, keys=keys)
        else:
            row = parent.add_leaf(text, item.ref, before=before)
        self._rows[key] = row
        keys.append(key)
        return row

    def _relabel(self, graph: Graph, counts: Counts) -> None:
        # nodes are replaced (never mutated) on edit, so identity + badge counts tell which
        # rows can have changed; only those are relabelled
        seen = self._stamps(graph, counts)
        changed = {nid for nid, stamp in seen.items() if self._seen.get(nid) != stamp}
        self._seen = seen
        if not changed:
            return
        if self._by_node is None:
            self._by_node = {}
            for key in self._rows:
                self._by_node.setdefault(key[1] if len(key) > 1 else None, []).append(key)
        for key in [k for nid in changed for k in self._by_node.get(nid, ())]:
            row = self._rows[key]
            if row.data is None:
                continue
            pieces = self._label(row.data, graph, counts)
            if pieces != self._pieces.get(key):
                self._pieces[key] = pieces
                row.set_label(_joined(pieces))

    @staticmethod
    def _stamps(graph: Graph, counts: Counts) -> dict[str | None, tuple[int, tuple[int, int]]]:
        """What each node's rows were labelled from: the node's identity and its badge
        counts (None: the metric)."""
        seen: dict[str | None, tuple[int, tuple[int, int]]] = {
            nid: (id(node), counts.get(nid, (0, 0))) for nid, node in graph.nodes.items()}
        seen[None] = (id(graph.metric), (0, 0))
        return seen

    # -- labels ---------------------------------------------------------------------------
    def render_label(self, node: TreeNode[ItemRef], base_style: Style, style: Style) -> Text:
        """The row as Textual draws it, fitted to the panel: a row wider than the room
        left of its indent gives up detail first (`dagtui.tui.fit.fit_row`), so the tree
        needs no sideways scrolling for a long label (the form shows it whole)."""
        text = super().render_label(node, base_style, style)
        room = self.scrollable_content_region.width - self._indent(node)
        pieces = self._pieces.get(node.data.key) if node.data is not None else None
        if room <= 0 or pieces is None or text.cell_len <= room:
            return text
        prefix = self._toggle_width(node)
        fitted = fit_row(pieces, room - prefix)
        fitted.stylize(style)
        return Text.assemble(text[:prefix], fitted)

    def get_label_width(self, node: TreeNode[ItemRef]) -> int:
        """The row's narrowest width (all detail given up), whatever the panel's width: the
        tree's scrolling width is its widest row of facts, so it scrolls sideways only when
        those do not fit. (Counting rows as fitted to the panel would tie that width to a
        panel not laid out yet when the tree first counts, and Textual keeps the scrollbar
        it showed then.)"""
        pieces = self._pieces.get(node.data.key) if node.data is not None else None
        if pieces is None:
            return super().get_label_width(node)
        return self._toggle_width(node) + narrowest(pieces)

    def _toggle_width(self, node: TreeNode[ItemRef]) -> int:
        """The cells of the fold mark Textual draws before a row that has children."""
        return cell_len(self.ICON_NODE) if node.allow_expand else 0

    def _indent(self, node: TreeNode[ItemRef]) -> int:
        """The cells of guides drawn left of `node`'s row (the root is not shown)."""
        depth, parent = 0, node.parent
        while parent is not None and parent is not self.root:
            depth, parent = depth + 1, parent.parent
        return depth * self.guide_depth

    def _label(self, ref: ItemRef, graph: Graph, counts: Counts) -> list[Piece]:
        if ref.kind == "metric":
            text = Text("⚙ ", style="bold")
            text.append("metric", style="bold")
            return [Piece(text), Piece(Text(f"  {graph.metric.name}", style="bold dim"), "cut")]
        if ref.kind == "group":
            return [Piece(Text("⊘ not reached from any root", style="italic dim"))]
        if ref.kind == "link":
            text = Text("┄ ", style="cyan")
            target = ref.target or "?"
            missing = target not in graph.nodes
            text.append(target, style="red underline" if missing else "")
            text.append("  ✖ no such node" if missing else " ↗", style="red" if missing else "cyan")
            return [Piece(text)]
        if ref.kind == "verdict":
            return self._verdict_label(ref, graph)
        nid = ref.node or ""
        node = graph.nodes.get(nid)
        if node is None:
            return [Piece(Text(nid))]
        # the id, its badge and its problem counts are facts and stay; the type (its icon
        # says it) goes first when the row is too wide, then the label is cut
        text = Text()
        if ref.via is not None and isinstance(graph.nodes.get(ref.via), TaskNode):
            text.append("┄ ", style="cyan")
        text.append(f"{icon(node.type)} ", style="bold")
        text.append(nid, style="bold")
        # right after the id: a narrow tree cuts the end of a row, and this is the figure
        mark = badge(self.calibration, nid, self.stale.get(nid)) if self.calibration else None
        if mark is not None:
            text.append(" ")
            text.append_text(mark)
        pieces = [Piece(text)]
        if not self.compact:
            pieces.append(Piece(Text(f"  {node.type}", style="dim"), "drop"))
        if node.label:
            pieces.append(Piece(Text(f"  {node.label}", style="dim italic"), "cut"))
        counted = Text()
        errors, warnings = counts.get(nid, (0, 0))
        if errors:
            counted.append(f"  ✖ {errors}", style="bold red")
        if warnings:
            counted.append(f"  ⚠ {warnings}", style="yellow")
        return [*pieces, Piece(counted)]

    def _verdict_label(self, ref: ItemRef, graph: Graph) -> list[Piece]:
        node = graph.nodes.get(ref.node or "")
        verdicts = getattr(node, "verdicts", None) or []
        if ref.index is None or ref.index >= len(verdicts):
            return [Piece(Text("?"))]
        v = verdicts[ref.index]
        # a long verdict is cut before where its path goes
        said = Piece(Text(verdict_text(v.verdict), style="magenta"), "cut", least=2)
        text = Text()
        text.append(" → ", style="magenta")
        if v.then is not None and v.score is not None:
            text.append(f"{v.then} and {score_text(v.score)}  ✖ both", style="red")
        elif v.then is not None:
            if v.then not in graph.nodes:
                text.append(v.then, style="red underline")
                text.append("  ✖ no such node", style="red")
            else:
                text.append(v.then, style="bold")
                if not ref.nested:
                    text.append(" ↗", style="cyan")
        elif v.score is not None:
            text.append(score_text(v.score), style="green")
        else:
            text.append("nothing  ✖ needs a score or a then", style="red")
        return [said, Piece(text)]


def _joined(pieces: list[Piece]) -> Text:
    """A row's label in full (what `row_label` reads and the panel shows when it fits)."""
    return Text.assemble(*(piece.text for piece in pieces))


def _signature(item: Item) -> tuple[object, ...]:
    """Identifies an outline subtree's shape (rows, nesting, which verdict holds a node)."""
    return (item.ref.key, item.ref.nested, tuple(_signature(c) for c in item.children))

"""Draw any layered DAG with box characters: the one drawer behind the editor's graph view
(`dagtui.graph.layout`) and the suite's rule view (`dagtui.suite.drawing`). No textual here.

The caller hands over boxes (`Node`: lines of text and styles) and arrows (`Edge`: a kind
and an optional label) and gets back a `Picture`: rows of text, `(row, start, end, style)`
spans and where each box landed. What an edge kind looks like (solid or dashed, its styles)
is an `EdgeLook`, so each view keeps its own colours without its own algorithm.

Layout is the usual layered (Sugiyama-style) recipe: longest-path layers from the roots
(back edges of a cycle are left out, so it always ends), a dummy point in every layer a long
edge crosses (so nothing is drawn through a box), a few barycenter sweeps to reduce
crossings, then x positions pulled toward what feeds each box. Each edge leaves its source
through a port of its own on the box's bottom border (so labels never collide), runs down
to a track row of its own in the channel between layers, across, and down into the target
with an arrow; edges into one target share its arrow.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

U, D, L, R = 1, 2, 4, 8
GLYPHS = {
    U | D: "│", L | R: "─", D | R: "┌", D | L: "┐", U | R: "└", U | L: "┘",
    U | D | R: "├", U | D | L: "┤", L | R | D: "┬", L | R | U: "┴", U | D | L | R: "┼",
    U: "│", D: "│", L: "─", R: "─",
}
DASHED = {U | D: "┆", L | R: "┄", U: "┆", D: "┆", L: "┄", R: "┄"}
GAP = 3  # columns between neighbouring boxes of a layer


@dataclass
class Node:
    """One box: `lines` of text, the `style` of its border (and of blank rows), and
    optionally one style per line (the border style when not given)."""

    key: str
    lines: list[str]
    style: str = ""
    line_styles: list[str] | None = None


@dataclass
class Edge:
    """An arrow from `source` down to `target`; `kind` picks its `EdgeLook`, and a `label`
    is written beside the edge just under the source's box."""

    source: str
    target: str
    kind: str = ""
    label: str = ""


@dataclass(frozen=True)
class EdgeLook:
    """How one kind of edge is drawn. A cell where edges of several kinds meet is always
    solid and gets the picture's `mixed_style`."""

    line: str = ""
    arrow: str = ""
    label: str = ""
    dashed: bool = False


@dataclass
class Picture:
    """Rows of text, style spans `(row, start, end, style)` and each box `(x, y, w, h)`."""

    rows: list[str]
    spans: list[tuple[int, int, int, str]] = field(default_factory=list)
    boxes: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)

    @property
    def width(self) -> int:
        return max((len(r) for r in self.rows), default=0)

    def text(self) -> str:
        return "\n".join(r.rstrip() for r in self.rows)

    def box_at(self, x: int, y: int) -> str | None:
        """The key of the box covering cell (x, y), for mouse clicks."""
        for key, (bx, by, bw, bh) in self.boxes.items():
            if bx <= x < bx + bw and by <= y < by + bh:
                return key
        return None


def neighbourhood(start: str, down: dict[str, list[str]]) -> set[str]:
    """`start` with everything reachable from it along `down` (key -> targets) and
    everything from which it is reachable: what a focus view keeps."""
    up: dict[str, list[str]] = defaultdict(list)
    for key, targets in down.items():
        for t in targets:
            up[t].append(key)
    keep = {start}
    for adjacency in (down, up):
        stack = [start]
        while stack:
            for nxt in adjacency.get(stack.pop(), []):
                if nxt not in keep:
                    keep.add(nxt)
                    stack.append(nxt)
    return keep


@dataclass
class _Box:
    key: str
    lines: list[str]
    width: int
    height: int
    dummy: bool = False
    x: int = 0
    y: int = 0

    @property
    def center(self) -> int:
        return self.x + self.width // 2


def layers(keys: list[str], edges: list[Edge]) -> dict[str, int]:
    """Longest-path layering; back edges of cycles are ignored so it always terminates."""
    out: dict[str, list[str]] = defaultdict(list)
    indeg: dict[str, int] = {n: 0 for n in keys}
    for e in edges:
        if e.source in indeg and e.target in indeg:
            out[e.source].append(e.target)
    # drop back edges (DFS) so the rest is acyclic
    state: dict[str, int] = {}
    acyclic: dict[str, list[str]] = defaultdict(list)
    for start in keys:
        if start in state:
            continue
        stack = [(start, iter(out[start]))]
        state[start] = 1
        while stack:
            nid, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[nid] = 2
                stack.pop()
                continue
            if state.get(nxt) == 1:
                continue  # back edge
            acyclic[nid].append(nxt)
            if nxt not in state:
                state[nxt] = 1
                stack.append((nxt, iter(out[nxt])))
    for targets in acyclic.values():
        for t in targets:
            indeg[t] += 1
    layer = {n: 0 for n in keys}
    queue = [n for n in keys if indeg[n] == 0]
    head = 0
    while head < len(queue):
        nid = queue[head]
        head += 1
        for t in acyclic[nid]:
            layer[t] = max(layer[t], layer[nid] + 1)
            indeg[t] -= 1
            if indeg[t] == 0:
                queue.append(t)
    return layer


def draw_dag(nodes: list[Node], edges: list[Edge], looks: dict[str, EdgeLook], *,
             even_heights: bool = False, mixed_style: str = "white") -> Picture:
    """Lay out and draw `nodes` (in this order inside a layer before the sweeps) joined by
    `edges`; edges to or from unknown keys and back edges of cycles are left out.

    `looks` says how each edge kind is drawn (a kind it does not name: solid, unstyled);
    `mixed_style` colours the cells where edges of several kinds meet. `even_heights`
    stretches every box to its layer's tallest, so a row of boxes lines up top and bottom;
    otherwise each box is as tall as its lines.
    """
    if not nodes:
        return Picture([])
    known = {n.key for n in nodes}
    edges = [e for e in edges if e.source in known and e.target in known]
    layer = layers([n.key for n in nodes], edges)

    boxes: dict[str, _Box] = {}
    for node in nodes:
        boxes[node.key] = _Box(node.key, node.lines,
                               max((len(s) for s in node.lines), default=0) + 4,
                               len(node.lines) + 2)
    # each edge becomes a chain of segments between adjacent layers
    segments: list[tuple[str, str, int]] = []  # (upper, lower, edge index)
    for i, e in enumerate(edges):
        a, b = layer[e.source], layer[e.target]
        if b <= a:  # back edge of a cycle: drawn upward it would be unreadable
            continue
        prev = e.source
        for k in range(a + 1, b):
            dummy = f"\0{i}:{k}"
            boxes[dummy] = _Box(dummy, [], 1, 1, dummy=True)
            layer[dummy] = k
            segments.append((prev, dummy, i))
            prev = dummy
        segments.append((prev, e.target, i))
    # widen boxes so each outgoing labelled edge has room for its label under the box
    outgoing: dict[str, list[int]] = defaultdict(list)
    for i, e in enumerate(edges):
        if layer[e.target] > layer[e.source]:
            outgoing[e.source].append(i)
    for key, idxs in outgoing.items():
        need = sum(max(len(edges[i].label), 1) + 2 for i in idxs) + 1
        boxes[key].width = max(boxes[key].width, need)

    nlayers = max(layer.values()) + 1
    rows: list[list[str]] = [[] for _ in range(nlayers)]
    for node in nodes:
        rows[layer[node.key]].append(node.key)
    for key, box in boxes.items():
        if box.dummy:
            rows[layer[key]].append(key)
    seg_of = {(i, layer[upper]): (upper, lower) for upper, lower, i in segments}
    _order(rows, segments)

    edge_port = _place_columns(rows, boxes, segments, outgoing, edges, seg_of)

    # vertical placement: layer bands and channels sized by the tracks they need
    layer_h = [max((boxes[n].height for n in row), default=1) for row in rows]
    channel_tracks: list[list[tuple[int, int, int]]] = [[] for _ in range(nlayers)]
    for upper, lower, i in segments:
        xs = edge_port[i] if not boxes[upper].dummy else boxes[upper].x
        xt = boxes[lower].center if not boxes[lower].dummy else boxes[lower].x
        channel_tracks[layer[upper]].append((xs, xt, i))
    assigned = [_tracks(segs) for segs in channel_tracks]
    y = 0
    layer_y: list[int] = []
    channel_y: list[int] = []
    for k in range(nlayers):
        layer_y.append(y)
        y += layer_h[k]
        channel_y.append(y)
        ntracks = max((t for *_, t in assigned[k]), default=-1) + 1
        y += 2 + ntracks  # label row, tracks, arrow row
    for k, row in enumerate(rows):
        for n in row:
            boxes[n].y = layer_y[k]
            if even_heights and not boxes[n].dummy:
                boxes[n].height = layer_h[k]

    canvas = _Canvas(max(b.x + b.width for b in boxes.values()) + 2, y, looks, mixed_style)
    by_key = {node.key: node for node in nodes}
    for key, box in boxes.items():
        if box.dummy:
            kind = edges[int(key[1:].split(":")[0])].kind
            for yy in range(box.y, box.y + layer_h[layer[key]]):
                canvas.line(box.x, yy, U | D, kind)
        else:
            canvas.box(box, by_key[key])
    for k, segs in enumerate(assigned):
        top = channel_y[k]
        ntracks = max((t for *_, t in segs), default=-1) + 1
        arrow_row = top + 1 + ntracks
        for xs, xt, i, t in segs:
            e = edges[i]
            look = looks.get(e.kind, EdgeLook())
            upper, lower = seg_of[(i, k)]
            start = boxes[upper].y + boxes[upper].height if not boxes[upper].dummy else top
            if not boxes[upper].dummy:
                canvas.put(xs, start - 1, "┬", canvas.style_at(xs, start - 1))
                if e.label:
                    canvas.text(xs + 1, top, e.label, look.label)
            track = top + 1 + t if t >= 0 else arrow_row
            canvas.vline(xs, start, track, e.kind, down=t < 0)
            if t >= 0:
                canvas.hline(track, xs, xt, e.kind)
                canvas.vline(xt, track, arrow_row, e.kind, up=False)
            if boxes[lower].dummy:
                canvas.vline(xt, arrow_row, boxes[lower].y, e.kind)
            else:
                canvas.put(xt, arrow_row, "▼", look.arrow)
    return canvas.picture({n: (b.x, b.y, b.width, b.height) for n, b in boxes.items()
                           if not b.dummy})


def _order(rows: list[list[str]], segments: list[tuple[str, str, int]]) -> None:
    """Crossing reduction: barycenter sweeps down and up, rows sorted in place."""
    ups: dict[str, list[str]] = defaultdict(list)
    downs: dict[str, list[str]] = defaultdict(list)
    for upper, lower, _ in segments:
        downs[upper].append(lower)
        ups[lower].append(upper)
    for _ in range(4):
        for k in range(1, len(rows)):
            pos = _position(rows[k - 1])
            here = _position(rows[k])
            rows[k].sort(key=lambda n: _bary(ups[n], pos, here[n]))
        for k in range(len(rows) - 2, -1, -1):
            pos = _position(rows[k + 1])
            here = _position(rows[k])
            rows[k].sort(key=lambda n: _bary(downs[n], pos, here[n]))


def _position(row: list[str]) -> dict[str, int]:
    return {n: i for i, n in enumerate(row)}


def _bary(neighbours: list[str], pos: dict[str, int], fallback: int) -> float:
    known = [pos[n] for n in neighbours if n in pos]
    return sum(known) / len(known) if known else float(fallback)


def _place_columns(rows: list[list[str]], boxes: dict[str, _Box],
                   segments: list[tuple[str, str, int]], outgoing: dict[str, list[int]],
                   edges: list[Edge], seg_of: dict[tuple[int, int], tuple[str, str]],
                   ) -> dict[int, int]:
    """x positions, top-down: each box centred under the ports that feed it, never over its
    left neighbour; then each edge gets a port on its source's bottom border, ordered like
    the targets below (so a fan-out does not cross itself). Returns edge index -> port x."""
    edge_port: dict[int, int] = {}
    seg_into: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for upper, lower, i in segments:
        seg_into[lower].append((upper, i))
    for k, row in enumerate(rows):
        limit: int | None = None
        for n in row:
            box = boxes[n]
            feeds = [edge_port[i] if not boxes[u].dummy else boxes[u].x
                     for u, i in seg_into[n] if i in edge_port or boxes[u].dummy]
            want = (sum(feeds) // len(feeds) - box.width // 2) if feeds else (limit or 0)
            if box.dummy and feeds:
                want = feeds[0]
            box.x = want if limit is None else max(limit, want)
            limit = box.x + box.width + GAP
        if k + 1 < len(rows):
            below = _position(rows[k + 1])
            for n in row:
                if n not in outgoing:
                    continue
                idxs = sorted(outgoing[n], key=lambda i: below[seg_of[(i, k)][1]])
                span = sum(max(len(edges[i].label), 1) + 2 for i in idxs)
                px = boxes[n].x + max(1, (boxes[n].width - span) // 2)
                for i in idxs:
                    edge_port[i] = px + 1
                    px += max(len(edges[i].label), 1) + 2
    shift = -min(b.x for b in boxes.values())
    for b in boxes.values():
        b.x += shift
    return {i: x + shift for i, x in edge_port.items()}


def _tracks(segs: list[tuple[int, int, int]]) -> list[tuple[int, int, int, int]]:
    """Give each bent segment `(xs, xt, edge)` of one channel a track (-1: straight down).

    An edge turning right runs *below* every overlapping right-turning edge that starts
    further right (and mirrored for left turns), which is the order in which a fan-out of
    edges never crosses itself; edges that do not overlap share a track."""
    straight = [(xs, xt, i, -1) for xs, xt, i in segs if xs == xt]
    rights = sorted((s for s in segs if s[1] > s[0]), key=lambda s: -s[0])
    lefts = sorted((s for s in segs if s[1] < s[0]), key=lambda s: s[0])
    placed: list[tuple[int, int, int]] = []  # (lo, hi, track)
    out = list(straight)
    for xs, xt, i in rights + lefts:
        lo, hi = min(xs, xt), max(xs, xt)
        above = [t for a, b, t in placed if not (b < lo - 1 or a > hi + 1)]
        t = max(above) + 1 if above else 0
        placed.append((lo, hi, t))
        out.append((xs, xt, i, t))
    return out


class _Canvas:
    """A sparse character grid: written characters win over line masks, and line masks
    of the cells edges pass through are merged into one box-drawing glyph each."""

    def __init__(self, width: int, height: int, looks: dict[str, EdgeLook],
                 mixed_style: str) -> None:
        self.w, self.h = width, height
        self.looks, self.mixed_style = looks, mixed_style
        self.mask: dict[tuple[int, int], int] = {}
        self.kind: dict[tuple[int, int], str | None] = {}  # None: edges of several kinds
        self._glyphs: dict[tuple[int, str | None], tuple[str, str]] = {}
        self.chars: dict[tuple[int, int], str] = {}
        self.styles: dict[tuple[int, int], str] = {}

    def style_at(self, x: int, y: int) -> str:
        return self.styles.get((x, y), "")

    def put(self, x: int, y: int, ch: str, style: str = "") -> None:
        if 0 <= x < self.w and 0 <= y < self.h:
            self.chars[(x, y)] = ch
            if style:
                self.styles[(x, y)] = style

    def text(self, x: int, y: int, s: str, style: str = "") -> None:
        for j, ch in enumerate(s):
            if (x + j, y) in self.chars or (x + j, y) in self.mask:
                break  # never write over a line or a box
            self.put(x + j, y, ch, style)

    def line(self, x: int, y: int, bits: int, kind: str) -> None:
        if (x, y) in self.chars:
            return
        self.mask[(x, y)] = self.mask.get((x, y), 0) | bits
        if self.kind.get((x, y), kind) != kind:
            self.kind[(x, y)] = None
        elif (x, y) not in self.kind:
            self.kind[(x, y)] = kind

    def vline(self, x: int, y0: int, y1: int, kind: str, *, up: bool = True,
              down: bool = True) -> None:
        """Vertical run y0..y1; `up`/`down` say whether it continues beyond its ends."""
        for y in range(y0, y1 + 1):
            bits = (U if y > y0 or up else 0) | (D if y < y1 or down else 0)
            self.line(x, y, bits, kind)

    def hline(self, y: int, x0: int, x1: int, kind: str) -> None:
        lo, hi = min(x0, x1), max(x0, x1)
        for x in range(lo, hi + 1):
            bits = (L if x > lo else 0) | (R if x < hi else 0)
            self.line(x, y, bits, kind)

    def box(self, box: _Box, node: Node) -> None:
        """Border in the node's style, each line of text (space-padded to the border) in
        its line style. Boxes never overlap and always lie inside the canvas."""
        x, y, w, style = box.x, box.y, box.width, node.style
        line_styles = node.line_styles or []
        inner = w - 2
        rows = [("┌" + "─" * inner + "┐", style, style)]
        for j in range(box.height - 2):
            line = box.lines[j] if j < len(box.lines) else ""
            text_style = line_styles[j] if j < len(line_styles) else style
            rows.append(("│" + f" {line}".ljust(inner) + "│", style, text_style))
        rows.append(("└" + "─" * inner + "┘", style, style))
        chars, styles = self.chars, self.styles
        for j, (text, border, fill) in enumerate(rows):
            yy = y + j
            for i, ch in enumerate(text):
                chars[(x + i, yy)] = ch
                cell_style = border if i == 0 or i == w - 1 else fill
                if cell_style:
                    styles[(x + i, yy)] = cell_style

    def _line_cell(self, bits: int, kind: str | None) -> tuple[str, str]:
        """Glyph and style of a line cell: dashed and styled by its kind's look when one
        kind of edge passes there, solid in the mixed style when several do."""
        cached = self._glyphs.get((bits, kind))
        if cached is None:
            look = self.looks.get(kind) if kind is not None else None
            if look is None:
                cached = GLYPHS.get(bits, "┼"), self.mixed_style if kind is None else ""
            else:
                ch = (DASHED.get(bits) if look.dashed else None) or GLYPHS.get(bits, "┼")
                cached = ch, look.line
            self._glyphs[(bits, kind)] = cached
        return cached

    def picture(self, boxes: dict[str, tuple[int, int, int, int]]) -> Picture:
        # only the written cells are visited (a wide picture is mostly blank), and spans
        # come from the styled ones alone
        chars: dict[int, dict[int, str]] = defaultdict(dict)
        styles: dict[int, dict[int, str]] = defaultdict(dict)
        for (x, y), bits in self.mask.items():
            if bits and (x, y) not in self.chars and 0 <= x < self.w and 0 <= y < self.h:
                ch, style = self._line_cell(bits, self.kind[(x, y)])
                chars[y][x] = ch
                if style:
                    styles[y][x] = style
        for (x, y), ch in self.chars.items():
            chars[y][x] = ch
        for (x, y), style in self.styles.items():
            styles[y][x] = style
        rows: list[str] = []
        spans: list[tuple[int, int, int, str]] = []
        blank = " " * self.w
        for y in range(self.h):
            row = chars.get(y)
            if not row:
                rows.append(blank)
                continue
            line = [" "] * self.w
            for x, ch in row.items():
                line[x] = ch
            rows.append("".join(line))
            run_style, run_start, prev = "", 0, -2
            for x, style in sorted(styles.get(y, {}).items()):
                if style != run_style or x != prev + 1:  # a run: one style, no gap
                    if run_style:
                        spans.append((y, run_start, prev + 1, run_style))
                    run_style, run_start = style, x
                prev = x
            if run_style:
                spans.append((y, run_start, prev + 1, run_style))
        return Picture(rows, spans, boxes)

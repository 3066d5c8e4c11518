"""Draw a graph as a layered picture with box characters (no textual; used by the editor's
graph view and usable from scripts).

Layout is the usual layered (Sugiyama-style) recipe: longest-path layers from the roots,
dummy points on edges that span several layers, a few barycenter sweeps to reduce crossings,
then x positions pulled toward parents. Drawing is on a character grid: each edge leaves its
source through its own port on the box's bottom border (so verdict labels never collide),
runs down to a track row of its own in the channel between layers, across, and down into the
target with an arrow. Control edges (verdict → then) are solid; data edges (task → children)
are dashed where they run alone. Leaf verdicts (`→ score N`) are listed inside the box.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from .model import Graph, TaskNode

U, D, L, R = 1, 2, 4, 8
GLYPHS = {
    U | D: "│", L | R: "─", D | R: "┌", D | L: "┐", U | R: "└", U | L: "┘",
    U | D | R: "├", U | D | L: "┤", L | R | D: "┬", L | R | U: "┴", U | D | L | R: "┼",
    U: "│", D: "│", L: "─", R: "─",
}
DASHED = {U | D: "┆", L | R: "┄", U: "┆", D: "┆", L: "┄", R: "┄"}
LEGEND = "── verdict → then (control)   ┄┄ task → children (data)   x → N: leaf score"
ICONS = {"task": "◆", "binary": "◇", "non_binary": "◈", "check": "☑", "geval": "★"}
GAP = 3
MAX_LINE = 26


@dataclass
class Edge:
    source: str
    target: str
    kind: str  # "data" | "control"
    label: str = ""


@dataclass
class Box:
    node: str
    lines: list[str]
    width: int
    height: int
    dummy: bool = False
    x: int = 0
    y: int = 0
    ports: dict[int, int] = field(default_factory=dict)  # edge index -> x

    @property
    def center(self) -> int:
        return self.x + self.width // 2


@dataclass
class Drawing:
    """The picture: rows of text plus (row, start, end, style) spans and box places."""

    rows: list[str]
    spans: list[tuple[int, int, int, str]]
    boxes: dict[str, tuple[int, int, int, int]]

    @property
    def width(self) -> int:
        return max((len(r) for r in self.rows), default=0)

    def text(self) -> str:
        return "\n".join(r.rstrip() for r in self.rows)


def neighbourhood(graph: Graph, node_id: str) -> set[str]:
    """`node_id` with everything upstream and downstream of it."""
    down: dict[str, list[str]] = {nid: [t for t in n.targets() if t in graph.nodes]
                                  for nid, n in graph.nodes.items()}
    up: dict[str, list[str]] = defaultdict(list)
    for nid, targets in down.items():
        for t in targets:
            up[t].append(nid)
    keep = {node_id}
    for adjacency in (down, up):
        stack = [node_id]
        while stack:
            for nxt in adjacency.get(stack.pop(), []):
                if nxt not in keep:
                    keep.add(nxt)
                    stack.append(nxt)
    return keep


def edges_of(graph: Graph, keep: set[str]) -> list[Edge]:
    edges: list[Edge] = []
    for nid, node in graph.nodes.items():
        if nid not in keep:
            continue
        if isinstance(node, TaskNode):
            edges += [Edge(nid, c, "data") for c in node.children if c in keep]
        labels: dict[str, list[str]] = {}
        for v in getattr(node, "verdicts", []) or []:
            if v.then is not None and v.then in keep:
                labels.setdefault(v.then, []).append(_short(_verdict(v.verdict), 14))
        edges += [Edge(nid, t, "control", "/".join(ls)) for t, ls in labels.items()]
    return edges


def _verdict(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _box_lines(graph: Graph, nid: str, badges: dict[str, tuple[int, int]]) -> list[str]:
    node = graph.nodes[nid]
    lines = [f"{ICONS.get(node.type, '•')} {_short(nid, MAX_LINE)}"]
    kind = node.type + (f"/{node.check}" if node.type == "check" else "")  # type: ignore[attr-defined]
    errors, warnings = badges.get(nid, (0, 0))
    if errors:
        kind += f"  ✖{errors}"
    if warnings:
        kind += f"  ⚠{warnings}"
    lines.append(kind)
    for v in getattr(node, "verdicts", []) or []:
        if v.then is None and v.score is not None:
            score = int(v.score) if float(v.score).is_integer() else v.score
            lines.append(f"{_short(_verdict(v.verdict), MAX_LINE - 6)} → {score}")
    return lines


def _layers(nodes: list[str], edges: list[Edge]) -> dict[str, int]:
    """Longest-path layering; back edges of cycles are ignored so it always terminates."""
    out: dict[str, list[str]] = defaultdict(list)
    indeg: dict[str, int] = {n: 0 for n in nodes}
    for e in edges:
        out[e.source].append(e.target)
    # drop back edges (DFS) so the rest is acyclic
    state: dict[str, int] = {}
    acyclic: dict[str, list[str]] = defaultdict(list)
    for start in nodes:
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
    for _src, targets in acyclic.items():
        for t in targets:
            indeg[t] += 1
    layer = {n: 0 for n in nodes}
    queue = [n for n in nodes if indeg[n] == 0]
    while queue:
        nid = queue.pop(0)
        for t in acyclic[nid]:
            layer[t] = max(layer[t], layer[nid] + 1)
            indeg[t] -= 1
            if indeg[t] == 0:
                queue.append(t)
    return layer


def draw(graph: Graph, focus: str | None = None, *,
         badges: dict[str, tuple[int, int]] | None = None, selected: str | None = None) -> Drawing:
    """Lay out and draw `graph` (only `focus`'s neighbourhood when given)."""
    badges = badges or {}
    keep = neighbourhood(graph, focus) if focus in graph.nodes else set(graph.nodes)
    nodes = [n for n in graph.nodes if n in keep]
    if not nodes:
        return Drawing(["(no nodes)"], [], {})
    edges = edges_of(graph, keep)
    layer = _layers(nodes, edges)

    # boxes and dummy points
    boxes: dict[str, Box] = {}
    for nid in nodes:
        lines = _box_lines(graph, nid, badges)
        boxes[nid] = Box(nid, lines, max(len(s) for s in lines) + 4, len(lines) + 2)
    # each edge becomes a chain of segments between adjacent layers
    segments: list[tuple[str, str, int]] = []  # (upper, lower, edge index)
    for i, e in enumerate(edges):
        a, b = layer[e.source], layer[e.target]
        if b <= a:  # back edge of a cycle: draw it as a short edge upward is unreadable;
            continue  # the validator reports the cycle, the tree shows it
        prev = e.source
        for k in range(a + 1, b):
            dummy = f"\0{i}:{k}"
            boxes[dummy] = Box(dummy, [], 1, 1, dummy=True)
            layer[dummy] = k
            segments.append((prev, dummy, i))
            prev = dummy
        segments.append((prev, e.target, i))
    # widen boxes so each outgoing labelled edge has room for its label under the box
    outgoing: dict[str, list[int]] = defaultdict(list)
    for i, e in enumerate(edges):
        if layer[e.target] > layer[e.source]:
            outgoing[e.source].append(i)
    for nid, idxs in outgoing.items():
        need = sum(max(len(edges[i].label), 1) + 2 for i in idxs) + 1
        boxes[nid].width = max(boxes[nid].width, need)

    nlayers = max(layer.values()) + 1
    rows: list[list[str]] = [[] for _ in range(nlayers)]
    for nid in nodes:
        rows[layer[nid]].append(nid)
    for nid, box in boxes.items():
        if box.dummy:
            rows[layer[nid]].append(nid)
    seg_of = {(i, layer[upper]): (upper, lower) for upper, lower, i in segments}
    ups: dict[str, list[str]] = defaultdict(list)
    downs: dict[str, list[str]] = defaultdict(list)
    for upper, lower, _ in segments:
        downs[upper].append(lower)
        ups[lower].append(upper)

    # crossing reduction: barycenter sweeps
    def position(row: list[str]) -> dict[str, int]:
        return {n: i for i, n in enumerate(row)}

    for _ in range(4):
        for k in range(1, nlayers):
            pos = position(rows[k - 1])
            here = position(rows[k])
            rows[k].sort(key=lambda n: _bary(ups[n], pos, here[n]))
        for k in range(nlayers - 2, -1, -1):
            pos = position(rows[k + 1])
            here = position(rows[k])
            rows[k].sort(key=lambda n: _bary(downs[n], pos, here[n]))

    # x positions, top-down: each box centred under the ports that feed it; then each
    # edge gets a port on its source's bottom border, ordered like the targets below
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
        if k + 1 < nlayers:
            below = position(rows[k + 1])
            for n in row:
                if n not in outgoing:
                    continue
                idxs = sorted(outgoing[n], key=lambda i, n=n: below[seg_of[(i, k)][1]])
                span = sum(max(len(edges[i].label), 1) + 2 for i in idxs)
                px = boxes[n].x + max(1, (boxes[n].width - span) // 2)
                for i in idxs:
                    edge_port[i] = px + 1
                    px += max(len(edges[i].label), 1) + 2

    shift = -min(b.x for b in boxes.values())
    for b in boxes.values():
        b.x += shift
    edge_port = {i: x + shift for i, x in edge_port.items()}

    # vertical placement: layer bands and channels sized by the tracks they need
    layer_h = [max((boxes[n].height for n in row), default=1) for row in rows]
    channel_tracks: list[list[tuple[int, int, int, int]]] = [[] for _ in range(nlayers)]
    for upper, lower, i in segments:
        k = layer[upper]
        xs = edge_port[i] if not boxes[upper].dummy else boxes[upper].x
        xt = boxes[lower].center if not boxes[lower].dummy else boxes[lower].x
        channel_tracks[k].append((xs, xt, i, 0))
    # Tracks: an edge turning right runs *below* every overlapping right-turning edge that
    # starts further right (and mirrored for left turns), which is the order in which a
    # fan-out of edges never crosses itself; edges that do not overlap share a track.
    assigned: list[list[tuple[int, int, int, int]]] = []
    for segs in channel_tracks:
        straight = [(xs, xt, i, -1) for xs, xt, i, _ in segs if xs == xt]
        rights = sorted((s for s in segs if s[1] > s[0]), key=lambda s: -s[0])
        lefts = sorted((s for s in segs if s[1] < s[0]), key=lambda s: s[0])
        placed: list[tuple[int, int, int]] = []  # (lo, hi, track)
        out = list(straight)
        for xs, xt, i, _ in rights + lefts:
            lo, hi = min(xs, xt), max(xs, xt)
            above = [t for a, b, t in placed if not (b < lo - 1 or a > hi + 1)]
            t = max(above) + 1 if above else 0
            placed.append((lo, hi, t))
            out.append((xs, xt, i, t))
        assigned.append(out)
    y = 0
    layer_y: list[int] = []
    channel_y: list[int] = []
    for k in range(nlayers):
        layer_y.append(y)
        y += layer_h[k]
        channel_y.append(y)
        ntracks = max((t for *_, t in assigned[k]), default=-1) + 1
        y += 2 + ntracks  # label row, tracks, arrow row
    height = y
    for k, row in enumerate(rows):
        for n in row:
            boxes[n].y = layer_y[k]

    width = max(b.x + b.width for b in boxes.values()) + 2
    canvas = _Canvas(width, height)

    # boxes
    for nid, box in boxes.items():
        if box.dummy:
            for yy in range(box.y, box.y + layer_h[layer[nid]]):
                canvas.line(box.x, yy, U | D, edges[_edge_of(nid)].kind)
            continue
        style = "reverse bold" if nid == selected else _box_style(graph, nid, badges)
        canvas.box(box, style)
    # edges
    for k, segs in enumerate(assigned):
        top = channel_y[k]
        ntracks = max((t for *_, t in segs), default=-1) + 1
        arrow_row = top + 1 + ntracks
        for xs, xt, i, t in segs:
            e = edges[i]
            upper, lower = seg_of[(i, k)]
            start = boxes[upper].y + boxes[upper].height if not boxes[upper].dummy else top
            if not boxes[upper].dummy:
                canvas.put(xs, start - 1, "┬", canvas.style_at(xs, start - 1))
                if e.label:
                    canvas.text(xs + 1, top, e.label, "magenta")
            track = top + 1 + t if t >= 0 else arrow_row
            canvas.vline(xs, start, track, e.kind, down=t < 0)
            if t >= 0:
                canvas.hline(track, xs, xt, e.kind)
                canvas.vline(xt, track, arrow_row, e.kind, up=False)
            if boxes[lower].dummy:
                canvas.vline(xt, arrow_row, boxes[lower].y, e.kind)
            else:
                canvas.put(xt, arrow_row, "▼", "cyan" if e.kind == "data" else "magenta")
    return canvas.drawing({n: (b.x, b.y, b.width, b.height) for n, b in boxes.items()
                           if not b.dummy})


def _edge_of(dummy: str) -> int:
    return int(dummy[1:].split(":")[0])


def _bary(neighbours: list[str], pos: dict[str, int], fallback: int) -> float:
    known = [pos[n] for n in neighbours if n in pos]
    return sum(known) / len(known) if known else float(fallback)


def _box_style(graph: Graph, nid: str, badges: dict[str, tuple[int, int]]) -> str:
    errors, warnings = badges.get(nid, (0, 0))
    if errors:
        return "red"
    if warnings:
        return "yellow"
    return "bold" if isinstance(graph.nodes[nid], TaskNode) else ""


class _Canvas:
    def __init__(self, width: int, height: int) -> None:
        self.w, self.h = width, height
        self.mask: dict[tuple[int, int], int] = {}
        self.kind: dict[tuple[int, int], set[str]] = {}
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
        self.kind.setdefault((x, y), set()).add(kind)

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

    def box(self, box: Box, style: str) -> None:
        x, y, w = box.x, box.y, box.width
        self.put(x, y, "┌", style)
        self.put(x + w - 1, y, "┐", style)
        self.put(x, y + box.height - 1, "└", style)
        self.put(x + w - 1, y + box.height - 1, "┘", style)
        for i in range(1, w - 1):
            self.put(x + i, y, "─", style)
            self.put(x + i, y + box.height - 1, "─", style)
        for j, line in enumerate(box.lines):
            yy = y + 1 + j
            self.put(x, yy, "│", style)
            self.put(x + w - 1, yy, "│", style)
            padded = f" {line}".ljust(w - 2)
            for i, ch in enumerate(padded):
                text_style = style if j == 0 or style.startswith("reverse") else (
                    "dim" if j == 1 else "green")
                self.put(x + 1 + i, yy, ch, text_style)

    def drawing(self, boxes: dict[str, tuple[int, int, int, int]]) -> Drawing:
        rows: list[str] = []
        spans: list[tuple[int, int, int, str]] = []
        for y in range(self.h):
            chars = []
            run_style, run_start = "", 0
            for x in range(self.w):
                ch = self.chars.get((x, y))
                style = self.styles.get((x, y), "")
                if ch is None:
                    bits = self.mask.get((x, y), 0)
                    if bits:
                        kinds = self.kind.get((x, y), set())
                        dashed = kinds == {"data"}
                        ch = (DASHED.get(bits) if dashed else None) or GLYPHS.get(bits, "┼")
                        style = "cyan" if dashed else "magenta" if kinds == {"control"} else "white"
                    else:
                        ch = " "
                if style != run_style:
                    if run_style:
                        spans.append((y, run_start, x, run_style))
                    run_style, run_start = style, x
                chars.append(ch)
            if run_style:
                spans.append((y, run_start, self.w, run_style))
            rows.append("".join(chars))
        return Drawing(rows, spans, boxes)

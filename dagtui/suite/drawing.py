"""Draw a suite's rule DAG with box characters (no textual: the TUI and scripts share it).

Rules sit in their topological levels, top to bottom, one box each with the rule's name,
its kind (code or LLM) and status. An edge runs from a dependency down to the rule that
depends on it: out of the bottom of the dependency's box, along a track of its own in the
channel between the two levels, and down into the dependent with an arrow. Edges that skip
levels pass through a point in each level they cross, so nothing is drawn through a box.
Rule DAGs are small (the seed's advice is two or three levels), so a few barycenter sweeps
give a clean picture; nothing here needs a layout library.

`focus` keeps only a rule with everything upstream and downstream of it, and `styles`
lets the caller mark rules (the focused one, its upstream, its downstream).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from .model import Suite

U, D, L, R = 1, 2, 4, 8
GLYPHS = {
    U | D: "│", L | R: "─", D | R: "┌", D | L: "┐", U | R: "└", U | L: "┘",
    U | D | R: "├", U | D | L: "┤", L | R | D: "┬", L | R | U: "┴", U | D | L | R: "┼",
    U: "│", D: "│", L: "─", R: "─",
}
GAP = 3
MAX_NAME = 28


@dataclass
class SuiteDrawing:
    """Rows of text, style spans (row, start, end, style) and each rule's box (x, y, w, h)."""

    rows: list[str]
    spans: list[tuple[int, int, int, str]] = field(default_factory=list)
    boxes: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)

    def text(self) -> str:
        return "\n".join(r.rstrip() for r in self.rows)

    def rule_at(self, x: int, y: int) -> str | None:
        for rid, (bx, by, bw, bh) in self.boxes.items():
            if bx <= x < bx + bw and by <= y < by + bh:
                return rid
        return None


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


def neighbourhood(suite: Suite, rule_id: str) -> set[str]:
    """The rule with everything it depends on and everything depending on it."""
    return {rule_id, *suite.upstream(rule_id), *suite.downstream(rule_id)}


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def box_lines(suite: Suite, rid: str, kinds: dict[str, str]) -> list[str]:
    rule = suite.rules[rid]
    lines = [_short(rid, MAX_NAME)]
    if rule.label and rule.label != rid:
        lines.append(_short(rule.label, MAX_NAME))
    lines.append(f"{kinds.get(rid, '?')} · {rule.status}")
    return lines


def draw_suite(
    suite: Suite,
    kinds: dict[str, str] | None = None,
    *,
    focus: str | None = None,
    styles: dict[str, str] | None = None,
) -> SuiteDrawing:
    """Lay out and draw the rule DAG (only `focus`'s neighbourhood when given)."""
    kinds = kinds or {}
    styles = styles or {}
    keep = neighbourhood(suite, focus) if focus in suite.rules else set(suite.rules)
    try:
        levels = suite.levels()
    except ValueError:  # a cycle: draw every rule on one row, edges left out
        levels = [list(suite.rules)]
    rows: list[list[str]] = [[r for r in lvl if r in keep] for lvl in levels]
    rows = [r for r in rows if r]
    if not rows:
        return SuiteDrawing(["(no rules)"])
    layer = {rid: k for k, row in enumerate(rows) for rid in row}
    edges = [
        (dep, rid) for rid in suite.rules if rid in keep
        for dep in suite.rules[rid].depends_on
        if dep in keep and dep in layer and layer[dep] < layer[rid]
    ]
    boxes: dict[str, _Box] = {}
    for row in rows:
        for rid in row:
            lines = box_lines(suite, rid, kinds)
            boxes[rid] = _Box(rid, lines, max(len(s) for s in lines) + 4, len(lines) + 2)
    height_of_layer = [max(boxes[r].height for r in row) for row in rows]

    # edges that skip levels go through one point per level they cross
    segments: list[tuple[str, str]] = []
    for i, (src, dst) in enumerate(edges):
        prev = src
        for k in range(layer[src] + 1, layer[dst]):
            point = f"\0{i}:{k}"
            boxes[point] = _Box(point, [], 1, 1, dummy=True)
            layer[point] = k
            rows[k].append(point)
            segments.append((prev, point))
            prev = point
        segments.append((prev, dst))
    ups: dict[str, list[str]] = defaultdict(list)
    downs: dict[str, list[str]] = defaultdict(list)
    for a, b in segments:
        downs[a].append(b)
        ups[b].append(a)

    def bary(row_above: list[str], node: str, nbrs: list[str], fallback: int) -> float:
        pos = {n: i for i, n in enumerate(row_above)}
        known = [pos[n] for n in nbrs if n in pos]
        return sum(known) / len(known) if known else float(fallback)

    for _ in range(4):
        for k in range(1, len(rows)):
            here = {n: i for i, n in enumerate(rows[k])}
            rows[k].sort(key=lambda n, k=k, here=here: bary(rows[k - 1], n, ups[n], here[n]))
        for k in range(len(rows) - 2, -1, -1):
            here = {n: i for i, n in enumerate(rows[k])}
            rows[k].sort(key=lambda n, k=k, here=here: bary(rows[k + 1], n, downs[n], here[n]))

    # x: each box centred under what feeds it, never overlapping its left neighbour
    for row in rows:
        limit = 0
        for n in row:
            b = boxes[n]
            feeds = [boxes[u].center for u in ups[n]]
            want = sum(feeds) // len(feeds) - b.width // 2 if feeds else limit
            b.x = max(limit, want)
            limit = b.x + b.width + GAP

    # y: levels, and between them a channel with one track per segment
    channel: list[list[tuple[str, str]]] = [[] for _ in rows]
    for a, b in segments:
        channel[layer[a]].append((a, b))
    y = 0
    layer_y: list[int] = []
    channel_y: list[int] = []
    for k in range(len(rows)):
        layer_y.append(y)
        y += height_of_layer[k]
        channel_y.append(y)
        y += (_bent(channel[k], boxes) + 2) if k + 1 < len(rows) else 0
    for k, row in enumerate(rows):
        for n in row:
            boxes[n].y = layer_y[k]
    width = max(b.x + b.width for b in boxes.values()) + 1
    grid = [[" "] * width for _ in range(y)]
    masks: dict[tuple[int, int], int] = defaultdict(int)
    spans: list[tuple[int, int, int, str]] = []

    def vline(x: int, y0: int, y1: int) -> None:
        for yy in range(min(y0, y1), max(y0, y1) + 1):
            if yy > min(y0, y1):
                masks[(x, yy)] |= U
            if yy < max(y0, y1):
                masks[(x, yy)] |= D

    def hline(yy: int, x0: int, x1: int) -> None:
        for xx in range(min(x0, x1), max(x0, x1) + 1):
            if xx > min(x0, x1):
                masks[(xx, yy)] |= L
            if xx < max(x0, x1):
                masks[(xx, yy)] |= R

    arrows: list[tuple[int, int]] = []
    for k, segs in enumerate(channel):
        top = channel_y[k]
        arrow_row = top + _bent(segs, boxes) + 1
        order = sorted(segs, key=lambda s: (boxes[s[0]].center, boxes[s[1]].center))
        t = 0
        for a, b in order:
            xs, xt = boxes[a].center, boxes[b].center
            track = arrow_row
            if xs != xt:  # a bent edge gets a track of its own; a straight one needs none
                track = top + 1 + t
                t += 1
            vline(xs, top if not boxes[a].dummy else layer_y[k], track)
            hline(track, xs, xt)
            vline(xt, track, arrow_row)
            if boxes[b].dummy:
                vline(xt, arrow_row, layer_y[k + 1] + height_of_layer[k + 1] - 1)
                masks[(xt, layer_y[k + 1] + height_of_layer[k + 1] - 1)] |= D
            else:
                arrows.append((xt, arrow_row))
    for (x, yy), m in masks.items():
        if 0 <= yy < len(grid) and 0 <= x < width:
            grid[yy][x] = GLYPHS.get(m, "┼")
    for x, yy in arrows:
        grid[yy][x] = "▼"
        spans.append((yy, x, x + 1, "bold"))

    placed: dict[str, tuple[int, int, int, int]] = {}
    for n, b in boxes.items():
        if b.dummy:
            continue
        h = height_of_layer[layer[n]]
        _box(grid, b, h)
        placed[n] = (b.x, b.y, b.width, h)
        style = styles.get(n) or _default_style(suite, n)
        if style:
            for yy in range(b.y, b.y + h):
                spans.append((yy, b.x, b.x + b.width, style))
    return SuiteDrawing(["".join(r) for r in grid], spans, placed)


def _bent(segs: list[tuple[str, str]], boxes: dict[str, _Box]) -> int:
    return sum(1 for a, b in segs if boxes[a].center != boxes[b].center)


def _default_style(suite: Suite, rid: str) -> str:
    return "dim" if not suite.rules[rid].active else ""


def _box(grid: list[list[str]], b: _Box, height: int) -> None:
    x0, y0, w = b.x, b.y, b.width
    grid[y0][x0] = "┌"
    grid[y0][x0 + w - 1] = "┐"
    grid[y0 + height - 1][x0] = "└"
    grid[y0 + height - 1][x0 + w - 1] = "┘"
    for x in range(x0 + 1, x0 + w - 1):
        grid[y0][x] = "─"
        grid[y0 + height - 1][x] = "─"
    for yy in range(y0 + 1, y0 + height - 1):
        grid[yy][x0] = "│"
        grid[yy][x0 + w - 1] = "│"
        for x in range(x0 + 1, x0 + w - 1):
            grid[yy][x] = " "
    # an edge leaving the box marks its bottom border, one arriving marks the top
    below = grid[y0 + height] if y0 + height < len(grid) else None
    if below is not None and below[b.center] in "│├┤┼└┘┌┐":
        grid[y0 + height - 1][b.center] = "┬"
    for i, line in enumerate(b.lines):
        for j, ch in enumerate(line):
            grid[y0 + 1 + i][x0 + 2 + j] = ch

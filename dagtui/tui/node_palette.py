"""Finding a node by its id or its label in the command palette (ctrl+p), in the editor
and in the debugger.

`NodeFinder` is the one matching rule: a node is found by its id or by its label (the
name a person reads in the tree: "Headings present"), whichever matches the query better;
each screen says what "jump to it" means (`EditorNodes`: select it in the tree and show its
form; the debugger's `DebuggerNodes`: select it in the path tree and show its step).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Protocol, cast

from textual.command import DiscoveryHit, Hit, Hits, Matcher, Provider

from dagtui.graph.model import Graph, NodeBase


def node_text(nid: str, node: NodeBase) -> str:
    """The entry as listed: `id · type · label`."""
    return f"{nid} · {node.type}" + (f" · {node.label}" if node.label else "")


def node_score(matcher: Matcher, nid: str, node: NodeBase) -> float:
    """How well the query matches the node's id or its label (0: not at all); the whole
    entry is matched too, so "present binary" finds the binary node named present."""
    texts = [nid, node_text(nid, node)] + ([node.label] if node.label else [])
    return max(matcher.match(text) for text in texts)


class NodeFinder(Provider):
    """Palette provider of a graph's nodes; subclasses say which graph and how to jump.

    `rank(score, query)` lets a screen whose own commands are ranked in tiers (the
    debugger's) lift node hits to the same scale."""

    def graph(self) -> Graph | None:
        """The graph whose nodes are offered (None: none on this screen)."""
        raise NotImplementedError

    def jump(self, nid: str) -> None:
        """Show node `nid`."""
        raise NotImplementedError

    def rank(self, score: float, query: str) -> float:
        return score

    def _runner(self, nid: str) -> Callable[[], Any]:
        return lambda: self.jump(nid)

    def _nodes(self) -> Iterator[tuple[str, NodeBase]]:
        graph = self.graph()
        if graph is not None:
            yield from graph.nodes.items()

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for nid, node in self._nodes():
            score = node_score(matcher, nid, node)
            if score > 0:
                text = node_text(nid, node)
                yield Hit(self.rank(score, query), matcher.highlight(text),
                          self._runner(nid), text=text, help=f"go to node {nid}")

    async def discover(self) -> Hits:
        for nid, node in self._nodes():
            yield DiscoveryHit(node_text(nid, node), self._runner(nid),
                               help=f"go to node {nid}")


class EditorView(Protocol):
    """What `EditorNodes` asks of the editor screen (`screens.editor.EditorScreen`, whose
    `COMMANDS` list it); a protocol, so this module does not import the editor."""

    @property
    def graph_shown(self) -> Graph | None:
        """The graph being edited (None while the file does not parse)."""

    def go_to(self, node_id: str, field: str | None = None) -> None: ...


class EditorNodes(NodeFinder):
    """The editor's nodes: enter selects the node in the tree and shows its form. Offered
    on the editor's own screen only (over the debugger, that screen's provider answers)."""

    def _editor(self) -> EditorView:
        # listed in `EditorScreen.COMMANDS` (and by its go-to key) only: Textual runs it on
        # no other screen
        return cast(EditorView, self.screen)

    def graph(self) -> Graph | None:
        return self._editor().graph_shown

    def jump(self, nid: str) -> None:
        self._editor().go_to(nid)

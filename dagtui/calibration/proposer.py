"""The rewrite method of `dagtui align`: a model proposes revised criteria (or a task node's
instructions) from the cases where the judge and the people disagree.

The proposer is shown the node's current wording, its labels (and what each leads to), and
the train cases where the judge disagreed with the label: the material as the node saw it,
the label, the judge's verdict and its reason. It answers with a JSON list of K revised
wordings that keep the node's labels. The request goes through the judge's own client (cache,
retries, rate limits) with the proposer's model named on the ask (`Ask.model`), so a second
alignment is answered from the cache. The answer is read as the `steps` answer shape (a list
of strings: `dagtui.kinds.answers.STEPS`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dagtui.graph.model import Graph, NodeBase
from dagtui.judges.base import Ask, Judge
from dagtui.judges.prompts import GEVAL_STEPS, Prompt, material_parts
from dagtui.kinds import kind_of
from dagtui.kinds.answers import STEPS
from dagtui.run.cases import Case
from dagtui.text import verdict_text as show

#: disagreements shown to the proposer at most (the prompt stays a readable size)
MAX_SHOWN = 12
PROPOSER_SYSTEM = (
    "You improve the wording of one step of an evaluation graph so that an LLM judge answers "
    "it the way the people who labelled the cases did. Keep the step's question and its "
    "allowed answers; change only the wording, making explicit what the labels show the "
    "people meant. Reply with a single JSON object and nothing else."
)


@dataclass
class Spent:
    calls: int = 0
    cache_hits: int = 0


def text_field(node: NodeBase) -> str:
    """The wording a candidate changes: a task's instructions, a judgement's criteria (the
    field the debugger's "edit & re-run" changes too)."""
    return kind_of(node).editable(node) or "criteria"


def proposer_prompt(graph: Graph, node: NodeBase, disagreements: list[dict[str, str]],
                    count: int) -> Prompt:
    """The proposer's request (see the module docstring)."""
    what = text_field(node)
    current = getattr(node, what)
    parts = [f"The step's current {what}:\n{current.strip()}"]
    verdicts = getattr(node, "verdicts", None) or []
    if verdicts:
        parts.append("Its allowed answers (keep every one of them, with the same meaning):\n"
                     + "\n".join(f"- {show(v.verdict)}" for v in verdicts))
    shown = []
    for i, d in enumerate(disagreements[:MAX_SHOWN], start=1):
        shown.append(f"Case {i}:\n{d['material']}\nThe people's label: {d['label']}\n"
                     f"The judge answered: {d['verdict']}\nThe judge's reason: {d['reason']}")
    parts.append("Cases where the judge disagreed with the people:\n\n" + "\n\n".join(shown))
    parts.append(f"Propose {count} revised {what}, each a complete replacement, different "
                 "from each other.")
    parts.append('Answer with JSON: {"reason": "<what the disagreements show>", "steps": '
                 f'["<revised {what} 1>", ...]}} with exactly {count} strings.')
    schema = {"type": "object",
              "properties": {"reason": {"type": "string"},
                             "steps": STEPS.schema_property([])},
              "required": ["reason", "steps"], "additionalProperties": False}
    return Prompt(GEVAL_STEPS, [{"role": "system", "content": PROPOSER_SYSTEM},
                                {"role": "user", "content": "\n\n".join(parts)}], schema)


async def propose(judge: Judge, graph: Graph, node: NodeBase, baseline: Any,
                  cases: dict[str, Case], evidence: dict[tuple[str, str], dict[str, Any]],
                  count: int, model: str | None) -> tuple[list[str], Spent]:
    """Up to `count` distinct new wordings (none equal to the current one) and the calls
    spent; no call when the judge already agrees on every train case. `evidence`: what each
    case showed the node ((case, node) -> task parent -> output)."""
    current = getattr(node, text_field(node))
    rows = [r for r in baseline.rows if not r.agrees]
    if not rows:
        return [], Spent()
    disagreements = []
    for r in rows:
        case = cases[r.case]
        shown = evidence.get((r.case, node.id), {})
        material = "\n\n".join(material_parts(graph, node, case.fields, shown))
        disagreements.append({"material": material, "label": show(r.label),
                              "verdict": r.error or show(r.verdict), "reason": r.reason})
    prompt = proposer_prompt(graph, node, disagreements, count)
    ask = Ask(graph, node, prompt, Case(name="(align proposer)"), model=model)
    reply = await judge.answer(ask)
    texts: list[str] = []
    for text in reply.value if isinstance(reply.value, list) else []:
        text = str(text).strip()
        if text and text != current.strip() and text not in texts:
            texts.append(text)
    spent = Spent(sum(1 for c in reply.calls if not c.cache_hit),
                  sum(1 for c in reply.calls if c.cache_hit))
    return texts[:count], spent

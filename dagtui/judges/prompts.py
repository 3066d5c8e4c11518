"""The exact words sent to a judge, and the reading of what comes back.

Every judge call in dagtui (debugger, `run`, the Python API) is built here, so the prompt a
person inspects is the prompt CI sends. Three properties matter and are tested:

- *Stable*: the same node and case give byte-identical messages in every process (labels in
  declared order, dict keys sorted), so cache keys and diffs are stable too.
- *Readable*: lists become bullet lines, tool calls become `name(arg=value) -> output`, turns
  become numbered lines; never Python reprs.
- *Reason first*: the answer is a JSON object whose first field is `reason`, then the verdict,
  so the judge explains before it decides and no separate reason call is needed.

Parsing is tolerant of how models really answer (code fences, prose around the JSON, "yes",
labels in another case) but never guesses: an answer outside the allowed set is reported, and
the engine gives the judge exactly one chance to correct it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dagtui.graph.model import Example, GEvalNode, Graph, NodeBase, TaskNode
from dagtui.kinds import find_kind, kind_of
from dagtui.kinds.answers import STEPS, Answer, AnswerError, Parsed, UnsureAnswer, extract_json
from dagtui.text import escape_surrogates

SYSTEM_PROMPT = (
    "You are a careful evaluator answering one step of an evaluation graph. Each step asks "
    "one narrow question about a test case. Judge only what the step asks, using only the "
    "material given to you; when the material is missing or empty, say so in your reason and "
    "answer accordingly. Reply with a single JSON object and nothing else: first a short "
    "\"reason\" explaining your judgement, then the answer field the step asks for."
)
#: the system prompt of a graph with `include_reason = false`: the judge answers without
#: explaining (fewer output tokens, the only cost a reason adds here), and nothing asks it to
SYSTEM_PROMPT_NO_REASON = (
    "You are a careful evaluator answering one step of an evaluation graph. Each step asks "
    "one narrow question about a test case. Judge only what the step asks, using only the "
    "material given to you; when the material is missing or empty, answer accordingly. "
    "Reply with a single JSON object and nothing else: only the answer field the step asks for."
)


#: readable headings for test-case params
PARAM_TITLES: dict[str, str] = {
    "input": "Input",
    "actual_output": "Actual output",
    "expected_output": "Expected output",
    "context": "Context",
    "retrieval_context": "Retrieval context",
    "tools_called": "Tools called",
    "expected_tools": "Expected tools",
    "metadata": "Metadata",
    "tags": "Tags",
    "scenario": "Scenario",
    "expected_outcome": "Expected outcome",
    "user_description": "User description",
    "chatbot_role": "Chatbot role",
    "role": "Turns",
    "content": "Turns",
}

#: the request kind of a G-Eval leaf's extra call for its evaluation steps (every other
#: request's kind is its node's type)
GEVAL_STEPS = "geval_steps"
MISSING = "(not provided)"


@dataclass
class Prompt:
    """A request ready for a judge: messages plus what a valid answer looks like.

    `kind` is the node's type, or `geval_steps` for a G-Eval leaf's extra call."""

    kind: str
    messages: list[dict[str, str]]
    schema: dict[str, Any]
    labels: list[str] = field(default_factory=list)
    #: False when the graph says `include_reason = false`: no reason is asked for
    reasons: bool = True
    #: True when the node declares `unsure`: "cannot tell" is a valid answer too
    unsure: bool = False

    @property
    def answer(self) -> Answer:
        """The shape of a valid answer (its schema, parsing, correction and checks)."""
        return answer_for(self.kind, unsure=self.unsure)

    @property
    def schema_name(self) -> str:
        return f"dagtui_{self.kind}"

    def response_format(self) -> dict[str, Any]:
        """The OpenAI-style `response_format` for structured output."""
        return {
            "type": "json_schema",
            "json_schema": {"name": self.schema_name, "strict": True, "schema": self.schema},
        }


# --------------------------------------------------------------------------- rendering


def render_value(value: Any) -> str:
    """A case value as text a judge reads easily (bullets for lists, never a repr)."""
    if value is None:
        return MISSING
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"{value:g}" if isinstance(value, float) else str(value)
    if isinstance(value, list):
        if not value:
            return "(none)"
        return "\n".join(_bullet(item) for item in value)
    if isinstance(value, dict):
        if _looks_like_tool_call(value):
            return render_tool_call(value)
        if not value:
            return "(none)"
        return "\n".join(f"{k}: {_inline(v)}" for k, v in sorted(value.items()))
    return str(value)


def _bullet(item: Any) -> str:
    if isinstance(item, dict) and _looks_like_tool_call(item):
        text = render_tool_call(item)
    elif isinstance(item, dict | list):
        text = _inline(item)
    else:
        text = render_value(item)
    lines = text.splitlines() or [""]
    return "- " + "\n  ".join(lines)


def _inline(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return render_value(value)


def _looks_like_tool_call(value: dict[str, Any]) -> bool:
    return "name" in value and set(value) <= {
        "name", "input_parameters", "input", "arguments", "output", "description", "reasoning",
    }


def render_tool_call(call: dict[str, Any] | str) -> str:
    """`search(query="cats", limit=3) -> 12 results` (the tool's output when known)."""
    if isinstance(call, str):
        return call
    args = call.get("input_parameters") or call.get("arguments") or call.get("input") or {}
    if isinstance(args, dict):
        arg_text = ", ".join(
            f"{k}={json.dumps(v, ensure_ascii=False, sort_keys=True)}"
            for k, v in sorted(args.items())
        )
    else:
        arg_text = _inline(args)
    text = f"{call.get('name')}({arg_text})"
    if call.get("output") is not None:
        text += f" -> {_inline(call['output'])}"
    return text


def render_turns(
    turns: list[dict[str, Any]], window: tuple[int, int] | None, fields: list[str]
) -> str:
    """Numbered turns, limited to `turn_window` (inclusive, 0-based) when the node has one."""
    indexed = list(enumerate(turns))
    if window is not None:
        start, end = window
        indexed = [(i, t) for i, t in indexed if start <= i <= end]
    if not indexed:
        return "(no turns in the window)" if window else "(no turns)"
    show_role = "role" in fields or "content" not in fields
    show_content = "content" in fields or "role" not in fields
    lines = []
    for i, turn in indexed:
        head = f"[{i}] {turn.get('role', '?')}" if show_role else f"[{i}]"
        body = render_value(turn.get("content")) if show_content else ""
        line = f"{head}: {body}" if body else head
        calls = turn.get("tools_called")
        if calls:
            line += "\n    tools: " + "; ".join(render_tool_call(c) for c in calls)
        lines.append(line)
    return "\n".join(lines)


def render_evidence(output: Any) -> str:
    """A task node's output as its children see it."""
    if isinstance(output, list):
        return "\n".join(_bullet(item) for item in output) if output else "(nothing extracted)"
    if output is None or (isinstance(output, str) and not output.strip()):
        return "(nothing extracted)"
    return render_value(output)


def param_sections(node: NodeBase, case_fields: dict[str, Any], multi_turn: bool) -> list[str]:
    """One `Heading:\\nvalue` block per param of the node, in the node's declared order."""
    sections: list[str] = []
    turns_done = False
    for param in node.params:
        if multi_turn and param in ("role", "content"):
            if turns_done:
                continue
            turns_done = True
            turns = case_fields.get("turns") or []
            body = render_turns(turns, node.turn_window, node.params)
            title = "Turns"
            if node.turn_window is not None:
                title += f" {node.turn_window[0]} to {node.turn_window[1]}"
            sections.append(f"{title}:\n{body}")
            continue
        title = PARAM_TITLES.get(param, param.replace("_", " ").capitalize())
        sections.append(f"{title}:\n{render_value(case_fields.get(param))}")
    return sections


#: the first and last lines of a node's worked examples (`examples_block`)
EXAMPLES_HEAD = "Worked examples (answered correctly before; the case to judge comes after them):"
EXAMPLES_END = "End of the worked examples."


def _example_answer(example: Example) -> str:
    if example.evidence is not None:
        return f"Evidence:\n{example.evidence}"
    value = example.verdict
    shown = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return f"Answer: {shown}"


def examples_block(node: NodeBase) -> str | None:
    """A node's worked examples as one block of its request (None without any): each
    example's material, the right answer and why, numbered, between `EXAMPLES_HEAD` and
    `EXAMPLES_END` so the case that follows is never mistaken for one of them. The DeepEval
    exports fold the same text into the criteria (DeepEval has no such field)."""
    examples: list[Example] = getattr(node, "examples", None) or []
    if not examples:
        return None
    lines = [EXAMPLES_HEAD]
    for i, example in enumerate(examples, start=1):
        lines += ["", f"Example {i}:", f"Material:\n{example.material}", _example_answer(example)]
        if example.reason:
            lines.append(f"Why: {example.reason}")
    lines += ["", EXAMPLES_END]
    return "\n".join(lines)


# --------------------------------------------------------------------------- requests


def _schema(props: dict[str, Any], reasons: bool = True) -> dict[str, Any]:
    if reasons:
        props = {"reason": {"type": "string"}, **props}
    return {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


def answer_for(kind: str, *, unsure: bool = False) -> Answer:
    """The answer shape of a request kind (a node type answered by a judge, or
    `geval_steps`); ValueError for anything else. `unsure`: the node declares `unsure`, so
    "cannot tell" is offered too (`UnsureAnswer`)."""
    if kind == GEVAL_STEPS:
        return STEPS
    node_kind = find_kind(kind)
    if node_kind is None or node_kind.answer is None:
        raise ValueError(kind)
    if unsure:
        return UnsureAnswer(node_kind.answer)
    return node_kind.answer


def offers_unsure(node: NodeBase) -> bool:
    """True when `node` declares `unsure`, so its request offers "cannot tell"; every
    other request is byte-identical to one made before `unsure` existed."""
    return getattr(node, "unsure_rule", None) is not None


def answer_instructions(kind: str, labels: list[str] | None = None, *,
                        reasons: bool = True, unsure: bool = False) -> str:
    """The last line of every request: the JSON shape to answer with, reason first unless
    the graph turned reasons off."""
    answer = answer_for(kind, unsure=unsure)
    fields = f'"reason": "<{answer.why}>", {answer.shown}' if reasons else answer.shown
    return f"Answer with JSON: {{{fields}}}{answer.tail}"


def material_parts(graph: Graph, node: NodeBase, case_fields: dict[str, Any],
                   evidence: dict[str, Any]) -> list[str]:
    """What a request shows of the case, as the node sees it: each task parent's evidence
    under its output label, then the node's params. A worked example's `material` is this
    text (`dagtui align` takes it from a labelled case)."""
    parts: list[str] = []
    for parent_id, output in evidence.items():
        parent = graph.nodes.get(parent_id)
        title = parent.output_label if isinstance(parent, TaskNode) else parent_id
        parts.append(f"{title}:\n{render_evidence(output)}")
    parts.extend(param_sections(node, case_fields, graph.metric.multi_turn))
    return parts


def build_prompt(
    graph: Graph,
    node: NodeBase,
    case_fields: dict[str, Any],
    evidence: dict[str, Any],
    *,
    steps: list[str] | None = None,
    options_order: Sequence[str] | None = None,
    pad: float = 0.0,
) -> Prompt:
    """The request for one node. `evidence` maps each task parent id to its output.

    For a geval node, `steps` are the evaluation steps to score against (given, or generated
    by `geval_steps_prompt` first).

    `options_order` and `pad` exist for the bias probes (`dagtui.calibration.probes`) and
    nothing else: every run, preview and cache key uses the defaults, which leave the request
    byte-identical (options in declared order, no filler). `options_order` lists a non-binary
    node's labels in another order (a permutation of its labels, else ValueError); `pad` adds
    `padding(...)` neutral filler of about that share of the case material's length.
    """
    reasons = graph.metric.include_reason
    kind = kind_of(node)
    if kind.request is None or kind.answer is None:
        raise TypeError(f"node {node.id!r} of type {node.type!r} is not answered by a judge")
    request = kind.request(_reordered(node, options_order), case_fields, steps)
    parts = list(request.parts)
    shown = examples_block(node)
    if shown is not None:  # before the case: without examples the request is as it was
        parts.append(shown)
    labels = request.labels
    unsure = offers_unsure(node)
    answer = answer_for(node.type, unsure=unsure)
    schema = _schema({answer.field: answer.schema_property(labels)}, reasons)
    if request.params is not None:
        node = node.replace(params=request.params)
    material = material_parts(graph, node, case_fields, evidence)
    parts.extend(material)
    if pad > 0:
        parts.append(padding(len("\n\n".join(material)), pad))
    parts.append(answer_instructions(node.type, labels, reasons=reasons, unsure=unsure))
    messages = [
        {"role": "system", "content": SYSTEM_PROMPT if reasons else SYSTEM_PROMPT_NO_REASON},
        # a lone surrogate (JSON's "\udc80" in a case or a judge's answer) cannot be sent:
        # the judge gets it as visible text, as the reports show it
        {"role": "user", "content": escape_surrogates("\n\n".join(parts))},
    ]
    return Prompt(node.type, messages, schema, labels, reasons, unsure)


def _reordered(node: NodeBase, order: Sequence[str] | None) -> NodeBase:
    """`node` with its verdicts in `order` (by label) for the request only; `node` itself
    when no order is asked for. Routing and scores never see this copy."""
    if order is None:
        return node
    verdicts = list(getattr(node, "verdicts", []))
    by_label = {str(v.verdict): v for v in verdicts}
    if len(verdicts) < 2 or sorted(order) != sorted(by_label) or len(order) != len(verdicts):
        raise ValueError(f"node {node.id!r}: options_order {list(order)!r} is not an order "
                         f"of its options {list(by_label)!r}")
    return node.replace(verdicts=[by_label[label] for label in order])


#: the heading of the bias probes' padding block (`padding`)
FILLER_HEAD = "Background note (general text, not part of the case):"
#: the neutral filler the padding probe adds, repeated and cut at a word: it says nothing
#: about any case, so a judge that reads the material should answer as without it
FILLER = (
    "This note is general background text. It describes no case and makes no claim about "
    "the material above. Reports are often read by several people, at different times, "
    "for different purposes. Some readers look for a quick overview, others for details. "
    "Formatting conventions vary from one team to another, and none of them is assumed "
    "here. The note is the same for every case and carries no information."
)


def padding(material_chars: int, share: float) -> str:
    """The padding block for case material of `material_chars` characters: `FILLER_HEAD`
    then whole words of `FILLER` (repeated as needed) until the block is at least `share`
    of that length. Deterministic: the same length and share give the same text."""
    target = max(1, round(material_chars * share))
    words = FILLER.split()
    out: list[str] = []
    size = len(FILLER_HEAD) + 1
    i = 0
    while size < target:
        word = words[i % len(words)]
        out.append(word)
        size += len(word) + 1
        i += 1
    return FILLER_HEAD + "\n" + " ".join(out)


def geval_steps_prompt(node: GEvalNode, *, reasons: bool = True) -> Prompt:
    """The one extra call a geval leaf with only `criteria` needs (cached like any call).

    `reasons` is the graph's `include_reason`."""
    params = ", ".join(PARAM_TITLES.get(p, p).lower() for p in node.params) or "the test case"
    text = (
        f"Write the evaluation steps for a metric named {node.name or node.id!r}.\n\n"
        f"Criteria:\n{(node.criteria or '').strip()}\n\n"
        f"The steps will be applied to: {params}.\n\n"
        + answer_instructions(GEVAL_STEPS, reasons=reasons)
    )
    schema = _schema({STEPS.field: STEPS.schema_property([])}, reasons)
    return Prompt(GEVAL_STEPS, [
        {"role": "system", "content": SYSTEM_PROMPT if reasons else SYSTEM_PROMPT_NO_REASON},
        {"role": "user", "content": text},
    ], schema, reasons=reasons)


def corrective_message(prompt: Prompt, problem: str) -> dict[str, str]:
    """The one follow-up turn sent when an answer was unusable."""
    want = prompt.answer.correction(prompt.labels)
    return {
        "role": "user",
        "content": f"Your previous answer could not be used: {problem}. {want} "
                   "Reply again with only the JSON object"
                   + (", reason first." if prompt.reasons else "."),
    }


# --------------------------------------------------------------------------- parsing


def parse_answer(prompt: Prompt, raw: str) -> Parsed:
    """Read a judge's raw text for `prompt`; raises AnswerError when it cannot be used."""
    data = extract_json(raw)
    if not isinstance(data, dict):
        raise AnswerError("malformed", "the answer is JSON but not an object", raw)
    reason = data.get("reason")
    reason = "" if reason is None else str(reason)
    return Parsed(prompt.answer.read(data, raw, prompt.labels), reason)

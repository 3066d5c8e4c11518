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
import re
from dataclasses import dataclass, field
from typing import Any

from .model import (
    SINGLE_TURN_PARAMS,
    BinaryNode,
    GEvalNode,
    Graph,
    MetricNode,
    NodeBase,
    NonBinaryNode,
    TaskNode,
)
from .outputs import escape_surrogates

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

#: what kind of answer a request wants
KINDS = ("task", "binary", "non_binary", "geval", "geval_steps", "metric")
MISSING = "(not provided)"


@dataclass
class Prompt:
    """A request ready for a judge: messages plus what a valid answer looks like."""

    kind: str
    messages: list[dict[str, str]]
    schema: dict[str, Any]
    labels: list[str] = field(default_factory=list)
    #: False when the graph says `include_reason = false`: no reason is asked for
    reasons: bool = True

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


#: per kind: what the reason should say, and the answer field(s) as shown to the judge
_ANSWER_SHAPES: dict[str, tuple[str, str]] = {
    "task": ("how you found it", '"output": "<the extracted text; use one line per item when '
             'there are several>"'),
    "binary": ("why", '"verdict": true or false'),
    "non_binary": ("why", '"verdict": "<exactly one of the labels above, spelled as listed>"'),
    "geval": ("why", '"score": <an integer from 0 (worst) to 10 (best)>'),
    "geval_steps": ("why these steps", '"steps": ["<step 1>", "<step 2>", ...]'),
    "metric": ("why", '"score": <a number from 0 (worst) to 10 (best): the metric\'s 0..1 '
               'score times 10>'),
}


def answer_instructions(kind: str, labels: list[str] | None = None, *,
                        reasons: bool = True) -> str:
    """The last line of every request: the JSON shape to answer with, reason first unless
    the graph turned reasons off."""
    if kind not in _ANSWER_SHAPES:
        raise ValueError(kind)
    why, answer = _ANSWER_SHAPES[kind]
    fields = f'"reason": "<{why}>", {answer}' if reasons else answer
    tail = " with 3 to 5 concrete steps." if kind == "geval_steps" else ""
    return f"Answer with JSON: {{{fields}}}{tail}"


def build_prompt(
    graph: Graph,
    node: NodeBase,
    case_fields: dict[str, Any],
    evidence: dict[str, Any],
    *,
    steps: list[str] | None = None,
) -> Prompt:
    """The request for one node. `evidence` maps each task parent id to its output.

    For a geval node, `steps` are the evaluation steps to score against (given, or generated
    by `geval_steps_prompt` first).
    """
    multi_turn = graph.metric.multi_turn
    reasons = graph.metric.include_reason
    parts: list[str] = []
    labels: list[str] = []
    if isinstance(node, TaskNode):
        kind = "task"
        parts.append(f"Instructions:\n{node.instructions.strip()}")
        schema = _schema({"output": {"type": "string"}}, reasons)
    elif isinstance(node, BinaryNode):
        kind = "binary"
        parts.append(f"Question (answer true or false):\n{node.criteria.strip()}")
        schema = _schema({"verdict": {"type": "boolean"}}, reasons)
    elif isinstance(node, NonBinaryNode):
        kind = "non_binary"
        labels = node.labels
        listing = "\n".join(f"- {label}" for label in labels)
        parts.append(f"Criteria:\n{node.criteria.strip()}")
        parts.append(f"Choose exactly one of these labels:\n{listing}")
        schema = _schema({"verdict": {"type": "string", "enum": labels}}, reasons)
    elif isinstance(node, GEvalNode):
        kind = "geval"
        title = node.name or node.id
        parts.append(f"Evaluate the test case for: {title}")
        if node.criteria:
            parts.append(f"Criteria:\n{node.criteria.strip()}")
        numbered = "\n".join(f"{i}. {s}" for i, s in enumerate(steps or [], start=1))
        parts.append(f"Evaluation steps:\n{numbered}")
        schema = _schema({"score": {"type": "integer"}}, reasons)
    elif isinstance(node, MetricNode):
        # DeepEval runs the metric with its own prompts (a model judge never sends this);
        # this request is what a person, the labels or a replay answer, and what the
        # debugger shows: the metric, its arguments and the case fields it is given
        kind = "metric"
        shown = ", ".join(f"{k}={v!r}" for k, v in node.args.items())
        parts.append(f"DeepEval metric: {node.metric}({shown})\n"
                     "Score the test case as this metric would (0..10).")
        if not node.params:  # the metric reads what it needs: show every field given
            node = node.replace(params=[p for p in SINGLE_TURN_PARAMS
                                        if case_fields.get(p) not in (None, "", [])])
        schema = _schema({"score": {"type": "number"}}, reasons)
    else:
        raise TypeError(f"node {node.id!r} of type {node.type!r} is not answered by a judge")
    for parent_id, output in evidence.items():
        parent = graph.nodes.get(parent_id)
        title = parent.output_label if isinstance(parent, TaskNode) else parent_id
        parts.append(f"{title}:\n{render_evidence(output)}")
    parts.extend(param_sections(node, case_fields, multi_turn))
    parts.append(answer_instructions(kind, labels, reasons=reasons))
    messages = [
        {"role": "system", "content": SYSTEM_PROMPT if reasons else SYSTEM_PROMPT_NO_REASON},
        # a lone surrogate (JSON's "\udc80" in a case or a judge's answer) cannot be sent:
        # the judge gets it as visible text, as the reports show it
        {"role": "user", "content": escape_surrogates("\n\n".join(parts))},
    ]
    return Prompt(kind, messages, schema, labels, reasons)


def geval_steps_prompt(node: GEvalNode, *, reasons: bool = True) -> Prompt:
    """The one extra call a geval leaf with only `criteria` needs (cached like any call).

    `reasons` is the graph's `include_reason`."""
    params = ", ".join(PARAM_TITLES.get(p, p).lower() for p in node.params) or "the test case"
    text = (
        f"Write the evaluation steps for a metric named {node.name or node.id!r}.\n\n"
        f"Criteria:\n{(node.criteria or '').strip()}\n\n"
        f"The steps will be applied to: {params}.\n\n"
        + answer_instructions("geval_steps", reasons=reasons)
    )
    schema = _schema({"steps": {"type": "array", "items": {"type": "string"}}}, reasons)
    return Prompt("geval_steps", [
        {"role": "system", "content": SYSTEM_PROMPT if reasons else SYSTEM_PROMPT_NO_REASON},
        {"role": "user", "content": text},
    ], schema, reasons=reasons)


def corrective_message(prompt: Prompt, problem: str) -> dict[str, str]:
    """The one follow-up turn sent when an answer was unusable."""
    if prompt.kind == "non_binary":
        allowed = "; ".join(json.dumps(label) for label in prompt.labels)
        want = f'"verdict" must be exactly one of: {allowed}.'
    elif prompt.kind == "binary":
        want = '"verdict" must be true or false.'
    elif prompt.kind == "geval":
        want = '"score" must be an integer from 0 to 10.'
    elif prompt.kind == "metric":
        want = '"score" must be a number from 0 to 10.'
    elif prompt.kind == "geval_steps":
        want = '"steps" must be a list of strings.'
    else:
        want = '"output" must be a string.'
    return {
        "role": "user",
        "content": f"Your previous answer could not be used: {problem}. {want} "
                   "Reply again with only the JSON object"
                   + (", reason first." if prompt.reasons else "."),
    }


# --------------------------------------------------------------------------- parsing


class AnswerError(ValueError):
    """An answer that cannot be used. `kind` is `malformed` (no usable JSON) or
    `out_of_set` (valid JSON, but the verdict is not an allowed value)."""

    def __init__(self, kind: str, message: str, raw: str) -> None:
        self.kind = kind
        self.raw = raw
        super().__init__(message)


@dataclass
class Parsed:
    value: Any
    reason: str = ""


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def extract_json(raw: str) -> Any:
    """The first JSON object in `raw`: bare, in a code fence, or amid prose."""
    text = raw.strip()
    try:
        return json.loads(text)
    except (json.JSONDecodeError, ValueError):
        pass
    for block in _FENCE.findall(text):
        try:
            return json.loads(block.strip())
        except (json.JSONDecodeError, ValueError):
            continue
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            obj, _ = decoder.raw_decode(text, start)
            return obj
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
    raise AnswerError("malformed", "the answer holds no JSON object", raw)


_TRUE = {"true", "yes", "y", "1"}
_FALSE = {"false", "no", "n", "0"}


def _norm(label: str) -> str:
    return " ".join(label.lower().split()).strip(" .'\"")


def parse_answer(prompt: Prompt, raw: str) -> Parsed:
    """Read a judge's raw text for `prompt`; raises AnswerError when it cannot be used."""
    data = extract_json(raw)
    if not isinstance(data, dict):
        raise AnswerError("malformed", "the answer is JSON but not an object", raw)
    reason = data.get("reason")
    reason = "" if reason is None else str(reason)
    kind = prompt.kind
    if kind == "task":
        if "output" not in data:
            raise AnswerError("malformed", 'the answer has no "output" field', raw)
        out = data["output"]
        if isinstance(out, list):
            out = "\n".join(str(x) for x in out)
        return Parsed("" if out is None else str(out), reason)
    if kind == "geval_steps":
        steps = data.get("steps")
        if not isinstance(steps, list) or not steps:
            raise AnswerError("malformed", 'the answer has no "steps" list', raw)
        return Parsed([str(s) for s in steps], reason)
    if kind in ("geval", "metric"):
        score = data.get("score")
        if isinstance(score, str):
            try:
                score = float(score.strip())
            except ValueError:
                raise AnswerError("out_of_set", f"score {score!r} is not a number", raw) from None
        if isinstance(score, bool) or not isinstance(score, int | float):
            raise AnswerError("malformed", 'the answer has no numeric "score"', raw)
        if not 0 <= score <= 10:
            raise AnswerError("out_of_set", f"score {score:g} is outside 0..10", raw)
        return Parsed(score, reason)
    if "verdict" not in data:
        raise AnswerError("malformed", 'the answer has no "verdict" field', raw)
    verdict = data["verdict"]
    if kind == "binary":
        if isinstance(verdict, bool):
            return Parsed(verdict, reason)
        if isinstance(verdict, str) and verdict.strip().lower() in _TRUE | _FALSE:
            return Parsed(verdict.strip().lower() in _TRUE, reason)
        raise AnswerError("out_of_set", f"verdict {verdict!r} is not true or false", raw)
    # non_binary: exact label, else a unique case/space-insensitive match
    if isinstance(verdict, str):
        if verdict in prompt.labels:
            return Parsed(verdict, reason)
        matches = [label for label in prompt.labels if _norm(label) == _norm(verdict)]
        if len(matches) == 1:
            return Parsed(matches[0], reason)
    raise AnswerError(
        "out_of_set",
        f"verdict {verdict!r} is not one of the labels {prompt.labels}",
        raw,
    )

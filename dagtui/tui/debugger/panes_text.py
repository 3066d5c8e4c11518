"""The text of each step pane (Prompt, Response, Evidence, Verdict, Usage), as plain strings.

Kept free of Textual so the exact wording is testable on its own, and because the Prompt
pane carries a promise: each message's content appears byte for byte as it was sent. Only
the framing lines (`── user ──`) are added around them.
"""

from __future__ import annotations

import json
from typing import Any

from dagtui.graph.paths import show_fraction, show_number
from dagtui.kinds import extracts, scores
from dagtui.report.trace import RunResult, StepRecord
from dagtui.tui.debugger.run_model import show_value

RULE = "──"


def format_messages(messages: list[dict[str, Any]]) -> str:
    """Messages as sent: a role line, then the content exactly (no wrapping, no trimming)."""
    parts = []
    for msg in messages:
        parts.append(f"{RULE} {msg.get('role', '?')} {RULE}\n{msg.get('content', '')}")
    return "\n\n".join(parts)


def prompt_text(record: StepRecord | None,
                preview: list[dict[str, Any]] | None = None) -> str:
    if record is None:
        if preview:
            return ("(not sent yet: this is what the next step will send)\n\n"
                    + format_messages(preview))
        return "(this node has not run yet)"
    if record.calls:
        blocks = []
        for i, call in enumerate(record.calls, start=1):
            messages = call.request.get("messages", []) if call.request else []
            head = f"call {i} of {len(record.calls)} · {call.purpose}"
            if call.cache_hit:
                head += " · cache hit (not sent again)"
            blocks.append(f"{head}\n\n{format_messages(messages)}")
        return "\n\n\n".join(blocks)
    if record.prompt:
        who = {"reused": "reused from an earlier run, not sent again",
               "override": "verdict overridden, not sent",
               }.get(record.source, f"answered by the {record.judge or record.source} judge, "
                                    "no model call")
        return f"({who}; this is the prompt a model would get)\n\n" + \
            format_messages(record.prompt)
    if record.source == "check":
        return "(check node: decided in code, no prompt)"
    if record.source == "override":
        return "(verdict overridden before the node was asked: no prompt)"
    return "(no prompt recorded)"


def response_text(record: StepRecord | None) -> str:
    if record is None:
        return "(this node has not run yet)"
    out = []
    if len(record.calls) > 1:
        for i, call in enumerate(record.calls, start=1):
            body = call.raw if call.raw is not None else f"(no response: {call.error})"
            out.append(f"call {i} · {call.purpose}\n{body}")
    elif record.raw is not None:
        out.append(record.raw)
    elif record.calls and record.calls[0].error:
        out.append(f"(no response: {record.calls[0].error})")
    else:
        out.append("(no raw response: this step made no model call)")
    if record.error:
        out.append(f"ERROR ({record.error_kind}): {record.error}")
    return "\n\n".join(out)


def evidence_text(record: StepRecord | None, received: dict[str, Any]) -> str:
    """A task's output, or for any node the evidence its task parents handed it."""
    parts = []
    if record is not None and extracts(record.node_type) and record.error is None:
        text = record.answer if isinstance(record.answer, str) else show_value(record.answer)
        parts.append(f"output of this task:\n{text}")
    if received:
        for parent, value in received.items():
            text = value if isinstance(value, str) else show_value(value)
            parts.append(f"received from {parent}:\n{text}")
    if not parts:
        if record is None:
            return "(this node has not run yet)"
        return "(this node produced no evidence and received none)"
    return "\n\n".join(parts)


def verdict_text(record: StepRecord | None, node_type: str) -> str:
    if record is None:
        return "(this node has not run yet)"
    lines = [f"node      {record.node} ({node_type})", f"answered  by {record.source}"
             + (f" ({record.judge})" if record.judge and record.judge != record.source else "")]
    if record.error:
        lines.append(f"FAILED    {record.error_kind}: {record.error}")
    elif extracts(node_type):
        lines.append("output    evidence (see the Evidence tab)")
    elif scores(node_type):
        lines.append(f"score     {show_value(record.answer)} / 10")
    else:
        lines.append(f"verdict   {show_value(record.answer)}")
    if record.then:
        lines.append(f"then      → {record.then}")
    if record.leaf_score is not None:
        lines.append(f"leaf      score {show_number(record.leaf_score)} / 10 (ends the path)")
    lines.append("")
    lines.append("reason")
    lines.append(record.reason or "(none given)")
    if record.items:  # a map node: each item's own answer and reason
        from dagtui.run.map_run import item_lines

        lines += ["", "items", *item_lines(record.items)]
    for note in record.notes:
        lines.append("")
        lines.append(f"note: {note}")
    return "\n".join(lines)


def _money(cost: float | None) -> str:
    return "n/a (unknown to litellm)" if cost is None else f"${cost:.6f}"


def calls_text(n: int) -> str:
    """`1 call`, `3 calls`."""
    return f"{n} call" if n == 1 else f"{n} calls"


def usage_text(record: StepRecord | None) -> str:
    if record is None:
        return "(this node has not run yet)"
    lines = [
        f"calls sent        {record.calls_made}",
        f"prompt tokens     {record.prompt_tokens}",
        f"completion tokens {record.completion_tokens}",
        # no call made (a task answered from labels, a code check, a cache hit): nothing to
        # price, which is not the same as a price litellm does not know
        f"cost              "
        f"{_money(record.cost) if record.calls_made else 'none (no call made)'}",
        f"latency           {record.latency * 1000:.0f} ms",
        f"cache hit         {'yes' if record.cache_hit else 'no'}",
        f"retries           {record.retries}",
    ]
    if scores(record.node_type):
        lines.append(f"scoring method    {record.method or 'n/a'}")
        if record.sampled is not None:
            lines.append(f"sampled score     {show_value(record.sampled)}")
    for i, call in enumerate(record.calls, start=1):
        lines.append("")
        lines.append(f"call {i} · {call.purpose}")
        request = call.request or {}
        lines.append(f"  model     {request.get('model', '?')}")
        lines.append(f"  tokens    {call.prompt_tokens} + {call.completion_tokens}")
        lines.append(f"  cost      {_money(call.cost)}")
        lines.append(f"  latency   {call.latency * 1000:.0f} ms")
        lines.append(f"  cache hit {'yes' if call.cache_hit else 'no'}")
        retry = f"{call.retries}" + (f" ({', '.join(call.retry_kinds)})" if call.retry_kinds else "")
        lines.append(f"  retries   {retry}")
        if call.error:
            lines.append(f"  error     {call.error_kind}: {call.error}")
        params = {k: v for k, v in request.items() if k not in ("messages", "model")}
        if params:
            lines.append("  parameters (as sent; messages are in the Prompt tab)")
            dumped = json.dumps(params, ensure_ascii=False, sort_keys=True, indent=2)
            lines.extend("    " + ln for ln in dumped.splitlines())
    return "\n".join(lines)


def result_lines(result: RunResult | None, overridden: bool) -> tuple[str, str]:
    """(headline, details) of a finished run: score and pass/fail, then path and totals."""
    if result is None:
        return "", ""
    cost = "" if result.cost is None else f" · ${result.cost:.4f}"
    cached = f" · {result.cache_hits} cached" if result.cache_hits else ""
    totals = f"{calls_text(result.calls)} · {result.tokens} tokens{cost}{cached}"
    path = path_text(result)
    if result.error is not None or result.score is None:  # no score: the run failed
        return "✘ error", f"{result.error}\n{path}\n{totals}"
    mark = "✔ passes" if result.success else "✘ fails"
    cmp = ">=" if result.success else "<"
    head = f"Result {show_fraction(result.score)}  {mark} ({cmp} {result.threshold:g})"
    if overridden:
        head += "  · overridden (what-if)"
    return head, f"{path}\n{totals}"


def path_text(result: RunResult) -> str:
    """The path as a chain a person reads left to right: node: verdict ▸ ... ▸ score."""
    parts = []
    for step in result.path:
        shown = show_value(step.verdict)
        if step.score is not None and isinstance(step.verdict, int | float) \
                and not isinstance(step.verdict, bool) and float(step.verdict) == step.score:
            shown = ""  # a geval leaf: its answer is the score shown next
        parts.append(f"{step.node}: {shown}" if shown else step.node)
        if step.score is not None:
            parts.append(f"score {show_number(step.score)}")
    return " ▸ ".join(parts) or "(no steps)"

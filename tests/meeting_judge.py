"""A scripted judge for the meeting-summary graph on the loopback stub, shared by the tests of
the integrations (pytest, DeepEval, Inspect): it extracts the headings really in the summary,
and its gate says no, with a reason the reports must carry, when Conclusion is missing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stub_server import Script, first_user

MEETING = Path(__file__).resolve().parent.parent / "graphs" / "meeting_summary.toml"
#: passes: extract + gate + order = 3 calls
GOOD = {"name": "good", "actual_output": "Intro\nhello\n\nBody\ntext\n\nConclusion\nbye"}
#: fails at the gate: extract + gate = 2 calls
BAD = {"name": "bad one", "actual_output": "Intro\nhello\n\nBody\ntext"}
GATE_REASON = "the Conclusion heading is missing"


def headings_judge() -> Script:
    def extract(body: dict[str, Any]) -> dict[str, Any]:
        text = first_user(body)
        found = [h for h in ("Intro", "Body", "Conclusion") if f"\n{h}\n" in f"\n{text}"]
        return {"reason": "headings found", "output": "\n".join(found)}

    def gate(body: dict[str, Any]) -> dict[str, Any]:
        has = "Conclusion" in first_user(body).split("Summary headings", 1)[-1]
        return {"reason": "all three are there" if has else GATE_REASON, "verdict": has}

    return Script([("Extract all headings", extract), ("contain all three", gate)])

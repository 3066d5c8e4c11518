"""The verdict rules shared by judgement and check nodes: true/false or distinct labels,
score or then (never both), scores in range, targets that exist."""

from __future__ import annotations

from typing import Any

from dagtui.graph.model import BinaryNode, CheckNode, Verdict, field_spec
from dagtui.graph.paths import show_number
from dagtui.graph.validate.base import CheckerBase
from dagtui.text import suggest, verdict_text

#: a verdict's score range, as the model declares it (bound once: checked per verdict)
_SCORE_LOW, _SCORE_HIGH = field_spec(Verdict, "score").bounds or (float("-inf"), float("inf"))


def _norm_label(label: str) -> str:
    return " ".join(label.split()).casefold()


class VerdictChecks(CheckerBase):
    """Verdict lists of binary, non-binary and check nodes."""

    def check_verdicts(self, nid: str, node: Any, *, binary: bool | None) -> None:
        """Shared verdict rules. `binary` True: exactly one true and one false; False: distinct
        labels; None: decide from the values (python checks may return either)."""
        verdicts: list[Verdict] = node.verdicts
        lossy = nid in self.lossy_verdicts
        if not verdicts:
            if not lossy and not (self.raw_has(nid, "verdicts") and
                                  not isinstance(self.raw_nodes[nid]["verdicts"], list)):
                self.add("DAG014", f"'{nid}' has no verdicts, so a run that reaches it cannot "
                         "go on; add verdicts like { verdict = true, score = 10 } and "
                         "{ verdict = false, score = 0 }", ("nodes", nid, "verdicts"),
                         node=nid, fld="verdicts")
            return
        for i, v in enumerate(verdicts):
            self.check_verdict_target(nid, i, v)
        if binary is None:
            binary = all(isinstance(v.verdict, bool) for v in verdicts)
            if not binary and any(isinstance(v.verdict, bool) for v in verdicts):
                first = next(i for i, v in enumerate(verdicts) if isinstance(v.verdict, bool))
                self.add("DAG017", "a python check returns either true/false or labels; "
                         "this one mixes both", self.vpath(nid, first, "verdict"), node=nid,
                         fld="verdicts", at_value=True)
                return
        kind_word = "binary node" if isinstance(node, BinaryNode) else (
            f"{node.check} check" if isinstance(node, CheckNode) else "node")
        if binary:
            wrong = [i for i, v in enumerate(verdicts) if not isinstance(v.verdict, bool)]
            for i in wrong:
                self.add("DAG017", f"a {kind_word} answers true or false, but verdict "
                         f"#{i + 1} is the label {verdicts[i].verdict!r}; write verdict = true "
                         "or verdict = false (use type = \"non_binary\" for labels)",
                         self.vpath(nid, i, "verdict"), node=nid, fld="verdicts",
                         at_value=True)
            if wrong or lossy:
                return
            trues = sum(1 for v in verdicts if v.verdict is True)
            falses = sum(1 for v in verdicts if v.verdict is False)
            if trues != 1 or falses != 1:
                self.add("DAG010", f"a {kind_word} needs exactly one true and one false "
                         f"verdict; it has {trues} true and {falses} false",
                         ("nodes", nid, "verdicts"), node=nid, fld="verdicts")
            return
        wrong = [i for i, v in enumerate(verdicts) if not isinstance(v.verdict, str)]
        for i in wrong:
            self.add("DAG017", f"a non-binary node picks a label, but verdict #{i + 1} is "
                     f"{verdict_text(verdicts[i].verdict, quote=True)}; write a label string (use type = "
                     "\"binary\" for true/false)", self.vpath(nid, i, "verdict"), node=nid,
                     fld="verdicts", at_value=True)
        labels = [(i, v.verdict) for i, v in enumerate(verdicts) if isinstance(v.verdict, str)]
        seen: dict[str, int] = {}
        seen_norm: dict[str, tuple[int, str]] = {}
        for i, label in labels:
            if not label.strip():
                self.add("DAG017", f"verdict #{i + 1} has an empty label; the judge needs a "
                         "name to pick", self.vpath(nid, i, "verdict"), node=nid,
                         fld="verdicts", at_value=True)
                continue
            if label in seen:
                self.add("DAG011", f"label {label!r} appears twice (verdicts #{seen[label] + 1} "
                         f"and #{i + 1}); the judge could not tell them apart",
                         self.vpath(nid, i, "verdict"), node=nid, fld="verdicts",
                         at_value=True)
                continue
            seen[label] = i
            norm = _norm_label(label)
            if norm in seen_norm:
                j, other = seen_norm[norm]
                self.add("DAG106", f"labels {other!r} and {label!r} differ only in case or "
                         "spacing; the judge sees two options that mean the same",
                         self.vpath(nid, i, "verdict"), node=nid, fld="verdicts",
                         at_value=True)
            else:
                seen_norm[norm] = (i, label)
        if len(verdicts) == 1 and not wrong and not lossy:
            self.add("DAG105", f"'{nid}' has a single label, so the judge has no choice to "
                     "make (a call for nothing); add the other labels, or score directly",
                     ("nodes", nid, "verdicts"), node=nid, fld="verdicts")

    def check_verdict_target(self, nid: str, i: int, v: Verdict) -> None:
        has_score = v.score is not None
        has_then = v.then is not None
        name = verdict_text(v.verdict, quote=True)
        if has_score and has_then:
            self.add("DAG012", f"verdict {name} has both score and then; keep score to end the "
                     "path here, or then to continue at another node",
                     self.vpath(nid, i), node=nid, fld="verdicts", at_value=True)
        elif not has_score and not has_then:
            raw_item = self._raw_verdict(nid, i)
            if raw_item is not None and ("score" in raw_item or "then" in raw_item):
                pass  # the loader already reported the unusable value
            else:
                self.add("DAG012", f"verdict {name} has neither score nor then; add score = "
                         "0..10 to end the path here, or then = \"<node>\" to continue",
                         self.vpath(nid, i), node=nid, fld="verdicts", at_value=True)
        s = v.score
        if s is not None and not _SCORE_LOW <= s <= _SCORE_HIGH:  # NaN fails this too
            self.add("DAG013", f"verdict {name}: score {show_number(s)} must be a number from "
                     f"{_SCORE_LOW:g} to {_SCORE_HIGH:g}, like 7 or 7.5 (the final score is "
                     "score/10)",
                     self.vpath(nid, i, "score"), node=nid, fld="verdicts", at_value=True)
        if has_then and v.then not in self.graph.nodes and v.then not in self.raw_nodes:
            self.add("DAG008", f"verdict {name}: then = '{v.then}' is not a node"
                     f"{suggest(v.then or '', self.graph.nodes)}", self.vpath(nid, i, "then"),
                     node=nid, fld="verdicts", at_value=True)

    def _raw_verdict(self, nid: str, i: int) -> dict[str, Any] | None:
        index = self.verdict_index.get(nid)
        raw_node = self.raw_nodes.get(nid)
        if index is None or i >= len(index) or not isinstance(raw_node, dict):
            return None
        item = raw_node["verdicts"][index[i]]
        return item if isinstance(item, dict) else None

"""Per-node checks: params, the turn window, and what each node type needs (tasks, judgements,
G-Eval and metric leaves); check nodes and verdict lists have their own modules."""

from __future__ import annotations

from dagtui.graph.mapping import aggregate_problem, is_fraction
from dagtui.graph.model import (
    BinaryNode,
    GEvalNode,
    MapNode,
    MetricNode,
    NodeBase,
    NonBinaryNode,
    TaskNode,
)
from dagtui.graph.unsure import CANNOT_TELL, unsure_problem
from dagtui.graph.validate import environment
from dagtui.graph.validate.check_nodes import CheckNodeChecks
from dagtui.graph.validate.hints import checkable_hint
from dagtui.kinds import kind_of
from dagtui.text import escape_controls, suggest


class NodeChecks(CheckNodeChecks):
    """Each node by its type: the checks every node gets, then its kind's own
    (`NodeKind.validate`, which calls one of the `check_*` methods below for the built-in
    types)."""

    def check_node(self, nid: str, node: NodeBase) -> None:
        self.check_params(nid, node)
        if node.turn_window is not None:
            if not self.multi:
                self.add("DAG111", "turn_window only applies to multi-turn graphs; set "
                         "multi_turn = true in [metric] or remove it", ("nodes", nid,
                         "turn_window"), node=nid, fld="turn_window")
            else:
                start, end = node.turn_window
                if start > end or start < 0:
                    self.add("DAG004", f"turn_window [{start}, {end}] must be [start, end] "
                             "with 0 <= start <= end", ("nodes", nid, "turn_window"), node=nid,
                             fld="turn_window", at_value=True)
        validate = kind_of(node).validate  # what the node's type needs on top
        if validate is not None:
            validate(self, nid, node)

    def check_params(self, nid: str, node: NodeBase) -> None:
        for k, p in enumerate(node.params):
            if not isinstance(p, str) or p in self.mode_params:
                continue
            self.add("DAG006", self.param_problem(p), ("nodes", nid, "params", k), node=nid,
                     fld="params", at_value=True)

    def no_input(self, nid: str, node: NodeBase) -> bool:
        """True when the node would be prompted with nothing but its own text."""
        return not node.params and not any(
            isinstance(self.graph.nodes.get(p), TaskNode) for p in self.parents.get(nid, ())
        )

    def check_task(self, nid: str, node: TaskNode) -> None:
        if self.raw_has(nid, "verdicts"):
            self.add("DAG019", "a task node has no verdicts: it extracts evidence for its "
                     "children; put the verdicts on a binary or non_binary child and list it "
                     "in children", ("nodes", nid, "verdicts"), node=nid, fld="verdicts")
        self.require(nid, node, "instructions", "tell the judge what to extract")
        self.require(nid, node, "output_label", "it names the evidence in its children's "
                     "prompts (for example \"Summary headings\")")
        listed: set[str] = set()  # a set: rescanning children[:k] is O(k²) at 100,000 children
        for k, child in enumerate(node.children):
            path = ("nodes", nid, "children", k)
            target = self.graph.nodes.get(child)
            if child in listed:
                self.add("DAG019", f"'{child}' is listed twice in children; list each child "
                         "once", path, node=nid, fld="children", at_value=True)
                continue
            listed.add(child)
            if target is None:
                if child not in self.raw_nodes:
                    self.add("DAG008", f"children names '{child}', which is not a node"
                             f"{suggest(child, self.graph.nodes)}", path, node=nid,
                             fld="children", at_value=True)
            elif target.is_scored_leaf and not kind_of(target).per_item:
                what = f"a {kind_of(target).leaf_word} leaf"
                self.add("DAG019", f"'{child}' is {what}, which cannot receive a "
                         "task's evidence; point a verdict at it (then = "
                         f"\"{child}\") instead", path, node=nid, fld="children",
                         at_value=True)
        if not node.children and not self.missing(nid, "instructions", node.instructions):
            self.add("DAG103", f"task '{nid}' has no children, so the evidence it extracts "
                     "is shown to nobody (a judge call for nothing); add the nodes that "
                     "should read it to children", ("nodes", nid), node=nid, fld="children")
        if self.no_input(nid, node):
            self.add("DAG101", f"task '{nid}' has no params and no task parent, so its prompt "
                     "holds nothing but its instructions; add params (for example "
                     "[\"actual_output\"])", ("nodes", nid), node=nid, fld="params")

    def check_judgement(self, nid: str, node: BinaryNode | NonBinaryNode) -> None:
        self.require(nid, node, "criteria", "it is the question the judge answers")
        if not self.missing(nid, "criteria", node.criteria) and self.no_input(nid, node):
            self.add("DAG101", f"'{nid}' has no params and no task parent, so the judge sees "
                     "only the criteria and answers anyway (DeepEval's silent failure); add "
                     "params or make it a child of a task that extracts the evidence",
                     ("nodes", nid), node=nid, fld="params")
        yes_no = kind_of(node).boolean_verdicts(node)  # a yes/no question is often code
        if yes_no and node.criteria:
            hint = checkable_hint(node.criteria)
            if hint:
                kind, how = hint
                self.add("DAG109", f"these criteria look checkable in code: a check node "
                         f"with {how} answers this for free, instantly and the same way "
                         "every time; keep the judge for what needs judgement",
                         ("nodes", nid, "criteria"), node=nid, fld="criteria", at_value=True)
        self.check_verdicts(nid, node, binary=yes_no)
        self.check_unsure(nid, node)

    def check_unsure(self, nid: str, node: BinaryNode | NonBinaryNode | MapNode) -> None:
        """`unsure`: a value `dagtui.graph.unsure` reads, a `then` that names a node, and no
        label spelt like the unsure answer (it could not be told apart)."""
        value = node.unsure
        if value is None:
            return
        path = ("nodes", nid, "unsure")
        problem = unsure_problem(value)
        if problem is not None:
            self.add("DAG026", problem, path, node=nid, fld="unsure", at_value=True)
            return
        rule = node.unsure_rule
        if rule is not None and rule.then is not None:
            if rule.then not in self.graph.nodes and rule.then not in self.raw_nodes:
                self.add("DAG008", f"unsure's then names '{rule.then}', which is not a node"
                         f"{suggest(rule.then, self.graph.nodes)}", path, node=nid,
                         fld="unsure", at_value=True)
            if node.is_scored_leaf:
                self.add("DAG026", "a fraction map node is a leaf: its unsure can end the "
                         "case (\"unscored\", \"human\") or score it ({ score = N }), not "
                         "continue at another node", path, node=nid, fld="unsure",
                         at_value=True)
        if any(v.verdict == CANNOT_TELL for v in node.verdicts):
            self.add("DAG026", f"a verdict is labelled \"{CANNOT_TELL}\", the answer unsure "
                     "offers the judge; rename the label", path, node=nid, fld="unsure")

    def check_map(self, nid: str, node: MapNode) -> None:
        """A map node: criteria, an aggregate it can compute, the list of exactly one task
        parent, verdicts that fit the aggregate, and no DeepEval export (DAG119)."""
        self.require(nid, node, "criteria", "it is the question asked of each item")
        problem = aggregate_problem(node.aggregate)
        if problem is not None:
            self.add("DAG026", problem, ("nodes", nid, "aggregate"), node=nid,
                     fld="aggregate", at_value=True)
        tasks = [p for p in self.parents.get(nid, ())
                 if isinstance(self.graph.nodes.get(p), TaskNode)]
        if len(tasks) != 1:
            what = "no task parent" if not tasks else f"{len(tasks)} task parents"
            self.add("DAG026", f"map node '{nid}' judges the items of one task's list and has "
                     f"{what}; list it in the children of the task that extracts the items",
                     ("nodes", nid), node=nid, fld="criteria")
        if is_fraction(node.aggregate):
            if node.verdicts:
                self.add("DAG026", "aggregate = \"fraction\" makes the node a leaf scoring "
                         "the share of passing items; it takes no verdicts (remove them, or "
                         "aggregate with all, any or { at_least = share })",
                         ("nodes", nid, "verdicts"), node=nid, fld="verdicts")
        elif problem is None:
            self.check_verdicts(nid, node, binary=True)
        self.check_unsure(nid, node)
        self.add("DAG119", f"map node '{nid}' judges each item with a call of its own, which "
                 "DeepEval's DAG cannot express: this graph has no DeepEval export",
                 ("nodes", nid, "type"), node=nid, fld="type")

    def check_geval(self, nid: str, node: GEvalNode) -> None:
        self.require(nid, node, "name", "G-Eval reports its score under this name")
        self.require(nid, node, "params", "the test-case fields G-Eval scores (for example "
                     "[\"actual_output\"])")
        has_steps = bool(node.evaluation_steps) and any(
            isinstance(s, str) and s.strip() for s in node.evaluation_steps or []
        )
        has_criteria = bool(node.criteria and node.criteria.strip())
        if not has_steps and not has_criteria:
            if not (self.raw_has(nid, "evaluation_steps") and node.evaluation_steps is None) \
                    and not (self.raw_has(nid, "criteria") and node.criteria is None):
                self.add("DAG003", "a G-Eval leaf needs evaluation_steps (preferred) or "
                         "criteria", ("nodes", nid), node=nid, fld="evaluation_steps")
        elif has_criteria and not has_steps:
            self.add("DAG107", "this G-Eval leaf has criteria but no evaluation_steps: every "
                     "run pays an extra call to invent steps, and they change from run to run; "
                     "write the steps down", ("nodes", nid, "criteria"), node=nid,
                     fld="evaluation_steps")

    def check_metric_leaf(self, nid: str, node: MetricNode) -> None:
        """A DeepEval metric leaf: a class name and keyword arguments that can be written as
        Python (the export writes `Class(key=value)`), and DeepEval to run it (DAG116)."""
        self.require(nid, node, "metric", "the DeepEval metric class, for example "
                     "\"AnswerRelevancyMetric\"")
        if node.metric and not node.metric.isidentifier():
            self.add("DAG004", f"metric '{escape_controls(node.metric)}' is not a class name; "
                     "write the name of a class in deepeval.metrics, for example "
                     "\"AnswerRelevancyMetric\"", ("nodes", nid, "metric"), node=nid,
                     fld="metric", at_value=True)
        for key in node.args:
            if not key.isidentifier() or key in ("model", "self"):
                why = ("the judge model is the node's `model` (or the run's), not an argument"
                       if key == "model" else "keys are the metric's keyword arguments")
                self.add("DAG004", f"args key '{escape_controls(key)}' cannot be passed to "
                         f"the metric: {why}", ("nodes", nid, "args", key), node=nid,
                         fld="args", at_value=True)
        if node.metric and not environment.deepeval_installed():
            self.add("DAG116", f"metric leaf '{nid}' runs DeepEval's {node.metric}, and "
                     "DeepEval is not installed here (pip install deepeval); run, test and "
                     "step fail at this node until it is", ("nodes", nid, "metric"), node=nid,
                     fld="metric", at_value=True)

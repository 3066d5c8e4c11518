"""`dagtui schema [KIND] [-o FILE]`: a JSON Schema for dagtui's file formats.

The files a user writes (graph, cases, suite) are for editors; the documents dagtui writes
(report, results, trace, calibration) are for the programs that read them: their models live in
`dagtui.report.documents`, imported only when one of them is asked for.

Editors with TOML schema support (taplo, Even Better TOML) read a `#:schema ./graph.schema.json`
first line and then complete keys, show each key's meaning and underline a misspelt one while
it is typed, long before `dagtui validate` runs. The schema is generated from the model's own
dataclasses (their fields and annotations, the keys the loaders accept) and from what each
field's metadata says of it (`dagtui.graph.model.field_specs`: its meaning, shown by editors on
hover, its range and its allowed values), so a field added to the model appears here without
anyone keeping a second description in step. Every table is
closed (`additionalProperties: false`): a typo such as `critera` is exactly what the schema is
for.

pydantic builds the schema (it is installed with litellm). It is imported inside `build_schema`
only: the core and the editor must start without it (see tests/test_core_imports.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal

from dagtui.exitcodes import ExitCode
from dagtui.text import say

#: the files a user writes, then the documents dagtui writes (`dagtui.report.documents`)
FILE_KINDS = ("graph", "cases", "suite")
DOCUMENT_KINDS = ("report", "results", "trace", "calibration")
KINDS = FILE_KINDS + DOCUMENT_KINDS

def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "schema",
        help="print a JSON Schema for graph, cases or suite files (editor completion) or "
             "for the report, results, trace and calibration documents dagtui writes",
        description="Print a JSON Schema for a dagtui file format. Save it beside your "
        "graphs and start a TOML file with `#:schema ./graph.schema.json`: editors with TOML "
        "schema support (taplo, Even Better TOML) then complete and check its keys. The "
        "report, results and trace kinds describe what `dagtui run` writes (--json FILE, "
        "FILE.results.jsonl a line at a time, --trace-dir), calibration what `dagtui "
        "calibrate --json` writes, for the programs that read them.",
    )
    p.add_argument("kind", nargs="?", default="graph", choices=KINDS, metavar="KIND",
                   help=f"one of: {', '.join(KINDS)} (default: graph)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    text = json.dumps(build_schema(args.kind), indent=2, ensure_ascii=False) + "\n"
    if not args.output or args.output == "-":
        sys.stdout.write(text)
        return ExitCode.OK
    from dagtui.safewrite import atomic_write

    try:
        atomic_write(args.output, text)
    except OSError as exc:  # read-only, a directory, no such parent: exit 2, nothing written
        say(f"dagtui schema: cannot write {args.output}: {exc.strerror or exc}",
              file=sys.stderr)
        return ExitCode.USAGE
    say(f"dagtui schema: wrote {args.output} ({args.kind})", file=sys.stderr)
    return ExitCode.OK


def build_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one file format: "graph", "cases" or "suite", or
    a document dagtui writes: "report", "results" (a line of the results file), "trace" or
    "calibration"."""
    if kind in DOCUMENT_KINDS:
        from dagtui.report.documents import document_schema

        return document_schema(kind)
    builder = _Builder()
    if kind == "graph":
        root = builder.graph()
        title = "dagtui graph file"
    elif kind == "cases":
        root = builder.cases()
        title = "dagtui cases file"
    elif kind == "suite":
        root = builder.suite()
        title = "dagtui suite file"
    else:
        raise ValueError(f"unknown schema kind {kind!r}; use one of: {', '.join(KINDS)}")
    from pydantic import TypeAdapter

    schema = TypeAdapter(root).json_schema(by_alias=True)
    schema = _tidy(schema)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": title,
            **{k: v for k, v in schema.items() if k != "title"}}


class _Builder:
    """Turns model dataclasses into closed pydantic models, one per TOML table."""

    def __init__(self) -> None:
        self._made: dict[type, Any] = {}

    # -- the three formats ---------------------------------------------------------------
    def graph(self) -> Any:
        from pydantic import Field

        from dagtui.graph.model import NODE_CLASSES, Metric, Verdict

        self._verdict = self.record(Verdict, Verdict.toml_keys())
        nodes = []
        for ntype, cls in NODE_CLASSES.items():
            nodes.append(self.record(cls, cls.FIELDS, name=f"{_camel(ntype)}Node",
                                     type_literal=ntype, required=cls.REQUIRED))
        node = _generic(typing.Annotated, _generic(typing.Union, *nodes),
                        Field(discriminator="type"))
        return self.model("Graph", "A dagtui graph: [metric] settings and [nodes.<id>] tables.", {
            "metric": (self.record(Metric, Metric.toml_keys()), "The metric's settings.",
                       None),
            "nodes": (_generic(dict, str, node), "The nodes, by id: [nodes.<id>].", None),
        })

    def cases(self) -> Any:
        from dagtui.run.cases import LABEL_FIELDS, MULTI_TURN_FIELDS, SINGLE_TURN_FIELDS

        case = self.model("Case", "One test case: its fields, and optional human labels.",
                          {key: (_CASE_TYPES.get(key, Any), _CASE_DOCS.get(key), None)
                           for key in ("name", "id", *dict.fromkeys(
                               SINGLE_TURN_FIELDS + MULTI_TURN_FIELDS + LABEL_FIELDS),
                                       "additional_metadata")})
        return self.model("CasesFile", "A TOML cases file: [[cases]] tables.", {
            "cases": (_generic(list, case), "The test cases.", ...),
        })

    def suite(self) -> Any:
        from dagtui.graph.model import CheckNode
        from dagtui.suite.loader import CHECK_KEYS, RULE_KEYS
        from dagtui.suite.model import FILTER_OPS, STATUSES, FilterCond, Rule, Sample, SuiteMeta

        check = self.record(CheckNode, CHECK_KEYS, name="InlineCheck", required=("check",))
        overrides = {
            "check": check,
            "status": _generic(Literal, *STATUSES),
            "sample": self.record(Sample, ("rate", "seed")),
            "filter": _generic(list, self.record(FilterCond, ("field", "op", "value"), overrides={
                "op": _generic(Literal, *FILTER_OPS),
            })),
        }
        rule = self.record(Rule, RULE_KEYS, overrides=overrides)
        return self.model("SuiteFile", "A dagtui suite: rules chained by depends_on.", {
            "suite": (self.record(SuiteMeta, ("name", "cases", "labels", "concurrency",
                                              "description"), name="Suite"),
                      "The suite's settings.", None),
            "rules": (_generic(dict, str, rule), "The rules, by id: [rules.<id>].", None),
        })

    # -- building blocks -----------------------------------------------------------------
    def record(self, cls: type, keys: typing.Iterable[str], *, name: str | None = None,
               type_literal: str | None = None, required: tuple[str, ...] = (),
               overrides: Mapping[str, Any] | None = None) -> Any:
        """A closed model of `cls` holding the TOML keys `keys`, typed from its annotations.

        A key is required when its dataclass field has no default (and for nodes, `type`
        always: it picks the node class)."""
        from dagtui.graph.model import NO_DEFAULT, field_specs

        specs = field_specs(cls)
        fields: dict[str, tuple[Any, str | None, Any]] = {}
        table = name or cls.__name__
        for key in keys:
            spec = specs[key]
            if overrides and key in overrides:
                ann = overrides[key]
            elif key == "type" and type_literal is not None:
                ann = _generic(Literal, type_literal)
            elif spec.choices is not None and key != "type":
                ann = _chosen(spec.annotation, spec.choices)
            else:
                ann = self._annotation(spec.annotation, key)
            if (key == "type" and type_literal is not None) or key in required:
                default: Any = ...
            else:
                default = ... if spec.default is NO_DEFAULT else spec.default
            bounds = spec.bounds
            fields[key] = (ann, spec.meaning or None,
                           default if bounds is None else (default, bounds))
        return self.model(table, _doc(cls), fields)

    def model(self, name: str, doc: str | None,
              fields: Mapping[str, tuple[Any, str | None, Any]]) -> Any:
        """A pydantic model named `name` that refuses unknown keys. A key that cannot be a
        field name (`schema` is a BaseModel method) gets a stand-in name and the key as its
        alias; `type` keeps its own name, since it is the discriminator of the node union."""
        import keyword

        from pydantic import BaseModel, ConfigDict, Field, create_model

        spec: dict[str, Any] = {}
        for i, (key, (ann, description, default)) in enumerate(fields.items()):
            bounds: dict[str, Any] = {}
            if isinstance(default, tuple) and len(default) == 2 and isinstance(default[1], tuple):
                default, (low, high) = default
                bounds = {"ge": low, "le": high}
            if default is None:  # TOML has no null: an absent key is the default
                ann = ann | None if ann is not Any else ann
            safe = (key.isidentifier() and not keyword.iskeyword(key)
                    and not key.startswith("_") and not hasattr(BaseModel, key))
            spec[key if safe else f"field_{i}"] = (ann, Field(default=default, alias=key, description=description,
                                        **bounds))
        return create_model(name, __config__=ConfigDict(extra="forbid", title=name),
                            __doc__=doc, **spec)

    def _annotation(self, ann: Any, key: str) -> Any:
        """A model annotation as the schema should state it: records become their closed
        models, `int | float` one number, `None` dropped (an absent key is TOML's none)."""
        from dagtui.graph.model import Verdict

        if ann is Verdict:
            return self._verdict
        origin, args = typing.get_origin(ann), typing.get_args(ann)
        if origin in (types.UnionType, typing.Union):
            rest = [a for a in args if a is not type(None)]
            if float in rest and int in rest:
                rest.remove(int)
            mapped = [self._annotation(a, key) for a in rest]
            out = mapped[0]
            for m in mapped[1:]:
                out = out | m
            return out
        if origin is list:
            return _generic(list, self._annotation(args[0], key))
        if origin is tuple:
            return _generic(tuple, *(self._annotation(a, key) for a in args))
        if origin is dict:
            return _generic(dict, str, self._annotation(args[1], key))
        if dataclasses.is_dataclass(ann) and isinstance(ann, type):
            return self.record(ann, [f.name for f in dataclasses.fields(ann)])
        return ann


def _chosen(ann: Any, choices: typing.Sequence[Any]) -> Any:
    """A field with allowed values as the schema states it: one of them, or for a list, a
    list of them (the case fields `params` may name: completion in the editor)."""
    one = _generic(Literal, *choices)
    return _generic(list, one) if typing.get_origin(ann) is list else one


def _doc(cls: type) -> str | None:
    """The first paragraph of a class docstring, on one line (an editor's hover text)."""
    doc = cls.__doc__ or ""
    if doc.startswith(cls.__name__ + "("):  # dataclasses' generated signature
        return None
    first = doc.strip().split("\n\n")[0]
    return " ".join(first.split()) or None


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _generic(origin: Any, *args: Any) -> Any:
    """`origin[args]` made at run time: the schema's types are built from the model's data,
    which a type checker cannot follow (`Literal[tuple(KINDS)]` reads as a bad type to it)."""
    return origin[args if len(args) > 1 else args[0]]


_TOOL = dict[str, Any] | str
_CASE_TYPES: dict[str, Any] = {
    "name": str,
    "id": str | int,
    "input": str,
    "actual_output": str,
    "expected_output": str,
    "context": list[str],
    "retrieval_context": list[str],
    "tools_called": list[_TOOL],
    "expected_tools": list[_TOOL],
    "metadata": dict[str, Any],
    "additional_metadata": dict[str, Any],
    "tags": list[str],
    "turns": list[dict[str, Any]],
    "scenario": str,
    "expected_outcome": str,
    "user_description": str,
    "chatbot_role": str,
    "expected": dict[str, Any],
    "expected_score": float,
    "annotations": list[dict[str, Any]],
}
_CASE_DOCS: dict[str, str] = {
    "name": "The case's name (unique in the file).",
    "turns": "Multi-turn: the conversation, each turn with role and content.",
    "expected": "Human labels: node id -> verdict (or evidence text, or the items a task "
                "node's evidence must contain).",
    "expected_score": "The score (0..1) the graph should give.",
    "annotations": "Each annotator's labels: [{by, expected, expected_score}], beside the "
                   "adjudicated 'expected'.",
}


def _tidy(schema: Any) -> Any:
    """Drop what TOML cannot say from pydantic's output: `null` members of `anyOf` (an
    absent key is TOML's none) and `"default": null`."""
    if isinstance(schema, dict):
        out = {k: _tidy(v) for k, v in schema.items()}
        if out.get("default", 0) is None:
            del out["default"]
        any_of = out.get("anyOf")
        if isinstance(any_of, list):
            kept = [s for s in any_of if s != {"type": "null"}]
            if len(kept) == 1:
                del out["anyOf"]
                out = {**kept[0], **out}
            else:
                out["anyOf"] = kept
        return out
    if isinstance(schema, list):
        return [_tidy(v) for v in schema]
    return schema

"""`RunSpec`: every setting of a run, in one typed, frozen value.

A run (`dagtui run`, `dagtui test`'s neighbours `calibrate` and `step`, `dagtui.evaluate`,
`assert_graph`, the DeepEval and Inspect integrations, the editor's F5) is a target, its
cases, a `RunSpec` and the sinks that receive each finished case
(`dagtui.run.execute.execute`). The command line builds a spec from its flags
(`dagtui.commands.flags.run_spec`), the Python API from its keyword arguments; past
`dagtui/commands/` nothing reads an `argparse.Namespace`.

The environment fallbacks of a run are resolved here, once, by `RunSpec.from_env`:
`DAGTUI_MODEL` (the judge model when none is named; the graph's pinned `[metric].model`
comes after it, `dagtui.judges.factory.model_for`), `DAGTUI_SCHEDULER` (a Dask cluster
when `--scheduler` is not given), `DAGTUI_MEASURE_UNGATED` (suites: measure the calls
gating saved) and `DAGTUI_ALLOW_PYTHON` / `DAGTUI_PYTHON_PATH` (consent for python check
nodes, `dagtui.graph.checks.PythonConsent`). Credentials (`DAGTUI_API_KEY`, the providers'
own variables) stay with the judge that sends the request (`dagtui.judges.litellm_judge`),
so a key is looked up where it is used and never copied into a value that is pickled to
Dask workers or printed.

Adding a run setting: a field here (with its default), its flag in the command that offers
it (`dagtui.commands.run.register` and `dagtui.commands.flags.run_spec`), and the line of
`dagtui.run.execute` (or the judge factory) that uses it.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dagtui.graph.checks import PythonConsent

if TYPE_CHECKING:
    from dagtui.judges.base import Judge
    from dagtui.run.shard import Shard

#: the environment variables `from_env` reads
MODEL_ENV = "DAGTUI_MODEL"
SCHEDULER_ENV = "DAGTUI_SCHEDULER"
MEASURE_UNGATED_ENV = "DAGTUI_MEASURE_UNGATED"


@dataclass(frozen=True)
class RunSpec:
    """How to run: the judge and its endpoint, the limits on calls, the cache, where the
    cases run (in process or on Dask), which part of them, and where results go."""

    #: who answers: a judge name (`labels`, `replay`, `litellm`, ...), a litellm model
    #: string, or a `Judge` instance; None: a litellm judge on `model`
    judge: str | Judge | None = None
    #: the litellm model (None: the graph's pinned `[metric].model`, else the default)
    model: str | None = None
    api_base: str | None = None
    api_key: str | None = None
    #: how requests reach the model: "auto" or "litellm" (`dagtui.judges.litellm_judge`)
    via: str = "auto"
    #: the judge's temperature (None: the judge's own default, 0)
    temperature: float | None = None
    #: cases and calls in flight over the whole run
    concurrency: int = 8
    #: judge requests a minute over the whole run (None: no limit)
    rpm: float | None = None
    #: seconds per judge call
    timeout: float = 60.0
    #: retries per call on 429/5xx/timeouts
    retries: int = 3
    #: the judge cache: its directory (None: the graph's `.dagtui`), off, or asked again
    cache_dir: str | None = None
    no_cache: bool = False
    refresh: bool = False
    #: Dask worker processes (an int or "auto"; 1: in process) and an existing cluster
    workers: int | str = 1
    scheduler: str | None = None
    #: run only this part of the cases (`dagtui.run.shard`)
    shard: Shard | None = None
    #: answers per node and case (calibration)
    samples: int = 1
    #: one trace JSON per finished case (per evaluated case and rule for a suite)
    trace_dir: str | None = None
    #: one JSON line per finished case, as it finishes (`dagtui.report.stream`)
    stream: str | None = None
    #: the reports written at the end (the command writes them)
    json_out: str | None = None
    junit: str | None = None
    #: the results kept in a temporary file in dataset order, not in memory (a large
    #: dataset's flat memory: `dagtui.report.stream.ResultLog`)
    results_on_disk: bool = False
    #: no per-case (per-rule) lines
    quiet: bool = False
    #: consent for python check nodes (never from the graph file)
    python: PythonConsent = field(default_factory=PythonConsent)
    #: bad labels ignored with a warning instead of refused
    lenient: bool = False
    #: suites: also run every active rule on every case to measure what gating saved
    measure_ungated: bool = False
    #: graphs: the calibration to judge the run by (a file; None: the saved one; False: none)
    calibration: str | bool | None = None
    #: further options for a litellm judge (the API's `**opts`: `max_tokens`, `extra`, ...)
    judge_options: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_env(cls, *, allow_python: bool = False,
                 python_path: Iterable[str | os.PathLike[str]] = (),
                 environ: Mapping[str, str] | None = None, **settings: Any) -> RunSpec:
        """A spec from `settings` (field names), each unset one that has an environment
        fallback taken from `environ` (default `os.environ`): see the module docstring.
        `allow_python` / `python_path` are the consent for python check nodes, joined
        with the process environment's (`PythonConsent.from_env`, which reads `os.environ`
        whatever `environ` is)."""
        env = os.environ if environ is None else environ
        if not settings.get("model"):
            settings["model"] = env.get(MODEL_ENV) or None
        if not settings.get("scheduler"):
            settings["scheduler"] = env.get(SCHEDULER_ENV) or None
        if not settings.get("measure_ungated"):
            settings["measure_ungated"] = env.get(MEASURE_UNGATED_ENV, "") not in ("", "0")
        if "python" not in settings:
            settings["python"] = PythonConsent.from_env(allow_python, tuple(python_path))
        return cls(**{k: v for k, v in settings.items() if v is not None or k in _NONE_OK})

    def replace(self, **changes: Any) -> RunSpec:
        """This spec with `changes` (a frozen value is never edited in place)."""
        return dataclasses.replace(self, **changes)

    def judge_kwargs(self, *, cache: Any) -> dict[str, Any]:
        """The keyword arguments `dagtui.judges.factory.make_judge` gets for this spec
        (`model`, endpoint, limits; `cache` as the caller opened it)."""
        options: dict[str, Any] = {
            "model": self.model, "api_base": self.api_base, "api_key": self.api_key,
            "cache": cache, "concurrency": self.concurrency, "timeout": self.timeout,
            "retries": self.retries, "via": self.via, **self.judge_options}
        if self.rpm:
            options["rpm"] = self.rpm
        if self.temperature is not None:
            options["temperature"] = self.temperature
        return options


#: fields whose None is a value to keep (not "unset, use the default")
_NONE_OK = frozenset({"calibration"})

"""A package's names imported on first use (PEP 562): `dagtui`, `dagtui.judges` and
`dagtui.suite` re-export names from their modules this way, so importing one module of the
package (as `dagtui edit` does before its first frame) does not import all the others.

Before: `import dagtui` alone cost ~20 ms (the graph model, loader and diagnostics), and
importing `dagtui.judges.prompts` for the calibration badges ~40 ms (every judge, through
`dagtui.judges`'s own imports).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(package: str, table: Mapping[str, str],
                    namespace: dict[str, Any]) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: `table` maps a name to the module (relative to
    `package`) that defines it; the value is kept in `namespace` (the package's globals), so
    each name is looked up once."""

    def __getattr__(name: str) -> Any:
        if name in table:
            value = getattr(importlib.import_module(f".{table[name]}", package), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__

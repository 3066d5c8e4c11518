"""Node kinds: one `NodeKind` per node type, looked up by type (`kind_of`, `find_kind`).

`kind` holds the class and the registry, `answers` the answer shapes a judge may give,
`builtin` the six built-in kinds (registered when this package is imported).
"""

from __future__ import annotations

from dagtui.kinds import builtin as builtin
from dagtui.kinds.kind import (
           NodeKind,
           Request,
           all_kinds,
           decides,
           extracts,
           find_kind,
           icon,
           kind_of,
           kind_text,
           register,
           scores,
           unregister,
)

__all__ = ["NodeKind", "Request", "all_kinds", "decides", "extracts", "find_kind", "icon",
           "kind_of", "kind_text", "register", "scores", "unregister"]

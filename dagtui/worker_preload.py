"""Preloaded by the worker pool's fork server, so every worker starts with litellm loaded.

`dagtui.workers` starts its processes from a `forkserver` whose preload list names this
module, and starts that server with PRELOAD_FLAG set: litellm's multi-second import is then
paid once, in the server (which has no threads, so forking from it is safe), and each
worker is a copy that is warm at birth. Without the flag (any other import, e.g. a tool
walking the package) importing this module does nothing: the core still imports litellm
only when a judge call needs it.
"""

from __future__ import annotations

import os

PRELOAD_FLAG = "DAGTUI_PRELOAD_LITELLM"

if os.environ.get(PRELOAD_FLAG) == "1":
    from .judges.litellm_judge import import_litellm

    import_litellm()

"""Imported once by the worker pool's fork server, so every worker starts with litellm loaded.

`dagtui.workers` starts its processes from a `forkserver` whose preload list names this
module: litellm's multi-second import is paid once, in the server (which has no threads
then, so forking from it is safe), and each worker is a copy that is warm at birth. Nothing
else imports this module; the core still imports litellm only when a judge call needs it.
"""

from __future__ import annotations

from .judges.litellm_judge import import_litellm

import_litellm()

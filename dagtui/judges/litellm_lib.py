"""litellm itself: imported once, quietly, only when a call needs it.

The import takes seconds and ~200 MB, so nothing imports litellm at module level: the litellm
route (`dagtui.judges.litellm_judge`), the capability lookup for a model the bundled map
does not place (`dagtui.judges.capabilities`) and the commands that need it call
`import_litellm`. Its bundled cost map is used (no network at import) and its logging is
kept off the terminal.
"""

from __future__ import annotations

import functools
import logging
import os
from typing import Any

_litellm: Any = None


def import_litellm() -> Any:
    """Import litellm once, quietly, with its bundled cost map."""
    global _litellm
    if _litellm is not None:
        return _litellm
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ.setdefault("LITELLM_LOG", "CRITICAL")
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "httpx", "openai"):
        logger = logging.getLogger(name)
        logger.setLevel(logging.CRITICAL)
        logger.propagate = False
    import litellm

    from dagtui.judges.transport import bound_litellm

    bound_litellm(litellm)  # every client litellm builds reads a bounded body
    litellm.suppress_debug_info = True
    litellm.drop_params = True
    litellm.telemetry = False
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm"):
        logger = logging.getLogger(name)
        logger.setLevel(logging.CRITICAL)
        logger.handlers[:] = [logging.NullHandler()]
        logger.propagate = False
    _litellm = litellm
    return litellm


@functools.cache
def internal_call_flag() -> Any:
    """litellm's own marker for calls it makes internally (a ContextVar), or None when this
    litellm version has none. A call so marked skips litellm's success/failure logging and
    callback bookkeeping: work whose output dagtui keeps off the terminal anyway (~1 ms CPU
    per call), and whose logging worker binds to one event loop, which lanes would make it
    hop between. Looked up once (a failed import would search the path on every call)."""
    try:
        from litellm._internal_context import is_internal_call
    except ImportError:
        return None
    return is_internal_call

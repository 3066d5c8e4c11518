"""What the validator asks of this machine: whether DeepEval is installed (metric leaves
run it, DAG116)."""

from __future__ import annotations

import functools


@functools.cache
def deepeval_installed() -> bool:
    """Whether DeepEval can be imported here, found without importing it (that takes
    seconds, and validate runs on every keystroke in the editor); looked up once."""
    import importlib.util

    try:
        return importlib.util.find_spec("deepeval") is not None
    except (ImportError, ValueError):
        return False

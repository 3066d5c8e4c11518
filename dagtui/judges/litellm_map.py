"""litellm's bundled model map (`model_prices_and_context_window_backup.json` in its
package), found with `importlib.util.find_spec` and read as JSON: never by importing
litellm, which takes seconds. One reader for its two users: the OpenAI-compatible route's
prices and capabilities (dagtui/judges/pricemap.py) and `validate`'s misspelt-model check
(DAG118, dagtui/graph/validate/models.py). A core module: no judge, no Textual, so `validate`
pays for neither.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from pathlib import Path
from typing import Any

FILENAME = "model_prices_and_context_window_backup.json"


@functools.cache
def map_path() -> Path | None:
    """The bundled map inside the installed litellm package (not imported), or None."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(folder) / FILENAME
        if path.is_file():
            return path
    return None


@functools.cache
def model_map() -> dict[str, Any]:
    """The map as a dict (empty when litellm or its file is missing or unreadable)."""
    path = map_path()
    if path is None:
        return {}
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}

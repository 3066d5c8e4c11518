"""The environment variables of the consent a python check node needs
(`dagtui.graph.checks.PythonConsent`): in a module of their own, so the command line can name
them in its help (`dagtui edit --help`, built before the editor's first frame) without
importing the check kinds.
"""

from __future__ import annotations

#: set to 1 (true, yes, on) it does what --allow-python does
ALLOW_ENV = "DAGTUI_ALLOW_PYTHON"
#: more folders to look for python check modules in (os.pathsep between them)
PATH_ENV = "DAGTUI_PYTHON_PATH"

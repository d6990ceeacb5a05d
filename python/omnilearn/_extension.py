"""Loads the compiled extension omnilearn._core.

An installed package (pip) has _core next to this file. A CMake build puts it in <build>/python/omnilearn/: point
OMNILEARN_EXTENSION_DIR at that folder to use the source package with it (scripts/test.sh does).
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

ENV_VAR = "OMNILEARN_EXTENSION_DIR"


def load_core(package_path: list[str]):
    """Imports omnilearn._core, from OMNILEARN_EXTENSION_DIR when it is set. Raises ImportError naming what to do."""
    folder = os.environ.get(ENV_VAR)
    if folder:
        path = Path(folder)
        if not any(path.glob("_core*.so")) and not any(path.glob("_core*.pyd")):
            raise ImportError(f"{ENV_VAR}={folder}: no _core extension there (build the project: "
                              "cmake --build build --target omnilearn_python)")
        if str(path) not in package_path:
            package_path.insert(0, str(path))
    try:
        return importlib.import_module("omnilearn._core")
    except ImportError as e:
        raise ImportError("omnilearn: the C++ extension omnilearn._core is missing. Install the package "
                          "(docs/python.md: pip install --no-build-isolation ./python) or "
                          f"set {ENV_VAR} to <build>/python/omnilearn after building the project ({e})") from e

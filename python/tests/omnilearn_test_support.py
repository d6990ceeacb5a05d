"""Where the tests find the omnilearn package: the source package (python/) with the extension that the CMake build
made (<build>/python/omnilearn, build = $OMNILEARN_BUILD_DIR or ./build), else an installed one (pip). A test whose
prerequisite is missing skips and says why (pytest -rs prints the reasons; scripts/test.sh passes it)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("OMNILEARN_BUILD_DIR", REPO / "build"))
EXT_DIR = BUILD / "python" / "omnilearn"

if not os.environ.get("OMNILEARN_EXTENSION_DIR") and any(EXT_DIR.glob("_core*.so")):
    os.environ["OMNILEARN_EXTENSION_DIR"] = str(EXT_DIR)
if os.environ.get("OMNILEARN_EXTENSION_DIR"):
    sys.path.insert(0, str(REPO / "python"))


def import_omnilearn():
    try:
        import omnilearn
    except ImportError as e:
        pytest.skip(f"omnilearn is not importable (build the project so {EXT_DIR} holds _core, or pip install "
                    f"./python): {e}")
    return omnilearn


def subprocess_env() -> dict:
    """The environment for child processes (torch workers): they import the same omnilearn as the tests."""
    env = dict(os.environ)
    if os.environ.get("OMNILEARN_EXTENSION_DIR"):
        env["PYTHONPATH"] = os.pathsep.join([str(REPO / "python"), str(REPO / "analysis"),
                                             env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    else:
        env["PYTHONPATH"] = os.pathsep.join([str(REPO / "analysis"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.setdefault("OMP_NUM_THREADS", "1")
    return env




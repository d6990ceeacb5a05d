"""Finds the omnilearn package for the tests: the source package (python/) with the extension that the CMake build
made (<build>/python/omnilearn, build = $OMNILEARN_BUILD_DIR or ./build), else an installed one (pip). A test whose
prerequisite is missing skips and says why (pytest -rs prints the reasons; scripts/test.sh passes it)."""

from __future__ import annotations

import os
import shutil
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


@pytest.fixture(scope="session")
def omnilearn():
    return import_omnilearn()


@pytest.fixture(scope="session")
def reference_program() -> Path:
    program = BUILD / "python" / "omnilearn-python-reference"
    if not program.exists():
        pytest.skip(f"the C++ reference program {program} is not built (cmake --build build "
                    "--target omnilearn-python-reference; needs OMNILEARN_BUILD_TESTS=ON)")
    return program


@pytest.fixture(scope="session")
def torch_gloo():
    try:
        import torch
        import torch.distributed as dist
    except ImportError as e:
        pytest.skip(f"PyTorch is not importable in {sys.executable} (Debian: python3-torch): {e}")
    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip(f"torch {torch.__version__} has no gloo backend for torch.distributed")
    return torch


@pytest.fixture(scope="session")
def python_for_children() -> str:
    return sys.executable


def which_or_skip(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} not found on PATH")
    return path

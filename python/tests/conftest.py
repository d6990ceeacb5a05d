"""Fixtures of the Python tests; omnilearn_test_support.py finds the package (source + built extension, or
installed). A test whose prerequisite is missing skips and says why (pytest -rs prints the reasons)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from omnilearn_test_support import BUILD, import_omnilearn


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


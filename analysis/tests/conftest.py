"""Fixtures: real run and sweep folders produced by the C++ simulator (build/cli/omnilearn, or $OMNILEARN_BIN).
The test command builds the binary first; without it these tests fail with a message saying so."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "analysis"))


def omnilearn_bin() -> Path:
    path = Path(os.environ.get("OMNILEARN_BIN", ROOT / "build" / "cli" / "omnilearn"))
    if not path.exists():
        pytest.fail(f"{path} does not exist: build first (scripts/build.sh) or set OMNILEARN_BIN")
    return path


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(omnilearn_bin()), *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="session")
def quick_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "quick"
    r = run_cli("sim", "scenarios/examples/quick.yaml", "--quiet", "--out", str(out))
    assert r.returncode == 0, r.stderr
    return out


@pytest.fixture(scope="session")
def quick_sweep(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("sweeps")
    sweep = folder / "policies.yaml"
    sweep.write_text(
        f"name: quick-policies\nbase: {ROOT / 'scenarios/examples/quick.yaml'}\n"
        "axes:\n  policy.name: [uniform, omnilearn, oracle]\n  policy.every_n: [1, 2]\n")
    out = folder / "out"
    r = run_cli("sweep", str(sweep), "--jobs", "2", "--quiet", "--out", str(out))
    assert r.returncode == 0, r.stderr
    return out

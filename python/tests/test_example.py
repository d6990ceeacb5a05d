"""The example (examples/train_fashion_mnist.py) runs under torch.distributed.run and its run folder loads in
`omnilearn report`: through the analysis package, and through the built CLI when there is one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from omnilearn_test_support import BUILD, REPO, subprocess_env

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))


@pytest.fixture(scope="module")
def example_run(omnilearn, torch_gloo, tmp_path_factory) -> Path:
    from compare_policies import torchrun_prefix
    run = tmp_path_factory.mktemp("example") / "run"
    cmd = torchrun_prefix(2) + [str(EXAMPLES / "train_fashion_mnist.py"), "--synthetic", "300", "--global-batch", "32",
                                "--min-batch", "4", "--max-batch", "28", "--every-n", "2", "--max-steps", "6",
                                "--slow-ranks", "1", "--eval-samples", "50", "--run-dir", str(run)]
    done = subprocess.run(cmd, env=subprocess_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads([line for line in done.stdout.splitlines() if line.startswith("{")][-1])
    assert summary["iterations"] == 6 and summary["final_accuracy"] is not None
    return run


def test_example_run_folder_loads_in_the_analysis_report(example_run, tmp_path):
    report = subprocess.run([sys.executable, "-m", "omnilearn_analysis", "report", str(example_run), "--out",
                             str(tmp_path / "report")], env=subprocess_env(), cwd=REPO, capture_output=True, text=True,
                            timeout=300)
    assert report.returncode == 0, report.stdout + report.stderr
    summary = json.loads((example_run / "summary.json").read_text())
    assert summary["workers"] == 2 and summary["iterations"] == 6 and summary["final_accuracy"] is not None
    assert (example_run / "evaluations.csv").read_text().count("\n") == 2


def test_example_run_folder_loads_in_the_cli_report(example_run, tmp_path):
    cli = BUILD / "cli" / "omnilearn"
    if not cli.exists():
        pytest.skip(f"{cli} is not built")
    report = subprocess.run([str(cli), "report", str(example_run), "--out", str(tmp_path / "report")],
                            capture_output=True, text=True, timeout=300)
    assert report.returncode == 0, report.stdout + report.stderr
    assert any((tmp_path / "report").iterdir())

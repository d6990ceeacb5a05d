"""Hybrid run folders (docs/hybrid.md "The run folder"): the readers, every figure and the report, on small
folders written here in the simulator's format (2 replicas x 2 stages x TP 1 on 5 devices; device 3 leaves at
step 4 and device 4 takes its place)."""

import io
import json

import pytest

from conftest import run_cli
from omnilearn_analysis.__main__ import main
from omnilearn_analysis.hybrid_figures import (device_time_split, micro_batches_and_layers, pipeline_timeline,
                                               placement_map, step_times)
from omnilearn_analysis.hybrid_runs import (is_hybrid_comparison, is_hybrid_run, load_hybrid_comparison,
                                            load_hybrid_run)
from omnilearn_analysis.report import HYBRID_FIGURES, write_report
from omnilearn_analysis.runs import RunFormatError

PNG = b"\x89PNG\r\n\x1a\n"
KINDS = ["GH-96", "GH-96", "V100-16", "V100-16", "V100-16"]


def _timeline(step_s: float) -> dict:
    events = [{"ph": "M", "name": "thread_name", "pid": 0, "tid": d,
               "args": {"name": f"device {d} ({KINDS[d]}, node {d // 2})"}} for d in range(5)]
    for step in (0, 1):
        t0 = step * step_s * 1e6
        for d, stage in ((0, 0), (1, 0), (2, 1), (3, 1)):
            t = t0 + stage * 1e5
            for name in ("F0", "F1.1", "B0", "B1.1"):
                events.append({"ph": "X", "pid": 0, "tid": d, "name": name, "ts": t, "dur": 1e5,
                               "args": {"step": step}})
                t += 1.2e5
            for name, dur in (("allreduce", 2e5), ("update", 5e4)):
                events.append({"ph": "X", "pid": 0, "tid": d, "name": name, "ts": t, "dur": dur,
                               "args": {"step": step}})
                t += dur
    return {"displayTimeUnit": "ms", "traceEvents": events}


def write_hybrid_run(folder, policy: str = "omnilearn", slow: float = 1.0):
    """A hybrid run folder as `omnilearn sim` writes it: 8 steps, a re-plan at step 4 with 36 s of overhead."""
    folder.mkdir(parents=True)
    step_s = [1.0 * slow] * 8
    step_s[4] += 36.0
    micro = ["4;4", "4;4", "5;3", "5;3", "4;4", "4;4", "4;4", "4;4"]
    rows, t = [], 0.0
    for i, (s, m) in enumerate(zip(step_s, micro)):
        rows.append(f"{i},{t},{s},{36.0 if i == 4 else 0},{m},{5 if i < 4 else 4}")
        t += s
    (folder / "steps.csv").write_text("step,start_s,step_s,overhead_s,micro_batches,live_devices\n" +
                                      "\n".join(rows) + "\n")
    (folder / "plans.csv").write_text(
        "step,level,reason,cost_s,predicted_saving_s,micro_batches,layers_per_stage\n"
        "0,3,initial plan,0,0,4;4,5;5|5;5\n"
        "2,1,replica step times,0,0,5;3,5;5|5;5\n"
        "3,2,measured stage imbalance,0.2,0.05,5;3,6;4|5;5\n"
        "4,3,devices left,36,0,4;4,6;4|6;4\n")
    placement = ["from_step,device,kind,node,replica,stage,tp_rank"]
    for step, devices in ((0, (0, 1, 2, 3)), (4, (0, 1, 2, 4))):
        for (replica, stage), d in zip(((0, 0), (1, 0), (0, 1), (1, 1)), devices):
            placement.append(f"{step},{d},{KINDS[d]},{d // 2},{replica},{stage},0")
    (folder / "placement.csv").write_text("\n".join(placement) + "\n")
    (folder / "devices.csv").write_text(
        "device,kind,node,compute_s,bubble_s,comm_s,wait_s,memory_bytes\n" +
        "".join(f"{d},{KINDS[d]},{d // 2},{5.0 - d * 0.5},{0.5 + d * 0.1},{0.4},{0.2 * d},{2e10}\n"
                for d in range(5)))
    (folder / "timeline.json").write_text(json.dumps(_timeline(step_s[0])))
    summary = {"policy": policy, "steps": 8, "total_time_s": sum(step_s), "mean_step_s": sum(step_s) / 8,
               "shape": {"dp": 2, "pp": 2, "tp": 1}, "schedule": "interleaved", "chunks": 2, "micro_batch": 1,
               "global_batch": 8, "plan_changes": {"micro_batches": 1, "layers": 1, "replans": 2},
               "scenario": {"name": "tiny-hybrid", "file": "tiny.yaml", "model": "test", "text": ""}}
    (folder / "summary.json").write_text(json.dumps(summary, indent=2))
    return folder


def write_hybrid_comparison(folder):
    """Two policies' runs beside policies.csv, as a scenario with control.policies writes them."""
    write_hybrid_run(folder / "equal", "equal", slow=1.5)
    write_hybrid_run(folder / "omnilearn", "omnilearn")
    (folder / "policies.csv").write_text(
        "policy,steps,total_time_s,mean_step_s,vs_oracle,micro_batch_changes,layer_changes,replans\n"
        "equal,8,48,6,,0,0,2\nomnilearn,8,44,5.5,,1,1,2\n")
    return folder


@pytest.fixture
def hybrid_run(tmp_path):
    return write_hybrid_run(tmp_path / "run")


@pytest.fixture
def hybrid_comparison(tmp_path):
    return write_hybrid_comparison(tmp_path / "policies")


def test_loader_parses_every_file(hybrid_run):
    assert is_hybrid_run(hybrid_run) and not is_hybrid_comparison(hybrid_run)
    run = load_hybrid_run(hybrid_run)
    assert run.policy == "omnilearn" and run.summary["shape"] == {"dp": 2, "pp": 2, "tp": 1}
    assert run.steps["micro_batches"].iloc[2] == [5, 3]
    assert list(run.plans["level"]) == [3, 1, 2, 3]
    assert run.plans["layers_per_stage"].iloc[2] == [[6, 4], [5, 5]]
    assert set(run.timeline["kind"]) == {"F", "B", "allreduce", "update"}
    assert sorted(run.timeline["step"].unique()) == [0, 1]
    assert run.device_names[2] == "device 2 (V100-16, node 1)"
    counts = run.replica_micro_batches()
    assert list(counts.columns) == ["start_s", 0, 1] and counts[0].tolist() == [4, 4, 5, 5, 4, 4, 4, 4]
    spans = run.placement_intervals()
    gone = spans[spans["device"] == 3].iloc[0]  # device 3 held replica 1 stage 1 until the re-plan at step 4
    assert (gone["from_s"], gone["to_s"]) == (0.0, 4.0)
    joined = spans[spans["device"] == 4].iloc[0]
    assert (joined["from_s"], joined["to_s"], joined["replica"], joined["stage"]) == (4.0, run.end_s, 1, 1)


def test_loader_reads_a_comparison(hybrid_comparison):
    assert is_hybrid_comparison(hybrid_comparison) and not is_hybrid_run(hybrid_comparison)
    table, runs = load_hybrid_comparison(hybrid_comparison)
    assert list(table["policy"]) == ["equal", "omnilearn"]
    assert [r.policy for r in runs] == ["equal", "omnilearn"]


@pytest.mark.parametrize("figure", [pipeline_timeline, device_time_split, micro_batches_and_layers, placement_map,
                                    lambda run: step_times([run], "one policy")])
def test_every_figure_is_drawn(hybrid_run, figure):
    buf = io.BytesIO()
    figure(load_hybrid_run(hybrid_run)).savefig(buf, format="png")
    assert buf.getvalue()[:8] == PNG


def test_report_of_one_run(hybrid_run, tmp_path):
    out = tmp_path / "report"
    page = write_report([str(hybrid_run)], str(out)).read_text()
    expected = ["steps", *(name for name, _ in HYBRID_FIGURES)]
    for name in expected:
        assert (out / f"00-run-{name}.png").read_bytes()[:8] == PNG
    assert page.count("data:image/png;base64,") == len(expected)
    assert "Hybrid run run (omnilearn)" in page and "devices left" in page
    assert "timeline.json (valid trace-event JSON)" in page


def test_report_of_several_policies(hybrid_comparison, tmp_path):
    out = tmp_path / "report"
    page = write_report([str(hybrid_comparison)], str(out)).read_text()
    assert "Policies compared (policies.csv)" in page and "<td>equal</td>" in page
    assert (out / "00-policies-steps.png").read_bytes()[:8] == PNG  # both policies on one figure
    for policy in ("equal", "omnilearn"):
        for name, _ in HYBRID_FIGURES:
            assert (out / f"00-policies-{policy}-{name}.png").read_bytes()[:8] == PNG
    assert page.count("data:image/png;base64,") == 1 + 2 * len(HYBRID_FIGURES)


def test_report_through_the_cli(hybrid_comparison, tmp_path):
    r = run_cli("report", str(hybrid_comparison), "--out", str(tmp_path / "r"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "r" / "report.html").exists()


def _break(folder, name, edit):
    path = folder / name
    if edit is None:
        path.unlink()
    else:
        path.write_text(edit(path.read_text()))


@pytest.mark.parametrize("name, edit, message", [
    ("devices.csv", None, "devices.csv: missing"),
    ("placement.csv", lambda t: t.replace("tp_rank", "rank"), "placement.csv: missing columns ['tp_rank']"),
    ("steps.csv", lambda t: t.replace("5;3", "5;x", 1), "steps.csv:4: '5;x' is not a list of counts"),
    ("steps.csv", lambda t: t.replace("\n1,1.0,", "\n1,soon,", 1), "steps.csv:3: column 'start_s' holds 'soon'"),
    ("plans.csv", lambda t: t.replace("6;4|5;5", "6;4|5;five"), "plans.csv:4: '6;4|5;five'"),
    ("timeline.json", lambda t: t[:-2], "timeline.json:1: not valid JSON"),
    ("summary.json", lambda t: t.replace('"shape"', '"form"'), "summary.json: not a hybrid run's summary"),
])
def test_a_malformed_folder_names_the_file(hybrid_run, tmp_path, capsys, name, edit, message):
    _break(hybrid_run, name, edit)
    with pytest.raises(RunFormatError) as error:
        load_hybrid_run(hybrid_run)
    assert str(hybrid_run / name) in str(error.value) and message in str(error.value)
    out = tmp_path / "out"
    assert main(["report", str(hybrid_run), "--out", str(out)]) == 1
    assert message in capsys.readouterr().err
    assert not out.exists()  # nothing is written for a bad input


def test_a_comparison_without_a_policys_folder_names_policies_csv(hybrid_comparison, tmp_path, capsys):
    (hybrid_comparison / "policies.csv").write_text(
        (hybrid_comparison / "policies.csv").read_text() + "oracle,8,40,5,1,1,1,2\n")
    with pytest.raises(RunFormatError, match="policies.csv: lists policy 'oracle'"):
        load_hybrid_comparison(hybrid_comparison)
    assert main(["report", str(hybrid_comparison), "--out", str(tmp_path / "out")]) == 1
    assert "policies.csv: lists policy 'oracle'" in capsys.readouterr().err

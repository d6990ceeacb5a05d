"""The bindings give the C++ controller's plans: a closed loop driven through the Python Controller is replayed by
the C++ reference program (omnilearn-python-reference, built from the same sources) and every plan must match
exactly; plus the controller's invariants, settings, errors, and the run-folder writer."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys

import pytest

from omnilearn_test_support import REPO

# (settings, scripted disturbances) per case: the closed loops exercise every trigger, the memory guard, the dead-band,
# a worker going down and coming back, and a worker leaving and joining.
CASES = {
    "omnilearn-every-n": dict(name="omnilearn", global_batch=256, capacities=[1, 1, 1, 1], min_batch=8, max_batch=160,
                              every_n=3, dead_band=0.05, ewma_alpha=0.3),
    "omnilearn-gain-imbalance": dict(name="omnilearn", global_batch=200, capacities=[2, 1, 1], min_batch=10,
                                     max_batch=150, decide="imbalance", imbalance_threshold=0.1, gain=0.5,
                                     memory_guard=True, memory_guard_tolerance=0.05),
    "omnilearn-every-epoch": dict(name="omnilearn", global_batch=96, capacities=[1, 3], min_batch=4, max_batch=90,
                                  decide="every-epoch", dead_band=0.0),
    "affine": dict(name="affine", global_batch=128, capacities=[1, 1, 1, 1], min_batch=4, max_batch=100, every_n=2,
                   fit_window=4, dead_band=0.02, ewma_alpha=0.5),
    "static": dict(name="static", global_batch=100, capacities=[1, 2, 3, 4], min_batch=1, max_batch=100),
    "uniform": dict(name="uniform", global_batch=130, workers=4, min_batch=1, max_batch=100),
    "asp": dict(name="omnilearn", mode="asp", global_batch=128, capacities=[1, 1, 1], min_batch=8, max_batch=96,
                every_n=2),
}
STEPS = 40


def drive(omnilearn, settings: dict, seed: int) -> tuple[list[str], list]:
    """Runs a noisy closed loop (t_k = alpha + beta_k * b) on the Python controller; returns the script and plans."""
    rng = random.Random(seed)
    ctl = omnilearn.Controller(**settings)
    n = ctl.worker_count
    beta = [0.001 * (1 + 2 * rng.random()) for _ in range(n)]
    kv = {k: ",".join(str(float(c)) for c in v) if k == "capacities" else v for k, v in settings.items()
          if k != "workers"}
    if "workers" in settings:
        kv["capacities"] = ",".join(["1.0"] * settings["workers"])
    script = ["controller " + " ".join(f"{k}={int(v) if isinstance(v, bool) else v}" for k, v in kv.items())]
    plans, now, epoch = [], 0.0, 0
    for step in range(STEPS):
        batch = ctl.current_plan.batch
        if step == 15:  # a worker slows down (availability), later one goes down and returns, one leaves and joins
            beta[0] *= 3
            ctl.report_availability(worker=0, time_s=now, fraction=0.33)
            script.append(f"availability 0 {now!r} 0.33")
        if step == 22 and n > 2:
            ctl.report_availability(worker=1, time_s=now, fraction=0.0)
            script.append(f"availability 1 {now!r} 0.0")
        if step == 26 and n > 2:
            ctl.report_availability(worker=1, time_s=now, fraction=1.0)
            script.append(f"availability 1 {now!r} 1.0")
        if step == 30 and n > 3:
            ctl.report_membership(worker=3, time_s=now, joined=False)
            script.append(f"membership 3 {now!r} 0")
        if step == 34 and n > 3:
            ctl.report_membership(worker=3, time_s=now, joined=True)
            script.append(f"membership 3 {now!r} 1")
        times = [(0.002 + beta[k] * b) * math.exp(rng.gauss(0.0, 0.05)) if b > 0 else 0.0 for k, b in enumerate(batch)]
        now += max(times)
        for k, b in enumerate(batch):
            if b > 0:
                ctl.report_iteration(worker=k, step=step, end_s=now, compute_s=times[k], batch=b)
                script.append(f"iteration {k} {step} {now!r} {times[k]!r} {b}")
        if step % 10 == 9:
            epoch += 1
        plan = ctl.plan_next(step=step + 1, epoch=epoch, now_s=now)
        script.append(f"plan {step + 1} {epoch} {now!r}")
        plans.append(plan)
    return script, plans


@pytest.mark.parametrize("case", sorted(CASES))
def test_plans_match_the_cpp_controller(omnilearn, reference_program, case):
    seed = random.SystemRandom().randrange(1 << 30)
    print(f"case {case}: seed {seed}")
    script, plans = drive(omnilearn, CASES[case], seed)
    out = subprocess.run([str(reference_program)], input="\n".join(script) + "\n", capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == len(plans)
    changes = 0
    for plan, line in zip(plans, lines):
        _, step, reason, changed, decided, global_batch, batch, weight = line.split(" ")
        assert plan.step == int(step) and plan.reason == reason, (plan, line)
        assert (plan.changed, plan.decided) == (changed == "1", decided == "1"), (plan, line)
        assert plan.global_batch == int(global_batch)
        assert plan.batch == [int(b) for b in batch.split(",")], (plan, line)
        assert plan.weight == [float(w) for w in weight.split(",")], (plan, line)
        changes += plan.changed
    if CASES[case]["name"] not in ("static", "uniform"):
        assert changes > 0, f"case {case}: the loop never changed a plan, so the comparison proves little"


@pytest.mark.parametrize("case", sorted(c for c in CASES if CASES[c].get("mode", "bsp") == "bsp"))
def test_bsp_invariants(omnilearn, case):
    settings = CASES[case]
    _, plans = drive(omnilearn, settings, seed=3)
    previous = None
    for plan in plans:
        live = [b for b in plan.batch if b > 0]
        assert sum(plan.batch) == plan.global_batch == settings["global_batch"], plan
        assert all(settings["min_batch"] <= b <= settings["max_batch"] for b in live), plan
        assert plan.weight == pytest.approx([b / plan.global_batch for b in plan.batch])
        if previous is not None and plan.changed and len(plan.batch) == len(previous.batch) and all(
                b > 0 for b in previous.batch + plan.batch):
            biggest = max(abs(n - o) / o for n, o in zip(plan.batch, previous.batch))
            assert biggest >= settings.get("dead_band", 0.05) - 1e-12, (previous, plan)
        previous = plan


def test_settings_follow_the_scenario_defaults_and_asp_naming(omnilearn):
    c = omnilearn.Controller(workers=2, global_batch=64, min_batch=8, max_batch=56)
    s = c.settings()
    assert s["name"] == "uniform" and s["decide"] == "every-n" and s["capacities"] == [1.0, 1.0]
    assert c.current_plan.batch == [32, 32] and c.current_plan.reason == "initial"
    asp = omnilearn.Controller(workers=2, global_batch=64, name="omnilearn", mode="asp")
    assert asp.policy_name == "omnilearn-asp" and asp.settings()["name"] == "omnilearn-asp"
    assert "omnilearn" in omnilearn.policy_names()


def test_from_scenario_matches_the_file(omnilearn):
    path = str(REPO / "scenarios" / "examples" / "quick.yaml")
    c = omnilearn.Controller.from_scenario(path)
    s = c.settings()
    assert (c.worker_count, s["name"], s["min_batch"], s["max_batch"], s["every_n"], s["global_batch"]) == \
        (2, "omnilearn", 8, 56, 2, 64)
    assert s["capacities"][0] == 2 * s["capacities"][1]  # 4 cores against 2 of the same speed
    tuned = omnilearn.Controller.from_scenario(path, ["policy.gain=0.5", "policy.dead_band=0.2"])
    assert tuned.settings()["gain"] == 0.5 and tuned.settings()["dead_band"] == 0.2
    with pytest.raises(ValueError, match="policy"):
        omnilearn.Controller.from_scenario(path, ["policy.no_such_key=1"])
    with pytest.raises(FileNotFoundError):
        omnilearn.Controller.from_scenario(str(REPO / "no-such-scenario.yaml"))


@pytest.mark.parametrize("kwargs, argument", [
    (dict(workers=2, name="fastest"), "name"),
    (dict(workers=2, min_batch=50, max_batch=10), "max_batch"),
    (dict(workers=2, min_batch=0), "min_batch"),
    (dict(workers=2, decide="sometimes"), "decide"),
    (dict(workers=2, mode="async"), "mode"),
    (dict(workers=2, ewma_alpha=0.0), "ewma_alpha"),
    (dict(workers=2, fit_window=1), "fit_window"),
    (dict(workers=2, global_batch=0), "global_batch"),
    (dict(workers=3, capacities=[1.0, 2.0]), "workers"),
    (dict(), "workers"),
    (dict(capacities=[1.0, -1.0]), r"capacities\[1\]"),
    (dict(workers=2, name="omnilearn-asp"), "name"),
    (dict(workers=2, global_batch=1000, max_batch=96), "global_batch"),
])
def test_bad_settings_raise_naming_the_argument(omnilearn, kwargs, argument):
    with pytest.raises(ValueError, match=argument):
        omnilearn.Controller(**kwargs)


def test_bad_reports_raise(omnilearn):
    c = omnilearn.Controller(workers=2, global_batch=64)
    with pytest.raises(ValueError, match="worker"):
        c.report_iteration(worker=2, step=0, end_s=1.0, compute_s=0.1, batch=32)
    with pytest.raises(ValueError, match="compute_s"):
        c.report_iteration(worker=0, step=0, end_s=1.0, compute_s=-1.0, batch=32)
    with pytest.raises(ValueError, match="fraction"):
        c.report_availability(worker=0, time_s=0.0, fraction=2.0)


def test_run_writer_writes_what_the_analysis_reads(omnilearn, tmp_path):
    sys.path.insert(0, str(REPO / "analysis"))
    try:
        from omnilearn_analysis.runs import load_run
    except ImportError as e:
        pytest.skip(f"the analysis package needs pandas (python3-pandas): {e}")
    run = tmp_path / "run"
    c = omnilearn.Controller(workers=2, global_batch=64, name="omnilearn", every_n=1, dead_band=0.0, min_batch=8)
    w = omnilearn.RunWriter.open(str(run), json.dumps({"backend": "torch", "seed": 1}))
    w.add_plan(c.current_plan, epoch=0)
    for step in range(3):
        for k, b in enumerate(c.current_plan.batch):
            compute = 0.001 * b * (k + 1)
            c.report_iteration(worker=k, step=step, end_s=step + 1.0, compute_s=compute, batch=b)
            w.add_iteration(worker=k, step=step, epoch=0, start_s=float(step), compute_s=compute, comm_s=0.01,
                            wait_s=0.0, batch=b, loss=1.0 / (step + 1))
        plan = c.plan_next(step=step + 1, now_s=step + 1.0)
        if plan.decided:
            w.add_plan(plan, epoch=0)
    w.finish(policy="omnilearn", mode="bsp", workers=2, iterations=3, epochs=1, total_time_s=3.0,
             mean_iteration_s=1.0, idle_fraction=0.0, epoch_time_s=[3.0], decisions=3, batch_changes=1)
    assert w.closed
    loaded = load_run(run)
    assert loaded.policy == "omnilearn" and loaded.backend == "torch"
    assert len(loaded.iterations) == 6 and set(loaded.plans["worker"]) == {0, 1}
    assert loaded.plans.groupby("step")["batch"].sum().eq(64).all()
    with pytest.raises(ValueError, match="not empty"):
        omnilearn.RunWriter.open(str(run), "{}")
    omnilearn.RunWriter.open(str(run), "{}", replace=True).close()
    with pytest.raises(RuntimeError, match="closed"):
        w.add_evaluation(time_s=0.0, step=0, epoch=0, loss=0.0, accuracy=0.0)


def test_stop_rule_gives_each_reason_and_its_precedence(omnilearn):
    assert omnilearn.stop_reason_names() == ["none", "epochs", "samples", "steps", "time", "target", "requested"]
    rule = omnilearn.StopRule(dataset_samples=100, epochs=2, max_steps=10, time_budget_s=5.0, target_accuracy=0.9)
    assert rule.progress(steps=3, samples=150) == "none" and not rule.stopped
    assert rule.elapsed(4.0) == "none" and rule.evaluation(0.5) == "none"
    assert rule.progress(steps=4, samples=200) == "epochs" and rule.reason == "epochs"
    assert rule.evaluation(0.95) == "target" and rule.reason == "target"  # the target outranks the epochs
    rule.stop("requested")
    assert rule.reason == "requested"
    with pytest.raises(ValueError, match="budget"):
        rule.stop("budget")
    budget = omnilearn.StopRule(dataset_samples=100, sample_budget=50)
    assert budget.sample_limit == 50 and budget.progress(steps=1, samples=50) == "samples"
    with pytest.raises(ValueError, match="^epochs: expected >= 1"):
        omnilearn.StopRule(dataset_samples=100, epochs=0)
    with pytest.raises(ValueError, match="^max_steps"):
        omnilearn.StopRule(dataset_samples=100, max_steps=-1)


def test_run_recorder_writes_the_run_layers_folder(omnilearn, tmp_path):
    sys.path.insert(0, str(REPO / "analysis"))
    try:
        from omnilearn_analysis.runs import load_run
    except ImportError as e:
        pytest.skip(f"the analysis package needs pandas (python3-pandas): {e}")
    c = omnilearn.Controller(name="omnilearn", workers=2, global_batch=64, min_batch=8, max_batch=56, every_n=1,
                             dead_band=0.0)
    scenario = c.scenario
    scenario.seed = 9
    rule = omnilearn.StopRule(dataset_samples=96, epochs=1)
    scenario.set_stop_limits(rule)
    manifest = omnilearn.Manifest("torch", scenario, ["train.py"])
    manifest.set("world_size", 2)
    run = tmp_path / "run"
    rec = omnilearn.RunRecorder(str(run), manifest)
    rec.plan(c.current_plan, epoch=0)
    samples = step = 0
    while rule.progress(steps=step, samples=samples) == "none":
        for k, b in enumerate(c.current_plan.batch):
            c.report_iteration(worker=k, step=step, end_s=step + 1.0, compute_s=0.001 * b * (k + 1), batch=b)
            rec.iteration(worker=k, step=step, epoch=0, start_s=float(step), compute_s=0.001 * b * (k + 1), comm_s=0.01,
                          wait_s=0.0, batch=b)
        samples += sum(c.current_plan.batch)
        step += 1
        rec.plan(c.plan_next(step=step, now_s=float(step)), epoch=0)
    rec.evaluation(time_s=2.0, step=1, epoch=0, loss=0.5, accuracy=0.7)
    s = omnilearn.RunSummary(policy="omnilearn", mode="bsp", workers=2)
    rec.fill_from_records(s)
    rec.complete(s)
    s.stop_reason = rule.reason
    s.extra = {"samples": float(samples)}
    rec.rewrite_manifest(manifest.text(elapsed_s=0.5))
    rec.finish(s)
    assert rec.closed
    summary = json.loads((run / "summary.json").read_text())
    assert summary == json.loads(s.to_json())
    assert summary["stop_reason"] == "epochs" and summary["iterations"] == 2 and summary["final_accuracy"] == 0.7
    assert summary["decisions"] >= 2 and summary["extra"] == {"samples": 128.0}
    m = json.loads((run / "manifest.json").read_text())
    assert list(m)[:4] == ["backend", "scenario", "argv", "seed"] and m["seed"] == 9 and m["world_size"] == 2
    assert m["scenario"]["workload"]["dataset_samples"] == 96 and m["wall_clock"]["elapsed_s"] == 0.5
    loaded = load_run(run)
    assert loaded.backend == "torch" and len(loaded.iterations) == 4
    with pytest.raises(RuntimeError, match="closed"):
        rec.evaluation(time_s=0.0, step=0, epoch=0, loss=0.0, accuracy=0.0)
    with pytest.raises(ValueError, match="manifest"):
        omnilearn.RunRecorder(str(tmp_path / "other"))
    totals = omnilearn.RunRecorder()  # no folder: the totals only
    totals.iteration(worker=0, step=0, epoch=0, start_s=0.0, compute_s=0.5, comm_s=0.0, wait_s=0.5, batch=8)
    t = omnilearn.RunSummary()
    totals.complete(t)
    assert t.idle_fraction == 0.5 and totals.dir is None
    with pytest.raises(ValueError, match="stop_reason"):
        t.stop_reason = "budget"

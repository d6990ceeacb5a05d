#!/usr/bin/env python3
"""Asynchrony against tuned BSP + omnilearn under churn at 64 workers (docs/results-asp.md, "(c')"): reads the run
folders of the sweeps scenarios/edge/sweep-{asp,bsp}-64-churn{-tune,}.yaml, writes one row per run, and prints the
tuning table (each set-up's rates on the tuning seeds), the comparison (time to 85% over every seed, a run that never
reaches it counting the budget: the restricted mean; energy to 85% likewise, the energy of the whole run where it
never reaches it) and staleness-bounded against each other set-up paired by seed, with Student-t 95% intervals.

usage: scripts/asp-churn-64.py SWEEP_FOLDER... [--runs-csv OUT.csv] [--tune-horizon SECONDS]
A folder whose name holds "-tune" is a tuning sweep: its runs are scored at the horizon (default 120 simulated
seconds: the time to 85% if reached by then, else the accuracy then, from evaluations.csv). Standard library only.
"""
import argparse
import csv
import json
import os
import statistics
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # nothing left beside the scripts
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from student_t import interval  # noqa: E402

OURS = "staleness-bounded"
GOAL_PCT = -20.0


def method_of(scenario):
    if scenario["mode"] == "bsp":
        return f"bsp-{scenario['policy']['name']}"
    rule = scenario["workload"].get("asp", {}).get("rule", "asgd")
    policy = scenario["policy"]["name"]
    return rule if rule == policy else f"{rule}-{policy}"


def run_row(folder, phase, horizon_s):
    scenario = json.loads((folder / "manifest.json").read_text())["scenario"]
    summary = json.loads((folder / "summary.json").read_text())
    budget = float(scenario["emulator"]["time_budget_s"])
    if phase == "tune":
        budget = min(budget, horizon_s)
    with open(folder / "evaluations.csv", newline="") as f:
        evals = [(float(r["time_s"]), float(r["accuracy"])) for r in csv.DictReader(f)]
    at_budget = [a for ts, a in evals if ts <= budget + 1e-9]
    at_120 = [a for ts, a in evals if ts <= 120.0 + 1e-9]  # a run that stopped earlier: its last (>= the target)
    target = float(scenario["emulator"]["target_accuracy"])
    t = summary.get("time_to_target_s")
    if t is not None and t > budget + 1e-9:
        t = None  # a tuning run scored at its horizon
    energy = summary.get("energy", {})
    joules = energy.get("joules", "")
    extra = summary.get("extra", {})
    return {
        "phase": phase, "method": method_of(scenario), "learning_rate": scenario["emulator"]["learning_rate"],
        "seed": int(scenario["seed"]), "target": target, "budget_s": budget,
        "reached": 1 if t is not None else 0,
        "time_to_target_s": t if t is not None else "",
        "restricted_time_s": t if t is not None else budget,
        "final_accuracy": summary.get("final_accuracy", ""),
        "accuracy_at_budget": at_budget[-1] if at_budget else "",
        "accuracy_at_120s": at_120[-1] if at_120 else "",
        "total_time_s": summary.get("total_time_s", ""),
        "energy_j": joules,
        "restricted_energy_j": energy.get("energy_to_target_j", joules) if t is not None else joules,
        "iterations": summary.get("iterations", ""),
        "mean_staleness": summary.get("mean_staleness", ""),
        "dropped_pushes": extra.get("dropped_pushes", ""),
        "folder": folder.name,
    }


def fmt(mean, half, digits=1, sign=""):
    return f"{mean:{sign}.{digits}f} [{mean - half:{sign}.{digits}f}, {mean + half:{sign}.{digits}f}]"


def tuning(rows):
    print("Tuning (mean time to 85% over the tuning seeds, the horizon where not reached; ties: higher accuracy at the "
          "horizon)")
    print("| set-up | rate | seeds | reached | mean time to 85% (s) | mean accuracy at the horizon | chosen |")
    print("|---|---|---|---|---|---|---|")
    for method in sorted({r["method"] for r in rows}):
        cells = {}
        for r in rows:
            if r["method"] == method:
                cells.setdefault(r["learning_rate"], []).append(r)
        score = {lr: (statistics.fmean(r["restricted_time_s"] for r in rs),
                      -statistics.fmean(float(r["accuracy_at_budget"] or 0) for r in rs)) for lr, rs in cells.items()}
        best = min(score, key=lambda lr: score[lr])
        for lr in sorted(cells):
            rs = cells[lr]
            print(f"| {method} | {lr:g} | {len(rs)} | {sum(r['reached'] for r in rs)}/{len(rs)} | {score[lr][0]:.1f} | "
                  f"{100 * -score[lr][1]:.2f}% | {'yes' if lr == best else ''} |")


def censored(rows, at_s):
    """The rows as if every run's budget had been `at_s` (times only: the energy to a shorter budget is not recorded)."""
    out = []
    for r in rows:
        c = dict(r)
        if r["reached"] and r["time_to_target_s"] <= at_s:
            c["restricted_time_s"] = r["time_to_target_s"]
        else:
            c["reached"], c["restricted_time_s"], c["restricted_energy_j"] = 0, min(at_s, r["budget_s"]), ""
        out.append(c)
    return out


def comparison(rows, title="Comparison (every seed; a run that never reaches the target counts the budget, its energy "
                           "the whole run's)"):
    print("\n" + title)
    print("| set-up | rate | seeds | reached | time to 85% (s) [95%] | energy to 85% (kJ) [95%] | final accuracy |")
    print("|---|---|---|---|---|---|---|")
    by = {}
    for r in rows:
        by.setdefault(r["method"], {})[r["seed"]] = r
    for method in sorted(by):
        rs = list(by[method].values())
        t = interval([r["restricted_time_s"] for r in rs])
        e = interval([float(r["restricted_energy_j"]) / 1e3 for r in rs]) if all(r["restricted_energy_j"] != "" for r in rs) \
            else (float("nan"), float("nan"))
        acc = statistics.fmean(100 * float(r["final_accuracy"] or 0) for r in rs)
        rates = sorted({r["learning_rate"] for r in rs})
        print(f"| {method} | {', '.join(f'{x:g}' for x in rates)} | {len(rs)} | {sum(r['reached'] for r in rs)}/{len(rs)} | "
              f"{fmt(*t)} | {fmt(*e)} | {acc:.2f}% |")
    if OURS not in by:
        return
    print(f"\n{OURS} against each set-up, paired by seed (negative: {OURS} shorter / less)")
    print("| against | seeds | time, s [95%] | time, % of theirs [95%] | energy, % of theirs [95%] | accuracy at 120 s, "
          "points [95%] | goal (<= -20%, interval excluding 0) |")
    print("|---|---|---|---|---|---|---|")
    for other in sorted(m for m in by if m != OURS):
        seeds = sorted(set(by[OURS]) & set(by[other]))
        if len(seeds) < 2:
            continue
        ours, theirs = [by[OURS][s] for s in seeds], [by[other][s] for s in seeds]
        dt = interval([a["restricted_time_s"] - b["restricted_time_s"] for a, b in zip(ours, theirs)])
        pt = interval([100 * (a["restricted_time_s"] / b["restricted_time_s"] - 1) for a, b in zip(ours, theirs)])
        pe = interval([100 * (float(a["restricted_energy_j"]) / float(b["restricted_energy_j"]) - 1)
                       for a, b in zip(ours, theirs)]) \
            if all(r["restricted_energy_j"] != "" for r in ours + theirs) else (float("nan"), float("nan"))
        da = interval([100 * (float(a["accuracy_at_120s"]) - float(b["accuracy_at_120s"])) for a, b in zip(ours, theirs)])
        met = pt[0] <= GOAL_PCT and pt[0] + pt[1] < 0
        print(f"| {other} | {len(seeds)} | {fmt(*dt, sign='+')} | {fmt(*pt, sign='+')} | {fmt(*pe, sign='+')} | "
              f"{fmt(*da, digits=2, sign='+')} | {'met' if met else 'not met'} |")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweeps", nargs="+")
    ap.add_argument("--runs-csv")
    ap.add_argument("--tune-horizon", type=float, default=120.0)
    ap.add_argument("--censor-at", type=float, action="append", default=[],
                    help="also print the comparison as if the budget had been this many seconds (times only)")
    args = ap.parse_args(argv)
    rows = []
    for sweep in args.sweeps:
        phase = "tune" if "-tune" in Path(sweep).name else "compare"
        for p in sorted(Path(sweep).iterdir()):
            if p.is_dir() and (p / "summary.json").exists() and (p / "manifest.json").exists():
                rows.append(run_row(p, phase, args.tune_horizon))
    if not rows:
        sys.exit(f"{', '.join(args.sweeps)}: no finished run folders")
    rows.sort(key=lambda r: (r["phase"], r["method"], r["learning_rate"], r["seed"]))
    if args.runs_csv:
        with open(args.runs_csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
    tune = [r for r in rows if r["phase"] == "tune"]
    compare = [r for r in rows if r["phase"] == "compare"]
    if tune:
        tuning(tune)
    if compare:
        comparison(compare)
        for at_s in args.censor_at:
            comparison(censored(compare, at_s), f"The same runs cut at {at_s:g} s (times only)")


if __name__ == "__main__":
    main(sys.argv[1:])

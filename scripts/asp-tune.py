#!/usr/bin/env python3
"""The tuned-rates study of docs/results-asp.md, completed: the learning rate and the momentum tuned per rule and per
worker count on two tuning seeds, then every variant on five fresh seeds, at HL8 with 4, 16 and 64 workers
("(b) continued" on the page). It writes and runs its own sweep files, so that the stages that depend on earlier
results (a rate beyond a grid's edge, the momentum at the chosen step, the evaluation) follow the rules declared
below, and prints every table of that section.

usage: scripts/asp-tune.py --out runs/asp-tune [--cells 4 16 64] [--jobs 2] [--runs-csv OUT.csv]
       scripts/asp-tune.py --out runs/asp-tune-shards --cells 16 --partition sorted-shards   (workers' own data)
       scripts/asp-tune.py --from-csv docs/data/asp-tune-runs.csv        (the tables from the committed runs)

Each stage is one `omnilearn sweep` per mode (asp, bsp) into <out>/<stage>[-<round>]-<mode>/, with --resume, so an
interrupted study goes on where it stopped; the sweep files it ran are kept beside them (<out>/sweeps/).

The design (declared, and committed, before any of its runs):
- Cells: HL8's four speeds (cores 6/6/4/32) at n = 4, 16, 64 workers: n/4 copies of each, each 4/n as fast, every
  worker at 32 samples (global batch 32 n), LeNet on Fashion-MNIST in virtual time, 60 simulated seconds,
  evaluations every 100 updates (BSP: every 2048/global-batch steps) on 2,000 test samples, energy metered with the
  per-core CPU figures.
- Variants: asgd, ringmaster (R = n), staleness-aware, dc-asgd (lambda 0.04), bsp (omnilearn), and the workers
  Ringmaster keeps run alone (the n/4 32-core copies, whose pushes are about 1, 5 and 23 updates stale at n = 4,
  16 and 64, the others' at least 7, 31 and 127): asgd-fast and bsp-fast; rescaled at n = 16.
- Stage 1a (tuning seeds 101 and 102): three rates a factor of 2 apart at the default momentum (server 0.5; BSP
  0.9): asgd, ringmaster, dc-asgd, asgd-fast and rescaled 0.01/0.02/0.04; staleness-aware (its step divided by
  the staleness, about n - 1) 0.02/0.04/0.08 times n/16; bsp 0.05/0.1/0.2 times n/16 and bsp-fast 0.025/0.05/0.1
  times n/16 (the rate grows with the global batch).
- Stage 1b (edges): while a variant's best rate (highest mean final accuracy over both tuning seeds; a tie: the
  lower rate) is the smallest or largest tried, the next rate beyond it, a factor of 2 further, on both seeds; at
  most three rounds.
- Stage 1c (momentum): at the chosen rate eta*, the other momenta m of {0, 0.5, 0.9} with the effective step
  eta/(1 - m) held: eta = eta* (1 - m)/(1 - m0).
- The choice: the (rate, momentum) with the highest mean final accuracy over both tuning seeds (a tie: the lower
  rate).
- Stage 2: every variant at its choice on fresh seeds 1-5.
- Questions, one primary comparison each, per cell, paired by seed, Student-t 95% intervals: Q1 ringmaster - asgd
  (final accuracy); Q2 ringmaster - asgd-fast (final accuracy); Q3 ringmaster - bsp (restricted mean time to 80%,
  a run that never gets there counting the 60 s budget).
- Ringmaster's threshold R from n/4 to 2n at every cell, time only (the drops depend only on the timing): two
  epochs, seed 1, the pushes, compute seconds and joules dropped, overall and per kind of worker.
- Workers that hold different data (--partition sorted-shards, n = 16): the same stages for the asynchronous rules
  that keep every worker's data (asgd, ringmaster, staleness-aware, dc-asgd, rescaled; BSP refuses a partition and
  the fast-only baselines would hold other data), each worker holding one shard of the label-sorted training set
  (the four 32-core copies: classes 7, 8 and 9 only). Primary question Q4: rescaled - asgd (final accuracy), the
  case Rescaled ASGD is built for; secondary: every rule against asgd, and ringmaster, which drops the slow
  workers' pushes and with them six of the ten classes.
"""
import argparse
import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "analysis"))
from omnilearn_analysis import asp_tuned  # noqa: E402

BUDGET_S = 60.0
TUNING_SEEDS = (101, 102)
EVAL_SEEDS = (1, 2, 3, 4, 5)
MOMENTA = (0.0, 0.5, 0.9)
EDGE_ROUNDS = 3
PROFILE = str(ROOT / "scenarios" / "testbed" / "profiles" / "hl8.yaml")
ENERGY = '{wait: idle, cpu: {idle: 0.74, busy: 3.5, source: "Cloud Carbon Footprint, AWS per-vCPU min/max"}}'
PRIMARY = [("Q1", "ringmaster", "asgd", "accuracy"), ("Q2", "ringmaster", "asgd-fast", "accuracy"),
           ("Q3", "ringmaster", "bsp", "time_80")]
PARTITIONED_VARIANTS = ["asgd", "ringmaster", "staleness-aware", "dc-asgd", "rescaled"]
PRIMARY_PARTITIONED = [("Q4", "rescaled", "asgd", "accuracy")]
SECONDARY_PARTITIONED = [("ringmaster", "asgd"), ("staleness-aware", "asgd"), ("dc-asgd", "asgd"),
                         ("rescaled", "staleness-aware")]
SECONDARY = [("staleness-aware", "asgd"), ("dc-asgd", "asgd"), ("rescaled", "asgd"), ("asgd-fast", "asgd"),
             ("bsp-fast", "bsp"), ("asgd-fast", "bsp-fast"), ("staleness-aware", "ringmaster"),
             ("bsp-fast", "ringmaster")]


def nodes(n, fast_only=False):
    k = n // 4
    speed = f"{6e9 * 4 / n:g}"
    kinds = [("w3", 32)] if fast_only else [("w0", 6), ("w1", 6), ("w2", 4), ("w3", 32)]
    return "[" + ", ".join(f"{{name: {w}, count: {k}, cores: {c}, core_speed: {speed}, bandwidth: 10GBps, "
                           f"latency: 1us}}" for w, c in kinds) + "]"


# name -> (mode, grid at n = 16, whether the grid scales with n / 16, sets as a function of n)
VARIANTS = {
    "asgd": ("asp", (0.01, 0.02, 0.04), False, lambda n: {"workload.asp.rule": "asgd"}),
    "ringmaster": ("asp", (0.01, 0.02, 0.04), False,
                   lambda n: {"workload.asp.rule": "ringmaster", "workload.asp.delay_threshold": n}),
    "staleness-aware": ("asp", (0.02, 0.04, 0.08), True, lambda n: {"workload.asp.rule": "staleness-aware"}),
    "dc-asgd": ("asp", (0.01, 0.02, 0.04), False, lambda n: {"workload.asp.rule": "dc-asgd"}),
    "rescaled": ("asp", (0.01, 0.02, 0.04), False, lambda n: {"workload.asp.rule": "rescaled"}),
    "asgd-fast": ("asp", (0.01, 0.02, 0.04), False,
                  lambda n: {"workload.asp.rule": "asgd", "workload.global_batch": 8 * n,
                             "cluster.nodes": nodes(n, fast_only=True)}),
    "bsp": ("bsp", (0.05, 0.1, 0.2), True,
            lambda n: {"workload.global_batch": 32 * n, "emulator.eval_every": max(1, 64 // n),
                       "policy.every_n": max(1, 64 // n)}),
    "bsp-fast": ("bsp", (0.025, 0.05, 0.1), True,
                 lambda n: {"workload.global_batch": 8 * n, "emulator.eval_every": max(1, 256 // n),
                            "policy.every_n": max(1, 160 // n), "cluster.nodes": nodes(n, fast_only=True)}),
}
CELL_VARIANTS = {4: [v for v in VARIANTS if v != "rescaled"], 16: list(VARIANTS),
                 64: [v for v in VARIANTS if v != "rescaled"]}
MODE = {
    "asp": {"base": "asp-hl8.yaml", "m0": 0.5,
            "set": {"workload.numerics": "real", "emulator.eval_every": 100, "emulator.eval_samples": 2000,
                    "workload.model": PROFILE, "policy.name": "uniform"}},
    "bsp": {"base": "bsp-hl8.yaml", "m0": 0.9,
            "set": {"workload.numerics": "real", "workload.epochs": 50, "emulator.eval_samples": 2000,
                    "emulator.target_accuracy": 0, "emulator.time_budget_s": 60,
                    "workload.model": PROFILE, "policy.name": "omnilearn"}},
}


def label(n, name, lr, m):
    return f"n{n}.{name}.m{m:g}-lr{lr:g}"


def parse_label(variant):
    cell, name, m = variant.split(".", 2)[0], variant.split(".")[1], variant.rsplit(".m", 1)[1]
    return int(cell[1:]), name, float(m)


def sweep_yaml(name, mode, points, seeds, partition="iid"):
    """A sweep file of `points` (a list of (n, variant, lr, m)) on `seeds`, every point with its own overrides."""
    base = ROOT / "scenarios" / "testbed" / MODE[mode]["base"]
    sets = dict(MODE[mode]["set"])
    lines = ["# written by scripts/asp-tune.py", f"name: {name}", f"base: {base}", "set:"]
    lines += [f"  {k}: {v}" for k, v in sets.items()]
    lines.append(f"  energy: {ENERGY}")
    if partition != "iid":
        lines.append(f"  workload.partition: {partition}")
    lines += ["axes:", "  variant:"]
    for n, v, lr, m in points:
        over = {"cluster.nodes": nodes(n), "workload.global_batch": 32 * n}
        over.update(VARIANTS[v][3](n))
        over.update({"emulator.learning_rate": f"{lr:g}", "emulator.momentum": f"{m:g}"})
        body = ", ".join(f"{k}: {val}" for k, val in over.items())
        lines.append(f"    {label(n, v, lr, m)}: {{{body}}}")
    lines.append(f"  seed: [{', '.join(str(s) for s in seeds)}]")
    return "\n".join(lines) + "\n"


def run_stage(out, stage, points, seeds, jobs, omnilearn, partition="iid"):
    """Runs `points` on `seeds` (one sweep per mode) and returns the loaded rows of every point of that stage."""
    frames = []
    for mode in ("asp", "bsp"):
        mine = [p for p in points if VARIANTS[p[1]][0] == mode]
        if not mine:
            continue
        name = f"{stage}-{mode}"
        sweep = out / "sweeps" / f"{name}.yaml"
        sweep.parent.mkdir(parents=True, exist_ok=True)
        sweep.write_text(sweep_yaml(f"asp-tune-{name}", mode, mine, seeds, partition))
        folder = out / name
        cmd = [omnilearn, "sweep", str(sweep), "--jobs", str(jobs), "--out", str(folder)]
        if folder.exists():
            cmd.append("--resume")
        print(f"asp-tune: {stage} ({mode}): {len(mine)} configurations x {len(seeds)} seeds -> {folder}", flush=True)
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL)
        if done.returncode != 0:
            raise SystemExit(f"asp-tune: the sweep {sweep} failed (exit {done.returncode}); its logs are in {folder}")
        frames.append(load(folder, stage))
    return pd.concat(frames, ignore_index=True)


def load(folder, stage, curves=None):
    frame = asp_tuned.load(folder, stage, BUDGET_S, curves=curves)
    parsed = [parse_label(v) for v in frame["variant"]]
    frame.insert(1, "workers", [p[0] for p in parsed])
    frame["variant"] = [p[1] for p in parsed]
    frame.insert(4, "momentum", [p[2] for p in parsed])
    frame["point"] = [f"{Path(folder).name}/{Path(p).name}" for p in frame["point"]]
    return frame


def scores(tuning):
    """Mean final accuracy over the tuning seeds per (cell, variant, momentum, rate)."""
    return (tuning.groupby(["workers", "variant", "momentum", "learning_rate"], sort=True)
            .agg(seeds=("seed", "size"), accuracy_mean_pct=("final_accuracy", lambda a: 100.0 * a.mean()))
            .reset_index())


def best(rows):
    return rows.sort_values(["accuracy_mean_pct", "learning_rate"], ascending=[False, True]).iloc[0]


def edge_points(tuning):
    """The next rate beyond each grid edge that is still the best (at the default momentum), or nothing."""
    s = scores(tuning)
    points = []
    for (n, v), rows in s.groupby(["workers", "variant"]):
        m0 = MODE[VARIANTS[v][0]]["m0"]
        rows = rows[rows["momentum"] == m0]
        b = best(rows)
        rates = sorted(rows["learning_rate"])
        if b["learning_rate"] == rates[0]:
            points.append((n, v, rates[0] / 2, m0))
        elif b["learning_rate"] == rates[-1]:
            points.append((n, v, rates[-1] * 2, m0))
    return points


def choices(tuning):
    s = scores(tuning)
    return pd.DataFrame([best(rows) for _, rows in s.groupby(["workers", "variant"])]).reset_index(drop=True)


def r_sweep(out, cells, omnilearn):
    """Ringmaster at R = n/4, n/2, n, 2n per cell, time only; returns one row per (cell, R) with the drops."""
    rows = []
    for n in cells:
        base = ROOT / "scenarios" / "testbed" / "asp-hl8.yaml"
        rs = [max(1, n // 4), max(1, n // 2), n, 2 * n]
        text = "\n".join(["# written by scripts/asp-tune.py", f"name: asp-tune-r-time-n{n}", f"base: {base}", "set:",
                          f"  workload.model: {PROFILE}", "  workload.epochs: 2", "  policy.name: uniform",
                          f"  energy: {ENERGY}", f"  cluster.nodes: {nodes(n)}", f"  workload.global_batch: {32 * n}",
                          "  workload.asp.rule: ringmaster", "axes:",
                          f"  workload.asp.delay_threshold: [{', '.join(str(r) for r in rs)}]"]) + "\n"
        sweep = out / "sweeps" / f"r-time-n{n}.yaml"
        sweep.parent.mkdir(parents=True, exist_ok=True)
        sweep.write_text(text)
        folder = out / f"r-time-n{n}"
        cmd = [omnilearn, "sweep", str(sweep), "--jobs", "1", "--out", str(folder)]
        if folder.exists():
            cmd.append("--resume")
        if subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode != 0:
            raise SystemExit(f"asp-tune: the sweep {sweep} failed; its logs are in {folder}")
        table = pd.read_csv(folder / "sweep.csv")
        for _, r in table[table["status"] == "ok"].iterrows():
            e = json.loads((folder / r["point"] / "summary.json").read_text())["extra"]
            kinds = {k: e.get(f"asp_dropped_fraction_w{i}", math.nan)
                     for k, i in (("6-core", 0), ("4-core", n // 2), ("32-core", 3 * n // 4))}
            rows.append({"workers": n, "R": int(r["workload.asp.delay_threshold"]),
                         "dropped_push_fraction": e["dropped_push_fraction"],
                         "dropped_compute_fraction": e["dropped_compute_fraction"],
                         "dropped_energy_fraction": e["dropped_energy_fraction"],
                         **{f"dropped_{k}": v for k, v in kinds.items()}})
    return pd.DataFrame(rows)


def r_table(r):
    lines = ["| workers | R | pushes dropped | compute seconds dropped | compute joules dropped | dropped: 6-core / "
             "4-core / 32-core copies |", "|---|---|---|---|---|---|"]
    for _, x in r.sort_values(["workers", "R"]).iterrows():
        lines.append(f"| {int(x['workers'])} | {int(x['R'])} | {100 * x['dropped_push_fraction']:.1f}% | "
                     f"{100 * x['dropped_compute_fraction']:.1f}% | {100 * x['dropped_energy_fraction']:.1f}% | "
                     f"{100 * x['dropped_6-core']:.0f}% / {100 * x['dropped_4-core']:.0f}% / "
                     f"{100 * x['dropped_32-core']:.0f}% |")
    return "\n".join(lines)


def study(args):
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    omnilearn = args.omnilearn
    part = args.partition

    def stage(name, points, seeds):
        return run_stage(out, name, points, seeds, args.jobs, omnilearn, part)

    grid = []
    for n in args.cells:
        for v in (CELL_VARIANTS[n] if part == "iid" else PARTITIONED_VARIANTS):
            mode, rates, scales, _ = VARIANTS[v]
            for lr in rates:
                grid.append((n, v, lr * (n / 16 if scales else 1.0), MODE[mode]["m0"]))
    tuning = stage("rate", grid, TUNING_SEEDS)
    for r in range(1, EDGE_ROUNDS + 1):
        extra = edge_points(tuning)
        if not extra:
            break
        tuning = pd.concat([tuning, stage(f"edge{r}", extra, TUNING_SEEDS)], ignore_index=True)
    s = scores(tuning)
    mom = []
    for (n, v), rows in s.groupby(["workers", "variant"]):
        m0 = MODE[VARIANTS[v][0]]["m0"]
        eta = best(rows[rows["momentum"] == m0])["learning_rate"]
        mom += [(n, v, float(f"{eta * (1 - m) / (1 - m0):.6g}"), m) for m in MOMENTA if m != m0]
    tuning = pd.concat([tuning, stage("momentum", mom, TUNING_SEEDS)], ignore_index=True)
    chosen = choices(tuning)
    final = [(int(c["workers"]), c["variant"], float(c["learning_rate"]), float(c["momentum"]))
             for _, c in chosen.iterrows()]
    evaluation = stage("evaluation", final, EVAL_SEEDS)
    tuning["stage"] = "tuning"
    runs = pd.concat([tuning, evaluation], ignore_index=True)
    runs["partition"] = part
    return runs


def fmt(m, lo=math.nan, hi=math.nan, digits=2, sign=False):
    if m is None or (isinstance(m, float) and math.isnan(m)):
        return "-"
    f = f"{{:{'+' if sign else ''}.{digits}f}}"
    return f.format(m) if math.isnan(lo) else f"{f.format(m)} [{f.format(lo)}, {f.format(hi)}]"


def tuning_table(tuning):
    s = scores(tuning)
    c = choices(tuning)
    lines = ["| workers | variant | momentum | rate | mean final accuracy (%), seeds 101 and 102 | chosen |",
             "|---|---|---|---|---|---|"]
    for _, r in s.iterrows():
        hit = ((c["workers"] == r["workers"]) & (c["variant"] == r["variant"]) & (c["momentum"] == r["momentum"]) &
               (c["learning_rate"] == r["learning_rate"])).any()
        lines.append(f"| {r['workers']} | {r['variant']} | {r['momentum']:g} | {r['learning_rate']:g} | "
                     f"{r['accuracy_mean_pct']:.2f} ({r['seeds']}) | {'**yes**' if hit else ''} |")
    return "\n".join(lines)


def chosen_table(tuning):
    """Per cell and variant: the choice, its tuning accuracy, the rates and momenta tried, and the runner-up."""
    s = scores(tuning)
    lines = ["| workers | variant | chosen rate | chosen momentum | its mean accuracy, seeds 101-102 (%) | rates tried "
             "(at the default momentum) | best of the other momenta (%) |", "|---|---|---|---|---|---|---|"]
    for (n, v), rows in s.groupby(["workers", "variant"]):
        b = best(rows)
        m0 = MODE[VARIANTS[v][0]]["m0"]
        rates = ", ".join(f"{r:g}" for r in sorted(rows[rows["momentum"] == m0]["learning_rate"]))
        other = rows[rows["momentum"] != b["momentum"]]
        alt = best(other) if not other.empty else None
        alt_text = ("-" if alt is None else
                    f"{alt['accuracy_mean_pct']:.2f} (m {alt['momentum']:g}, rate {alt['learning_rate']:g})")
        lines.append(f"| {n} | {v} | {b['learning_rate']:g} | {b['momentum']:g} | {b['accuracy_mean_pct']:.2f} | "
                     f"{rates} | {alt_text} |")
    return "\n".join(lines)


def summary_table(ev):
    lines = ["| workers | variant | rate | momentum | final accuracy (%) [95% CI] | reached 80% | restricted mean time "
             "to 80% (s) [95% CI] | reached 85% | restricted mean time to 85% (s) | pushes dropped | energy (kJ) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for n, g in ev.groupby("workers"):
        s = asp_tuned.summarize(g, BUDGET_S)
        mom = g.groupby("variant")["momentum"].first()
        for _, r in s.iterrows():
            drop = r["dropped_push_fraction"]
            lines.append(
                f"| {n} | {r['variant']} | {r['learning_rate']:g} | {mom[r['variant']]:g} | "
                f"{fmt(r['accuracy_mean_pct'], r['accuracy_ci_low'], r['accuracy_ci_high'])} | "
                f"{r['reached_80']}/{r['seeds']} | "
                f"{fmt(r['rmst_80_s'], r['rmst_80_ci_low'], r['rmst_80_ci_high'], 1)} | "
                f"{r['reached_85']}/{r['seeds']} | {fmt(r['rmst_85_s'], digits=1)} | "
                f"{'-' if math.isnan(drop) else f'{100 * drop:.0f}%'} | {r['energy_j_mean'] / 1000:.2f} |")
    return "\n".join(lines)


def comparisons_table(ev):
    lines = ["| workers | question | a − b | pairs | final accuracy (pts) [95% CI] | time to 80% (s) [95% CI] | "
             "verdict on |", "|---|---|---|---|---|---|---|"]
    partitioned = "partition" in ev.columns and (ev["partition"] != "iid").any()
    primary = PRIMARY_PARTITIONED if partitioned else PRIMARY
    secondary = SECONDARY_PARTITIONED if partitioned else SECONDARY
    for n, g in ev.groupby("workers"):
        have = set(g["variant"])
        rows = [(f"**{q}** (primary)", a, b, m) for q, a, b, m in primary]
        seen = {(a, b) for _, a, b, _ in primary}
        rows += [("secondary", a, b, "accuracy") for a, b in secondary if (a, b) not in seen]
        for q, a, b, measure in rows:
            if a not in have or b not in have:
                continue
            d = asp_tuned.paired(g, a, b, BUDGET_S)
            lo, hi = ((d["accuracy_ci_low"], d["accuracy_ci_high"]) if measure == "accuracy"
                      else (d["time_80_ci_low"], d["time_80_ci_high"]))
            verdict = "interval excludes 0" if (lo > 0 or hi < 0) else "no detectable difference"
            reached = g[g["variant"].isin([a, b])]["reached_80"].any()
            if measure == "time_80" and not reached:
                verdict = "neither reaches 80% in 60 s"
            what = "final accuracy" if measure == "accuracy" else "time to 80%"
            time = (fmt(d["time_80_diff_s"], d["time_80_ci_low"], d["time_80_ci_high"], 1, True) if reached
                    else "neither reaches 80%")
            lines.append(f"| {n} | {q} | {a} − {b} | {d['pairs']} | "
                         f"{fmt(d['accuracy_diff_pts'], d['accuracy_ci_low'], d['accuracy_ci_high'], 2, True)} | "
                         f"{time} | {what}: {verdict} |")
    return "\n".join(lines)


def figure(ev, path, title):
    """Final accuracy per variant (mean and 95% interval over the seeds), one group of bars per worker count."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cells = sorted(ev["workers"].unique())
    variants = list(dict.fromkeys(v for v in VARIANTS if v in set(ev["variant"])))
    fig, ax = plt.subplots(figsize=(8.0, 4.2))
    width = 0.8 / len(variants)
    colours = plt.get_cmap("tab10")
    for i, v in enumerate(variants):
        xs, ys, errs = [], [], []
        for j, n in enumerate(cells):
            s = asp_tuned.summarize(ev[(ev["workers"] == n) & (ev["variant"] == v)], BUDGET_S)
            if s.empty:
                continue
            r = s.iloc[0]
            xs.append(j + (i - (len(variants) - 1) / 2) * width)
            ys.append(r["accuracy_mean_pct"])
            errs.append(r["accuracy_mean_pct"] - r["accuracy_ci_low"] if r["seeds"] > 1 else 0.0)
        ax.bar(xs, ys, width, yerr=errs, color=colours(i % 10), label=v, capsize=2)
    ax.set_xticks(range(len(cells)), [f"{n} workers" for n in cells])
    ax.set_ylabel("final test accuracy (%), mean and 95% interval")
    ax.set_ylim(0, 100)
    ax.set_title(title, fontsize="medium")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize="x-small", ncol=len(variants), loc="upper center", bbox_to_anchor=(0.5, -0.08))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"figure: {path}")


def read_runs(path):
    """The per-run table that --runs-csv writes, its reached_* columns as booleans again."""
    runs = pd.read_csv(path)
    for col in ("reached_80", "reached_85"):
        runs[col] = runs[col].astype(str).str.lower().eq("true")
    return runs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="the study's folder (its sweeps and run folders)")
    ap.add_argument("--cells", type=int, nargs="+", default=[4, 16, 64], choices=[4, 16, 64], help="worker counts")
    ap.add_argument("--partition", default="iid", choices=["iid", "sorted-shards"],
                    help="workload.partition of the asynchronous variants (sorted-shards: the rules only)")
    ap.add_argument("--jobs", type=int, default=2, help="points run at once (default 2)")
    ap.add_argument("--omnilearn", default=str(ROOT / "build" / "cli" / "omnilearn"),
                    help="the omnilearn binary (default: build/cli/omnilearn; a copy keeps a rebuild from touching "
                         "a running study)")
    ap.add_argument("--runs-csv", help="write the per-run table here")
    ap.add_argument("--figure", help="write the final accuracies per variant and worker count (PNG) here")
    ap.add_argument("--from-csv", help="read the per-run table instead of running")
    args = ap.parse_args(argv)
    if args.from_csv:
        runs = read_runs(args.from_csv)
    elif args.out:
        runs = study(args)
    else:
        ap.error("give --out (run the study) or --from-csv (its tables)")
    if args.runs_csv:
        runs.to_csv(args.runs_csv, index=False, float_format="%.6g")
    if args.out and args.partition == "iid":
        print("Ringmaster's drops per threshold R (time only, two epochs, seed 1):\n")
        print(r_table(r_sweep(Path(args.out), args.cells, args.omnilearn)) + "\n")
    tuning, ev = runs[runs["stage"] != "evaluation"], runs[runs["stage"] == "evaluation"]
    print(f"runs: {len(tuning)} tuning, {len(ev)} evaluation\n")
    print("Stage 1, the choice per variant and worker count:\n")
    print(chosen_table(tuning) + "\n")
    print("Stage 1, every point (mean final accuracy over the tuning seeds):\n")
    print(tuning_table(tuning) + "\n")
    print("Stage 2, seeds 1-5 at the chosen rate and momentum:\n")
    print(summary_table(ev) + "\n")
    print("Paired by seed (times: min(T, 60 s)):\n")
    print(comparisons_table(ev) + "\n")
    if args.figure:
        partition = runs["partition"].iloc[0] if "partition" in runs.columns else args.partition
        what = "one shard of the label-sorted data per worker" if partition != "iid" else "iid data"
        figure(ev, args.figure, f"HL8, rate and momentum tuned per rule and worker count\n{what}, seeds 1-5")
    return 0


if __name__ == "__main__":
    sys.exit(main())

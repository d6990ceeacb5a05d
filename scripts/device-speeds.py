#!/usr/bin/env python3
"""Derives traces/devices/device-speeds.csv (per-model, per-device-kind training speed, samples/s of one worker) from
the measured tables in ../shared/traces-raw: Gavel's throughputs on K80, P100 and V100 (one GPU, the job alone) and
the Pollux applications' step times on one T4 (placement 1). Standard library only.
With --packed-output it also writes the packed-pair table (traces/devices/packed-speeds.csv): for two one-GPU jobs of
Gavel's models sharing one K80, P100 or V100, the fraction of its speed alone each job keeps (0 where Gavel measured 0).
With --curves-output it also writes the metric curves (traces/devices/metric-curves.csv): for each Pollux application
and measured global batch, the samples trained (iteration x batch) at which the best validation metric so far first
reaches a new best, with the metric's direction (Pollux's own rule: higher is better when the curve's first value is
below its last). Percentages (BERT's F1, DeepSpeech2's word error rate) are written as fractions, as job targets are.
Usage: scripts/device-speeds.py [--raw ../shared/traces-raw] [--output traces/devices/device-speeds.csv]
                                [--packed-output traces/devices/packed-speeds.csv]
                                [--curves-output traces/devices/metric-curves.csv]"""
import argparse
import ast
import csv
import io
import json
import os
import statistics
import sys

# Gavel's job types (Narayanan et al., OSDI 2020, Table 2) under the names the job files use. A3C is left out: its
# "step" is a batch of environment interactions, not samples of a dataset.
GAVEL_MODELS = {
    "ResNet-18": ("resnet18", "cifar10"),
    "ResNet-50": ("resnet50", "imagenet"),
    "Transformer": ("transformer", "multi30k"),
    "LM": ("lm", "wikitext-2"),
    "Recommendation": ("recommendation", "ml-20m"),
    "CycleGAN": ("cyclegan", "monet2photo"),
}
GAVEL_BATCH_WITHOUT_SIZE = {"CycleGAN": 1}
# The Pollux applications (Qiao et al., OSDI 2021, Table 1) under the same names.
POLLUX_APPS = {
    "cifar10": ("resnet18", "cifar10"),
    "imagenet": ("resnet50", "imagenet"),
    "bert": ("bert", "squad"),
    "deepspeech2": ("deepspeech2", "cmu-arctic"),
    "yolov3": ("yolov3", "voc"),
    "ncf": ("ncf", "movielens"),
}


def num(v: float) -> str:
    return f"{v:.6g}"


def gavel_job(key: str):
    """(model, batch) of a one-GPU job key of one of the six models, else None."""
    label, scale = ast.literal_eval(key)
    if scale != 1:
        return None  # one worker's speed: multi-GPU entries are whole jobs
    name, _, rest = label.partition(" (batch size ")
    if name not in GAVEL_MODELS:
        return None
    batch = int(rest.rstrip(")")) if rest else GAVEL_BATCH_WITHOUT_SIZE[name]
    return GAVEL_MODELS[name][0], batch


def gavel_rows(table):
    for device in ("k80", "p100", "v100"):
        for key, entry in table[device].items():
            job = gavel_job(key)
            if job is None:
                continue
            model, batch = job
            dataset = next(d for m, d in GAVEL_MODELS.values() if m == model)
            yield model, dataset, device, batch, entry["null"] * batch, "gavel"


def packed_rows(table):
    """Each unordered pair of one-GPU jobs once per kind: (device, model_a, batch_a, model_b, batch_b, frac_a, frac_b),
    a fraction being the job's steps/s packed over its steps/s alone."""
    rows = {}
    for device in ("k80", "p100", "v100"):
        for key, entry in table[device].items():
            a = gavel_job(key)
            if a is None:
                continue
            for other, pair in entry.items():
                if other == "null":
                    continue
                b = gavel_job(other)
                if b is None or other not in table[device]:
                    continue
                frac_a = pair[0] / entry["null"]
                frac_b = pair[1] / table[device][other]["null"]
                if (a[0], a[1]) <= (b[0], b[1]):
                    rows.setdefault((device, a, b), (frac_a, frac_b))
                else:
                    rows.setdefault((device, b, a), (frac_b, frac_a))
    for (device, a, b), (frac_a, frac_b) in sorted(rows.items()):
        yield device, a[0], a[1], b[0], b[1], frac_a, frac_b


def write_text(path: str, text: str) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    os.replace(tmp, path)


def pollux_rows(folder: str):
    for app, (model, dataset) in POLLUX_APPS.items():
        steps = {}
        with open(os.path.join(folder, app, "placements.csv"), encoding="utf-8") as f:
            for row in csv.DictReader(f):
                if row["placement"] == "1":
                    steps.setdefault(int(row["local_bsz"]), []).append(float(row["step_time"]))
        for batch, times in sorted(steps.items()):
            yield model, dataset, "t4", batch, batch / statistics.median(times), "pollux"


# Pollux's metrics given in percent, written as fractions so that a job's target (in (0, 1]) is on the same scale.
POLLUX_PERCENT_METRICS = {"bert", "deepspeech2"}


def curve_rows(folder: str):
    """(model, app, direction, global_batch, samples, metric): the rows of each validation curve where the best metric
    so far improves (the first row included), samples = iteration x global batch."""
    for app, (model, _) in POLLUX_APPS.items():
        curves = {}
        for name in os.listdir(os.path.join(folder, app)):
            if name.startswith("validation-") and name.endswith(".csv"):
                with open(os.path.join(folder, app, name), encoding="utf-8") as f:
                    curves[int(name[len("validation-"):-len(".csv")])] = [
                        (int(r["iteration"]), float(r["metric"])) for r in csv.DictReader(f)]
        scale = 0.01 if app in POLLUX_PERCENT_METRICS else 1.0
        first = curves[min(curves)]
        higher = first[0][1] < first[-1][1]  # as Pollux's simulator/applications.py decides
        for batch, rows in sorted(curves.items()):
            best = None
            for iteration, metric in rows:
                if best is None or (metric > best if higher else metric < best):
                    best = metric
                    yield model, app, "higher" if higher else "lower", batch, iteration * batch, metric * scale


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raw", default="../shared/traces-raw")
    parser.add_argument("--output", default="traces/devices/device-speeds.csv")
    parser.add_argument("--packed-output", default=None)
    parser.add_argument("--curves-output", default=None)
    args = parser.parse_args()
    with open(os.path.join(args.raw, "gavel-throughputs", "simulation_throughputs.json"), encoding="utf-8") as f:
        table = json.load(f)
    rows = list(gavel_rows(table))
    rows += list(pollux_rows(os.path.join(args.raw, "pollux-osdi21", "traces")))
    rows.sort(key=lambda r: (r[0], r[2], r[3]))
    out = io.StringIO()
    out.write("# generated by: scripts/device-speeds.py --raw ../shared/traces-raw --output " + args.output + "\n")
    out.write("# Gavel (MIT, Copyright (c) 2020 Stanford Future Data Systems): simulation_throughputs.json @ c4fa400,"
              " one GPU, job alone; samples/s = steps/s x batch\n")
    out.write("# Pollux (Apache-2.0, petuum/adaptdl @ de25dcc, simulator/traces/<app>/placements.csv): placement 1 on"
              " one T4; samples/s = local_bsz / median step_time\n")
    out.write("model,dataset,device,batch,samples_per_s,source\n")
    for model, dataset, device, batch, speed, source in rows:
        out.write(f"{model},{dataset},{device},{batch},{num(speed)},{source}\n")
    write_text(args.output, out.getvalue())
    print(f"wrote {args.output}: {len(rows)} rows", file=sys.stderr)
    if args.packed_output:
        packed = list(packed_rows(table))
        out = io.StringIO()
        out.write("# generated by: scripts/device-speeds.py --raw ../shared/traces-raw --packed-output "
                  + args.packed_output + "\n")
        out.write("# Gavel (MIT, Copyright (c) 2020 Stanford Future Data Systems): simulation_throughputs.json @ c4fa400,"
                  " two one-GPU jobs packed on one GPU;\n# fraction = the job's steps/s packed / its steps/s alone"
                  " (0 where Gavel measured 0: the pair does not fit)\n")
        out.write("device,model_a,batch_a,model_b,batch_b,fraction_a,fraction_b\n")
        for device, ma, ba, mb, bb, fa, fb in packed:
            out.write(f"{device},{ma},{ba},{mb},{bb},{num(fa)},{num(fb)}\n")
        write_text(args.packed_output, out.getvalue())
        print(f"wrote {args.packed_output}: {len(packed)} rows", file=sys.stderr)
    if args.curves_output:
        curves = list(curve_rows(os.path.join(args.raw, "pollux-osdi21", "traces")))
        out = io.StringIO()
        out.write("# generated by: scripts/device-speeds.py --raw ../shared/traces-raw --curves-output "
                  + args.curves_output + "\n")
        out.write("# Pollux (Apache-2.0, Qiao et al., OSDI 2021; petuum/adaptdl @ de25dcc90c350b8ade3a710e437a651a8d2efae6,"
                  " simulator/traces/<app>/validation-<global_batch>.csv):\n# the validation metric after training"
                  " `samples` (iteration x global_batch) at that global batch, rows where the best so far improves;"
                  "\n# direction: higher or lower is better; bert (F1) and deepspeech2 (word error rate) as fractions\n")
        out.write("model,app,direction,global_batch,samples,metric\n")
        for model, app, direction, batch, samples, metric in curves:
            out.write(f"{model},{app},{direction},{batch},{samples},{num(metric)}\n")
        write_text(args.curves_output, out.getvalue())
        print(f"wrote {args.curves_output}: {len(curves)} rows", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

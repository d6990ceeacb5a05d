#!/usr/bin/env python3
"""Regenerates every table and figure of docs/results-asp.md: runs the page's own command blocks (each ```sh block
under a `<!-- docs-check: lint: ... -->` note, the commands a reader sees) in the page's order, with the build's
`omnilearn` on PATH and the analysis package importable, so that what runs is what the page says ran.

usage: scripts/asp-page.py --list                       the sections, their notes (runs, time) and commands
       scripts/asp-page.py [--section TEXT ...]         run them (all, or the sections whose heading holds TEXT)
                         [--with-testbed] [--dry-run]

The virtual-time studies take hours on 2 cores in all (each note says how long); every sweep runs with its own
folder under runs/, and a sweep that was interrupted goes on with `omnilearn sweep --resume` where the block asks
for it. Blocks that need the testbed (root and cgroup write access: their note says so) run only with
--with-testbed. The blocks that write a committed per-run table (`--runs-csv docs/data/...`) rewrite it: compare it
with `git diff` (the page gives each table's sha256). From the committed tables alone, without any run:
`scripts/asp-results.py --from-csv docs/data/asp-tuned-runs.csv`, `scripts/asp-tune.py --from-csv
docs/data/asp-tune-runs.csv` (and `asp-tune-shards-runs.csv`).
"""
import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "results-asp.md"
NEEDS_TESTBED = re.compile(r"\b(root|cgroup)", re.I)


def blocks(page=PAGE):
    """[(heading, note, command text, line)] of the page's runnable ```sh blocks (a lint note right above), in order."""
    out, section, heading = [], "", ""
    lines = page.read_text().splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("## "):
            section = heading = lines[i][3:].strip()
        elif lines[i].startswith("### "):
            heading = f"{section} / {lines[i][4:].strip()}"
        note = re.match(r"<!-- docs-check: lint: (.*) -->", lines[i - 1]) if i > 0 else None
        if lines[i].strip() == "```sh" and note:
            start = i + 1
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                i += 1
            out.append((heading, note.group(1), "\n".join(lines[start:i]), start + 1))
        i += 1
    return out


def needs_testbed(note):
    return bool(NEEDS_TESTBED.search(note))


def environment(build):
    env = dict(os.environ)
    # Debian's python3 (with pandas) before any other on PATH, as scripts/test.sh uses it.
    env["PATH"] = os.pathsep.join([str(build / "cli"), "/usr/bin", env.get("PATH", "")])
    env["PYTHONPATH"] = f"{ROOT / 'analysis'}{os.pathsep}{env.get('PYTHONPATH', '')}".rstrip(os.pathsep)
    return env


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true", help="print the sections and their commands, run nothing")
    ap.add_argument("--section", nargs="+", default=[], help="only the sections whose heading holds one of these")
    ap.add_argument("--with-testbed", action="store_true", help="also the testbed blocks (root, cgroups)")
    ap.add_argument("--dry-run", action="store_true", help="print what would run")
    ap.add_argument("--build", default=str(ROOT / "build"), help="the build folder (default: build)")
    args = ap.parse_args(argv)
    found = blocks()
    if not found:
        print(f"asp-page: no command blocks in {PAGE}", file=sys.stderr)
        return 1
    chosen = [b for b in found if not args.section or any(s.lower() in b[0].lower() for s in args.section)]
    if not chosen:
        print(f"asp-page: no section matches {args.section}; the sections: "
              + "; ".join(b[0] for b in found), file=sys.stderr)
        return 2
    if args.list:
        for heading, note, body, line in chosen:
            print(f"## {heading} (docs/results-asp.md:{line}; {note})\n{body}\n")
        return 0
    build = Path(args.build)
    if not args.dry_run and not (build / "cli" / "omnilearn").exists():
        print(f"asp-page: {build / 'cli' / 'omnilearn'} does not exist: build first (scripts/build.sh)",
              file=sys.stderr)
        return 1
    env = environment(build)
    for n, (heading, note, body, line) in enumerate(chosen, 1):
        if needs_testbed(note) and not args.with_testbed:
            print(f"asp-page: [{n}/{len(chosen)}] {heading}: skipped, it needs the testbed ({note}); "
                  "give --with-testbed as root", flush=True)
            continue
        print(f"asp-page: [{n}/{len(chosen)}] {heading} ({note})", flush=True)
        if args.dry_run:
            print(body)
            continue
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", body], cwd=ROOT, env=env)
        if done.returncode != 0:
            print(f"asp-page: the block at docs/results-asp.md:{line} failed (exit {done.returncode}); the "
                  "blocks before it are done, and running again resumes the sweeps", file=sys.stderr)
            return done.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())

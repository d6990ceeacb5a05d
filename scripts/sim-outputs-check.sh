#!/bin/sh
# Before/after check of the simulator's default outputs: runs every scenario of scenarios/paper and
# scenarios/examples (sweep files excepted) with one omnilearn binary into a folder, or compares two such folders
# file by file (iterations.csv, plans.csv, availability.csv, evaluations.csv, summary.json, timeline.json;
# manifest.json holds wall-clock fields and the command line, so it is left out).
#   scripts/sim-outputs-check.sh record OMNILEARN_BIN OUT_DIR
#   scripts/sim-outputs-check.sh compare DIR_BEFORE DIR_AFTER      (exit 1 on any difference)
set -eu
case "${1:-}" in
  record)
    bin=$2 out=$3
    mkdir -p "$out"
    for f in scenarios/paper/*.yaml scenarios/examples/*.yaml; do
      case "$f" in */sweep-*) continue ;; esac
      name=$(basename "$f" .yaml)
      "$bin" sim "$f" --quiet --out "$out/$name" --force >/dev/null
    done
    ;;
  compare)
    before=$2 after=$3 status=0
    for d in "$before"/*/; do
      name=$(basename "$d")
      for file in iterations.csv plans.csv availability.csv evaluations.csv summary.json timeline.json; do
        [ -e "$d/$file" ] || [ -e "$after/$name/$file" ] || continue
        if ! cmp -s "$d/$file" "$after/$name/$file"; then
          echo "DIFFERS: $name/$file"
          status=1
        fi
      done
    done
    [ "$status" = 0 ] && echo "identical: every file of every scenario"
    exit "$status"
    ;;
  *)
    echo "usage: $0 record OMNILEARN_BIN OUT_DIR | compare DIR_BEFORE DIR_AFTER" >&2
    exit 2
    ;;
esac

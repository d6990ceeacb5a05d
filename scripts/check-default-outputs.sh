#!/usr/bin/env bash
# Byte-identity of the default network model: runs every scenario of scenarios/paper and scenarios/examples (sweep
# files skipped) with two omnilearn binaries and compares iterations.csv, plans.csv, availability.csv, summary.json
# and timeline.json. Usage: scripts/check-default-outputs.sh BEFORE_BINARY AFTER_BINARY [WORK_DIR]
set -euo pipefail
before=$1 after=$2 work=${3:-$(mktemp -d)}
cd "$(dirname "$0")/.."
status=0
for f in scenarios/paper/*.yaml scenarios/examples/*.yaml; do
  grep -q "^axes:\|^base:\|^sweep:" "$f" && continue
  name=$(basename "$f" .yaml)
  for side in before after; do
    bin=$before; [ "$side" = after ] && bin=$after
    rm -rf "$work/$side/$name"
    "$bin" sim "$f" --out "$work/$side/$name" > /dev/null
  done
  for out in iterations.csv plans.csv availability.csv summary.json timeline.json; do
    a=$work/before/$name/$out b=$work/after/$name/$out
    [ -e "$a" ] || [ -e "$b" ] || continue
    if cmp -s "$a" "$b"; then echo "same     $name/$out"; else echo "DIFFERS  $name/$out"; status=1; fi
  done
done
exit $status

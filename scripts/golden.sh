#!/usr/bin/env bash
# Golden outputs: runs each case of tests/golden/CASES (a shipped scenario with the arguments its line names) and
# compares what it writes with the files committed under tests/golden/<case>/ (SimGrid's tesh files, for our examples).
#   scripts/golden.sh check  [--bin OMNILEARN] [--keep DIR] [CASE...]   exit 1 on a difference, printing a diff
#   scripts/golden.sh update [--bin OMNILEARN] [CASE...]                rewrites tests/golden/<case>/
#   scripts/golden.sh list                                              the case names, one a line
#   scripts/golden.sh coverage     exit 1 naming each scenarios/<folder>/<file>.yaml that CASES does not name (in a
#                                  case, or in a comment saying why it is not pinned)
# No CASE: every case (a full update also removes the folders of cases no longer listed). --bin defaults to
# $OMNILEARN_BIN, else build/cli/omnilearn. Exit 77 when every case asked for was skipped (a sim-train case in a
# build without LibTorch). Works in a temporary folder that it removes (--keep DIR copies the raw run folders to
# DIR/<case>/ for a look) and writes nothing else, except update writing tests/golden/.
# What is pinned: the command's stdout (stdout.txt) and every file of the run folder, normalised: the source and
# temporary folders' paths read <source> and <work>; manifest.json loses its wall_clock, omnilearn_version and
# versions fields and its argv[0] (functions of the host, the commit and the build, not of the scenario); sweep
# point logs (*.log) are left out. A top-level file up to GOLDEN_MAX_BYTES (64 KiB) is committed as text; a bigger
# one, and every file of a sweep's point folders, is pinned by its sha256 in <case>/SHA256SUMS.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
golden=$root/tests/golden
cases_file=$golden/CASES
max_bytes=${GOLDEN_MAX_BYTES:-65536}
diff_lines=40

usage() {
  echo "usage: $0 check|update|list|coverage [--bin OMNILEARN] [--keep DIR] [CASE...]" >&2
  exit 2
}

mode=${1:-}
[ $# -gt 0 ] && shift
case "$mode" in check | update | list | coverage) ;; *) usage ;; esac
bin=${OMNILEARN_BIN:-$root/build/cli/omnilearn}
keep=""
selected=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -*) usage ;;
    *) selected+=("$1"); shift ;;
  esac
done

# The case lines (those not blank, not a comment, not indented, as tests/golden/CMakeLists.txt reads them): name,
# command (sim | sweep | sim-train), scenario path (from the source root), arguments (split on spaces).
case_lines() { grep '^[^#[:space:]]' "$cases_file"; }
case_names() { case_lines | awk '{ print $1 }'; }

if [ "$mode" = list ]; then
  case_names
  exit 0
fi
if [ "$mode" = coverage ]; then
  status=0
  for f in "$root"/scenarios/*/*.yaml; do
    f=${f#"$root"/}
    if ! grep -qF "$f" "$cases_file"; then
      echo "golden: $f: not in tests/golden/CASES (add a case, or a comment saying why it is not pinned)" >&2
      status=1
    fi
  done
  exit $status
fi
[ -x "$bin" ] || { echo "golden.sh: no omnilearn binary at $bin (build it, or pass --bin)" >&2; exit 2; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
all=false
if [ ${#selected[@]} -eq 0 ]; then
  all=true
  mapfile -t selected < <(case_names)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/omnilearn-golden.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Rewrites the run's files from $1 into the comparable set $2: normalised text, big files' hashes in SHA256SUMS.
normalise() {
  local raw=$1 out=$2
  /usr/bin/python3 - "$raw" "$out" "$root" "$work" "$max_bytes" <<'PY'
import hashlib, json, os, sys

raw, out, root, work, max_bytes = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])

def paths(text):
    return text.replace(work, "<work>").replace(root, "<source>")

def manifest(text):
    m = json.loads(text)
    for key in ("wall_clock", "omnilearn_version", "versions"):
        m.pop(key, None)
    if m.get("argv"):
        m["argv"][0] = "omnilearn"
    return json.dumps(m, indent=2, ensure_ascii=False) + "\n"

sums = []
for folder, dirs, files in os.walk(raw):
    dirs.sort()
    for name in sorted(files):
        if name.endswith(".log"):
            continue
        src = os.path.join(folder, name)
        rel = os.path.relpath(src, raw)
        with open(src, "rb") as f:
            data = f.read()
        try:
            text = paths(data.decode("utf-8"))
            if name == "manifest.json":
                text = manifest(text)
            data = text.encode("utf-8")
        except UnicodeDecodeError:
            pass
        if folder != raw or len(data) > max_bytes:
            sums.append(f"{hashlib.sha256(data).hexdigest()}  {rel}  ({len(data)} bytes)\n")
            continue
        dst = os.path.join(out, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "wb") as f:
            f.write(data)
if sums:
    with open(os.path.join(out, "SHA256SUMS"), "w") as f:
        f.writelines(sums)
PY
}

# Why case $1 (its line's command) cannot run here, or nothing.
skip_reason() {
  [ "$1" = sim-train ] || return 0
  if [ ! -x "$(dirname "$bin")/omnilearn-sim-train" ]; then
    echo "no omnilearn-sim-train next to $bin (a build without LibTorch)"
  elif [ ! -d /usr/share/datasets/fashion-mnist ]; then
    echo "no Fashion-MNIST at /usr/share/datasets/fashion-mnist (Debian: dataset-fashion-mnist)"
  fi
}

# Runs a case (its line's words) into $work/<name>/: raw/ (the run folder), stdout, stderr, actual/ (normalised).
# LibTorch (sim-train cases) runs one thread on the baseline x86-64 kernels (ATen's and oneDNN's dispatch would
# otherwise pick AVX2 or AVX-512 code by the host's CPU, and the rounding with it); the data set's unpacked copy
# goes to the temporary folder, not ~/.cache.
run_case() {
  local name=$1 command=$2 scenario=$3
  shift 3
  local dir=$work/$name
  mkdir -p "$dir/actual"
  local words=("$command") options=()
  case "$command" in
    sim-train) words=(sim) ;;
    sweep) options=(--jobs 1) ;;
    jobs) words=(jobs run) ;;
  esac
  if ! (cd "$dir" && XDG_CACHE_HOME="$dir/cache" ATEN_CPU_CAPABILITY=default ONEDNN_MAX_CPU_ISA=SSE41 \
          OMP_NUM_THREADS=1 "$bin" "${words[@]}" "$root/$scenario" --out "$dir/raw" --quiet "${options[@]}" "$@" \
          > "$dir/stdout" 2> "$dir/stderr"); then
    echo "golden: $name: omnilearn $command $scenario $* failed:" >&2
    tail -n 20 "$dir/stderr" >&2
    return 1
  fi
  cp "$dir/stdout" "$dir/raw/stdout.txt"
  normalise "$dir/raw" "$dir/actual"
  rm "$dir/raw/stdout.txt"
}

# Compares the committed folder $2 with $3 for case $1; prints each difference, returns 1 if any.
compare_case() {
  local name=$1 expected=$2 actual=$3 status=0 file
  if [ ! -d "$expected" ]; then
    echo "golden: $name: no committed outputs (tests/golden/$name/): run scripts/golden.sh update $name" >&2
    return 1
  fi
  while read -r file; do
    if [ ! -e "$expected/$file" ]; then
      echo "golden: $name/$file: written by the run, not committed" >&2
      status=1
    elif [ ! -e "$actual/$file" ]; then
      echo "golden: $name/$file: committed, not written by the run" >&2
      status=1
    elif ! cmp -s "$expected/$file" "$actual/$file"; then
      echo "golden: $name/$file differs (first $diff_lines lines of the diff):" >&2
      diff -u --label "tests/golden/$name/$file (committed)" --label "$name/$file (this build)" \
        "$expected/$file" "$actual/$file" | head -n "$diff_lines" >&2 || true
      if [ "$file" = SHA256SUMS ] || [ "${file##*/}" = SHA256SUMS ]; then
        echo "golden: (files pinned by hash: scripts/golden.sh check --keep DIR $name keeps this run's files)" >&2
      fi
      status=1
    fi
  done < <( (cd "$expected" && find . -type f; cd "$actual" && find . -type f) | sed 's|^\./||' | sort -u)
  return $status
}

status=0 skipped=0
for name in "${selected[@]}"; do
  line=$(case_lines | awk -v n="$name" '$1 == n')
  if [ -z "$line" ]; then
    echo "golden: no case $name in tests/golden/CASES" >&2
    status=1
    continue
  fi
  read -r -a words <<< "$line"
  reason=$(skip_reason "${words[1]}")
  if [ -n "$reason" ]; then
    echo "golden: $name: skipped: $reason"
    skipped=$((skipped + 1))
    continue
  fi
  if ! run_case "${words[@]}"; then
    status=1
    continue
  fi
  if [ -n "$keep" ]; then
    mkdir -p "$keep/$name"
    cp -r "$work/$name/raw/." "$keep/$name/"
  fi
  if [ "$mode" = update ]; then
    rm -rf "${golden:?}/$name"
    cp -r "$work/$name/actual" "$golden/$name"
    echo "golden: $name: updated"
  elif compare_case "$name" "$golden/$name" "$work/$name/actual"; then
    echo "golden: $name: same"
  else
    status=1
  fi
done

# A full update also removes the folders of cases that CASES no longer lists.
if [ "$mode" = update ] && $all; then
  for dir in "$golden"/*/; do
    name=$(basename "$dir")
    if ! case_names | grep -qx "$name"; then
      rm -rf "${golden:?}/$name"
      echo "golden: $name: removed (not in CASES)"
    fi
  done
fi
if [ "$status" -eq 0 ] && [ "$skipped" -eq ${#selected[@]} ]; then
  exit 77
fi
exit $status

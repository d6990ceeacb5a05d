#!/usr/bin/env bash
# The lengths of the project's C++ functions, longest first, from Universal Ctags (Debian: universal-ctags), for the
# house's size goals in docs/DESIGN.md: no function outside python/src over 100 lines, at most 10 over 80.
#   scripts/function-lengths.sh [MIN]   functions of at least MIN lines (default 81), then the counts over 80 and 100
# Tests, fuzz targets' harnesses and build trees are left out; python/tests is counted.
set -euo pipefail
cd "$(dirname "$0")/.."
min=${1:-81}
command -v ctags >/dev/null || { echo "function-lengths.sh: needs Universal Ctags (apt-get install universal-ctags)" >&2; exit 2; }
lengths=$(git ls-files '*.cpp' '*.h' | grep -v -E '^(python/src|tests|build)' |
  xargs ctags --fields=+ne --kinds-c++=f -x --_xformat='%{line} %{end} %F %N' 2>/dev/null |
  awk '{print $2 - $1 + 1, $3 ":" $1, $4}' | sort -rn)
awk -v m="$min" '$1 >= m' <<<"$lengths"
echo "over 80 lines: $(awk '$1 > 80' <<<"$lengths" | wc -l); over 100 lines: $(awk '$1 > 100' <<<"$lengths" | wc -l)"

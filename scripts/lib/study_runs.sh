# Sourced by the study scripts that make one run per point into OUT/<name>/ (testbed-results.sh,
# asp-testbed-confirm.sh, virtual-time-validate.sh): the defaults of the options they share, and --resume's rule.
# The script sets `out` itself; `levels` is for those with a --levels. Brings parse_options (options.sh) along.
. "$(dirname "${BASH_SOURCE[0]}")/options.sh"

seeds="1 2 3"
levels="1 2 4 8"
resume=0
bin=build/cli/omnilearn

# kept NAME: true where --resume keeps the run NAME instead of making it again (OUT/NAME has a summary.json).
kept() { [ "$resume" = 1 ] && [ -f "$out/$1/summary.json" ]; }

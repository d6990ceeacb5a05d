# Sourced by scripts/*.sh: their command-line options, parsed one way. It sets only the variables the caller
# names, and unknown_argument.
#
# parse_options [--help-lines FIRST,LAST] SPEC... -- ARG...
#   Reads the script's ARGs against the SPECs, in order, into the caller's variables:
#     --name=VAR          the option takes a value: `--name V` sets VAR to V
#     --name=VAR=VALUE    a flag: `--name` sets VAR to VALUE
#   With --help-lines, `-h` or `--help` prints lines FIRST to LAST of the script (its header, "# " taken off)
#   and exits 0. Returns 0 once every ARG is read; at the first ARG no SPEC names, sets unknown_argument to it
#   and returns 2, for the script to say so in its own words.
parse_options() {
  local _help_lines=""
  if [ "$1" = --help-lines ]; then _help_lines=$2; shift 2; fi
  local -A _takes_value=() _sets=()
  local _spec _name _rest
  while [ "$1" != -- ]; do
    _spec=$1; shift
    _name=${_spec%%=*}; _rest=${_spec#*=}
    if [[ "$_rest" == *=* ]]; then _sets[$_name]=$_rest; else _takes_value[$_name]=$_rest; fi
  done
  shift
  while [ $# -gt 0 ]; do
    if [ -z "$1" ]; then
      unknown_argument=$1; return 2
    elif [ -n "${_takes_value[$1]+set}" ]; then
      printf -v "${_takes_value[$1]}" '%s' "$2"; shift 2
    elif [ -n "${_sets[$1]+set}" ]; then
      printf -v "${_sets[$1]%%=*}" '%s' "${_sets[$1]#*=}"; shift
    elif [ -n "$_help_lines" ] && { [ "$1" = -h ] || [ "$1" = --help ]; }; then
      sed -n "${_help_lines}p" "$0" | sed 's/^# \{0,1\}//'; exit 0
    else
      unknown_argument=$1; return 2
    fi
  done
}

#!/usr/bin/env bash
# Runs a command (an xffl-run launch), shows its output, and checks it line by line: the exit code and
# lines that must, or must not, appear. A regular expression (grep -E) in --each-rank holds {R}, which
# stands for every rank 0 .. N-1 in turn: each rank must have its own matching line. --line,
# --each-rank and --no-line look at stdout and stderr together; --stderr-each-rank at stderr alone.
#
# usage: expect_output.sh [--exit CODE] [--ranks N] [--line RE]... [--each-rank RE]...
#                         [--stderr-each-rank RE]... [--no-line RE]... -- COMMAND ARGS...
set -u

expected_exit=0
ranks=0
lines=()
each_rank=()
stderr_each_rank=()
absent=()
while [ $# -gt 0 ]; do
  case "$1" in
    --exit) expected_exit=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --line) lines+=("$2"); shift 2 ;;
    --each-rank) each_rank+=("$2"); shift 2 ;;
    --stderr-each-rank) stderr_each_rank+=("$2"); shift 2 ;;
    --no-line) absent+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "expect_output.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "expect_output.sh: no command after --" >&2; exit 2; }

output=$(mktemp)
errors=$(mktemp)
trap 'rm -f "$output" "$errors"' EXIT
# Both streams into one file in the order they come, stderr also into its own.
{ "$@" 2>&1 1>&3 3>&- | tee "$errors"; exit "${PIPESTATUS[0]}"; } 3>&1 | cat >"$output"
status=${PIPESTATUS[0]}
cat "$output"

failures=0
complain() { echo "expect_output.sh: FAIL: $*"; failures=$((failures + 1)); }

[ "$status" -eq "$expected_exit" ] || complain "exit code $status, expected $expected_exit"
for re in ${lines[@]+"${lines[@]}"}; do
  grep -Eq -- "$re" "$output" || complain "no line matches: $re"
done
for re in ${each_rank[@]+"${each_rank[@]}"}; do
  for ((r = 0; r < ranks; ++r)); do
    grep -Eq -- "${re//\{R\}/$r}" "$output" || complain "rank $r: no line matches: ${re//\{R\}/$r}"
  done
done
for re in ${stderr_each_rank[@]+"${stderr_each_rank[@]}"}; do
  for ((r = 0; r < ranks; ++r)); do
    grep -Eq -- "${re//\{R\}/$r}" "$errors" || complain "rank $r: no line on stderr matches: ${re//\{R\}/$r}"
  done
done
for re in ${absent[@]+"${absent[@]}"}; do
  if grep -Eq -- "$re" "$output"; then
    complain "a line matches what must not appear: $re"
    grep -E -- "$re" "$output" | head -5 | sed 's/^/    /'
  fi
done
[ "$failures" -eq 0 ] && echo "expect_output.sh: all checks held"
[ "$failures" -eq 0 ]

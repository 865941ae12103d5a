#!/usr/bin/env bash
# Runs one rank of an xffl-run job under valgrind (memcheck, full leak check) and the others as they
# are: valgrind's exit code 99 means it found an error or a definite leak on that rank.
#
# usage: valgrind_rank.sh RANK -- PROGRAM ARGS...
set -eu
target=$1
shift
[ "${1:-}" = "--" ] && shift
if [ "${RANK:-}" = "$target" ]; then
  exec valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
    --show-leak-kinds=definite --track-origins=no "$@"
fi
exec "$@"

#!/usr/bin/env bash
# Runs a facility program inside its facility's namespace, for run_netns_continue.sh: the driver links
# this script as FAC_WORKDIR/xffl-run and FAC_WORKDIR/xffl-federation and hands those to
# tests/facilities/run_continue.py's harness, which starts them as it starts the real ones on loopback.
#
#   xffl-run ... --facility F ...        exec $XFFL_NETNS_XFFL_RUN with the same arguments in facility
#                                        F's namespace (the job's own store stays on its loopback; its
#                                        crossing ranks reach the others through the facility's TUN);
#                                        XFFL_NETNS_MAX_TIME, when set, replaces its --max-time
#   xffl-federation --listen 127.0.0.1:P exec $XFFL_NETNS_FEDERATION in facility 0's namespace, listening
#                                        on facility 0's address instead (port P as asked)
# XFFL_NETNS_FACILITIES lists the namespaces, facility 0 first; XFFL_NETNS_SERVER_ADDR is facility 0's
# address. `exec`: the pid the harness holds (and signals) is the program's.
set -u
case "$(basename "$0")" in
  xffl-run)
    facility=""
    previous=""
    for argument in "$@"; do
      [ "$previous" = --facility ] && facility=$argument
      previous=$argument
    done
    read -r -a namespaces <<< "$XFFL_NETNS_FACILITIES"
    if [ -z "$facility" ] || [ -z "${namespaces[$facility]:-}" ]; then
      echo "in_facility.sh: xffl-run without a --facility of this federation ($*)" >&2
      exit 2
    fi
    if [ -n "${XFFL_NETNS_MAX_TIME:-}" ]; then  # a longer --max-time (the heal bench's large models)
      arguments=()
      previous=""
      for argument in "$@"; do
        [ "$previous" = --max-time ] && argument=$XFFL_NETNS_MAX_TIME
        arguments+=("$argument")
        previous=$argument
      done
      set -- "${arguments[@]}"
    fi
    exec ip netns exec "${namespaces[$facility]}" "$XFFL_NETNS_XFFL_RUN" "$@"
    ;;
  xffl-federation)
    read -r -a namespaces <<< "$XFFL_NETNS_FACILITIES"
    exec ip netns exec "${namespaces[0]}" "$XFFL_NETNS_FEDERATION" "${@//127.0.0.1/$XFFL_NETNS_SERVER_ADDR}"
    ;;
  *)
    echo "in_facility.sh: run me as xffl-run or xffl-federation (a link named so), not $0" >&2
    exit 2
    ;;
esac

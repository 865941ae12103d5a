#!/usr/bin/env bash
# Heal time of a restarted facility (issue 12's goal: within 1.5x of model bytes / link rate): three
# facilities of tests/netns (1 Gbit/s, 10 ms each way, the federation server in facility 0), facility
# 2's job killed and started again with XFFL_FACILITY_FAULTS=continue; the survivors' round that sends
# it the model against their plain rounds (tests/netns/netns_continue.py, scenario heal_time).
#
#   sudo bench/facilities/heal.sh [BUILD_DIR]     (default build/ci; targets netns_delay_relay xffl-run
#                                                  xffl-federation check_facility facilities-tcp-stream)
# Environment: HEAL_MODEL_MIB (256).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build/ci}" && pwd) || exit 2
export HEAL_TCP_STREAM=$build/bench/facilities/facilities-tcp-stream
export HEAL_MODEL_MIB=${HEAL_MODEL_MIB:-256}
export XFFL_NETNS_MAX_TIME=900  # rounds of a large model on a loaded machine: longer than the tests' 150 s
exec "$root/tests/netns/run_netns_continue.sh" "$build/tests/netns/netns_delay_relay" "$build/tools/xffl-run/xffl-run" \
  "$build/tools/xffl-federation/xffl-federation" "$build/tests/facilities/check_facility" heal_time

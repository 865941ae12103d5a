# Sourced by run.sh and wan_streams.sh (after tests/netns/facilities.sh and facilities_up): the rate of
# plain TCP through the facilities' path, the bound the averages are measured against.
#
# streams_rate STREAMS_PER_DIRECTION BYTES_PER_STREAM BOTH(0|1) STREAM_BINARY: STREAMS_PER_DIRECTION
# connections from facility 0 to facility 1 (and as many the other way at once with BOTH=1), each
# carrying BYTES_PER_STREAM through `facilities-tcp-stream`; prints each receiving facility's rate in
# bit/s, one line each (facility 1's last).
streams_rate() {
  local n=$1 bytes=$2 both=$3 stream=$4 f i receivers=(1) pids=()
  [ "$both" = 1 ] && receivers=(0 1)
  for f in "${receivers[@]}"; do
    rm -f "$FAC_WORKDIR/recv.$f"
    ip netns exec "${FAC_NS[$f]}" "$stream" recv "${FAC_ADDR[$f]}" 5001 "$n" > "$FAC_WORKDIR/recv.$f" &
    pids+=($!)
  done
  for f in "${receivers[@]}"; do facilities_wait_file "$FAC_WORKDIR/recv.$f" 5; done
  sleep 0.2
  for f in "${receivers[@]}"; do
    for i in $(seq 1 "$n"); do
      ip netns exec "${FAC_NS[$((1 - f))]}" "$stream" send "${FAC_ADDR[$f]}" 5001 "$bytes" &
      pids+=($!)
    done
  done
  wait "${pids[@]}"
  for f in "${receivers[@]}"; do sed -n 's/.*rate_bps=\([0-9]*\).*/\1/p' "$FAC_WORKDIR/recv.$f"; done
}

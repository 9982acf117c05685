#!/bin/bash
# Benchmark of the check_url chain: cellpath vs `curl -L --interface --resolve` (a fair peer) vs an
# SDK-style client (a new connection per hop, `Connection: close`). Prints medians and ratios.
#
# By default it builds its own namespaces with Tests/CellularHTTPTests/Fixtures/world.sh (no link
# delay there, so the numbers show overhead, not round trips). To use another world, e.g. the
# simulator with its default delays, set UE_NS, DNS, URL and RESOLVE (host:port:addr for curl) and,
# optionally, RTT_MS and ROUND_TRIPS to print the floor.
#   FETCH="cellpath fetch --interface wwan0 --dns 100.64.0.53" (default: the test probe)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-21}
HOPS=${HOPS:-5}
BIN=${BIN_DIR:-$(swift build --show-bin-path 2>/dev/null || /opt/swift/usr/bin/swift build --show-bin-path)}
own_world=0
if [ -z "${UE_NS:-}" ]; then
    own_world=1
    P=cpbench$$- W=/tmp/cpbench$$
    trap 'Tests/CellularHTTPTests/Fixtures/world.sh down "$P" "$W"; rm -rf "$W"' EXIT
    Tests/CellularHTTPTests/Fixtures/world.sh up "$P" "$W" >/dev/null
    UE_NS=${P}ue DNS=100.64.0.53 RESOLVE=mno.carrier.test:80:100.64.0.1
    URL="http://mno.carrier.test/chain?n=$HOPS&i=1"
fi
FETCH=${FETCH:-"$BIN/cellpath-fetch-probe --interface wwan0 --dns $DNS"}

# Median wall time (ms) of RUNS runs of the given command in the client namespace.
median_ms() {
    local times=()
    for _ in $(seq 1 "$RUNS"); do
        local t0 t1
        t0=$(date +%s%N)
        ip netns exec "$UE_NS" "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; return 1; }
        t1=$(date +%s%N)
        times+=($(( (t1 - t0) / 1000 )))
    done
    printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]/1000}'
}

# shellcheck disable=SC2086
cellpath_ms=$(median_ms $FETCH "$URL")
curl_ms=$(median_ms curl -sS -o /dev/null -L --max-redirs 20 --interface wwan0 --resolve "$RESOLVE" "$URL")
sdk_ms=$(median_ms curl -sS -o /dev/null -L --max-redirs 20 --interface wwan0 --resolve "$RESOLVE" -H 'Connection: close' "$URL")

printf '%-38s %10s %8s\n' "client ($HOPS-hop chain, median of $RUNS)" "ms" "ratio"
printf '%-38s %10s %8s\n' "cellpath" "$cellpath_ms" "1.00"
printf '%-38s %10s %8s\n' "curl -L --interface --resolve" "$curl_ms" "$(awk -v a="$curl_ms" -v b="$cellpath_ms" 'BEGIN{printf "%.2f", a/b}')"
printf '%-38s %10s %8s\n' "SDK-style (new connection per hop)" "$sdk_ms" "$(awk -v a="$sdk_ms" -v b="$cellpath_ms" 'BEGIN{printf "%.2f", a/b}')"
if [ -n "${RTT_MS:-}" ] && [ -n "${ROUND_TRIPS:-}" ]; then
    floor=$(awk -v r="$RTT_MS" -v n="$ROUND_TRIPS" 'BEGIN{printf "%.2f", r*n}')
    printf '%-38s %10s %8s\n' "floor ($ROUND_TRIPS round trips x $RTT_MS ms)" "$floor" \
        "$(awk -v a="$floor" -v b="$cellpath_ms" 'BEGIN{printf "%.2f", a/b}')"
fi
[ "$own_world" = 1 ] && echo "(own namespaces without link delay: times are per-process overhead, not round trips)"

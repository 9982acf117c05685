#!/usr/bin/env bash
# `make bench`, serve part (also runnable alone): requests/s and p50/p99 latency of creating a
# SubscriberCheck through `cellpath serve` (POST /subscriber-check) against calling the fake API
# directly (POST /subscriber_check/v0.1/checks with a token), with wrk at 1, 16 and 256
# connections, in the same run, in the simulated world with the API's rate limit off: once with
# the world's Wi-Fi delay (5 ms each way: a round trip to the API bounds what 16 connections can
# do) and once with none (the server's own cost). Prints a Markdown table with ratios and serve's
# CPU time per created check (from /proc: less sensitive than rates to other load on the machine).
# Method and results: docs/benchmarks.md. Needs root and wrk.
#
#   CELLPATH     the cellpath binary (default: cellpath on PATH)
#   DURATION     seconds per wrk run (default: 10)
#   PREFIX       simulator prefix of this benchmark's own world (default: cps-)
#   WIFI_DELAYS  one-way Wi-Fi delays in ms, one world each (default: "5 0")
set -euo pipefail

CELLPATH=$(command -v "${CELLPATH:-cellpath}") || { echo "bench-serve: cellpath not found (set CELLPATH)" >&2; exit 69; }
DURATION=${DURATION:-10} PREFIX=${PREFIX:-cps-} WIFI_DELAYS=${WIFI_DELAYS:-5 0}
[ "$(id -u)" = 0 ] || { echo "bench-serve: needs root (the simulator builds namespaces): sudo make bench" >&2; exit 77; }
for tool in wrk curl jq awk; do
    command -v "$tool" >/dev/null || { echo "bench-serve: $tool is missing (sudo make deps)" >&2; exit 69; }
done
if "$CELLPATH" sim status --prefix "$PREFIX" 2>/dev/null | grep -q '^state: *up'; then
    echo "bench-serve: a world with prefix $PREFIX is already up; \`cellpath sim down --prefix $PREFIX\` first" >&2
    exit 69
fi

work=$(mktemp -d /tmp/cellpath-bench-serve.XXXXXX)
serve_pid=
stop_world() {
    [ -z "$serve_pid" ] || { kill -TERM "$serve_pid" 2>/dev/null; wait "$serve_pid" 2>/dev/null || true; }
    serve_pid=
    "$CELLPATH" sim down --prefix "$PREFIX" >/dev/null 2>&1 || echo "bench-serve: sim down --prefix $PREFIX failed" >&2
}
cleanup() {
    stop_world
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

body='{"phone_number":"+447940448591"}'
cat > "$work/serve.lua" <<EOF
wrk.method = "POST"; wrk.body = '$body'; wrk.headers["Content-Type"] = "application/json"
EOF

# start_world DELAY: the world with that one-way Wi-Fi delay, serve in its device namespace, and
# wrk's script for the direct calls with a token.
start_world() {
    echo "bench-serve: building the simulated world ($PREFIX, Wi-Fi delay $1 ms)…" >&2
    echo "{\"api\": {\"rateLimitPerHour\": null}, \"wifiPath\": {\"delayMs\": $1}}" > "$work/scenario.json"
    "$CELLPATH" sim up --prefix "$PREFIX" --scenario "$work/scenario.json" >/dev/null
    eval "$("$CELLPATH" sim env --prefix "$PREFIX")"
    ns=$CELLPATH_SIM_NETNS
    ip netns exec "$ns" env CELLPATH_CLIENT_ID="$CELLPATH_CLIENT_ID" CELLPATH_CLIENT_SECRET="$CELLPATH_CLIENT_SECRET" \
        CELLPATH_CA_FILE="$CELLPATH_CA_FILE" "$CELLPATH" serve --api-base https://api.truid.test --listen 127.0.0.1:8080 \
        --rate-limit 0 --max-connections-per-address 512 2>"$work/serve.log" &
    serve_pid=$!
    for _ in $(seq 100); do grep -q '"event":"listening"' "$work/serve.log" && break; sleep 0.1; done
    grep -q '"event":"listening"' "$work/serve.log" || { echo "bench-serve: serve did not start: $(cat "$work/serve.log")" >&2; exit 70; }
    local token
    token=$(ip netns exec "$ns" curl -sS --cacert "$CELLPATH_CA_FILE" -u "$CELLPATH_CLIENT_ID:$CELLPATH_CLIENT_SECRET" \
        -d 'grant_type=client_credentials&scope=subscriber_check' https://api.truid.test/oauth2/v1/token | jq -r .access_token)
    cat > "$work/direct.lua" <<EOF
wrk.method = "POST"; wrk.body = '$body'; wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $token"; wrk.headers["Host"] = "api.truid.test"
EOF
}

# wrk's output → "requests/s p50_ms p99_ms errors requests"
summary() {
    awk '
        function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
        $1 == "50%" { p50 = ms($2) } $1 == "99%" { p99 = ms($2) } $1 == "Requests/sec:" { rps = $2 }
        $2 == "requests" && $3 == "in" { requests = $1 }
        /Non-2xx or 3xx responses:/ { errors += $NF }
        /Socket errors:/ { for (i = 3; i <= NF; i += 2) { v = $(i + 1); gsub(",", "", v); errors += v } }
        END { printf "%.0f %.2f %.2f %d %d\n", rps, p50, p99, errors + 0, requests + 0 }'
}

# serve's CPU time so far (user + system), in clock ticks
serve_ticks() { awk '{ print $14 + $15 }' "/proc/$serve_pid/stat"; }

run() { # target connections → summary, plus serve's CPU µs per request for serve
    local target=$1 connections=$2 threads=2 url=http://127.0.0.1:8080/subscriber-check before result
    [ "$connections" -gt 1 ] || threads=1
    [ "$target" = serve ] || url=https://203.0.113.10/subscriber_check/v0.1/checks
    before=$(serve_ticks)
    result=$(ip netns exec "$ns" wrk -t "$threads" -c "$connections" -d "${DURATION}s" --timeout 10s --latency \
        -s "$work/$target.lua" "$url" | summary)
    awk -v ticks=$(( $(serve_ticks) - before )) -v hz="$(getconf CLK_TCK)" \
        '{ printf "%s %.0f\n", $0, ($5 > 0 ? ticks / hz * 1e6 / $5 : 0) }' <<< "$result"
}

echo "bench-serve: wrk, ${DURATION} s per run…" >&2
echo
echo "| Wi-Fi delay | connections | direct req/s | serve req/s | serve/direct | direct p50 ms | serve p50 ms | direct p99 ms | serve p99 ms | serve p99 added | serve CPU µs/check | errors (direct/serve) |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
tokens=() loads=()
for delay in $WIFI_DELAYS; do
    loads+=("$(cut -d' ' -f1 /proc/loadavg)")
    start_world "$delay"
    for connections in 1 16 256; do
        read -r d_rps d_p50 d_p99 d_err _ _ < <(run direct "$connections")
        read -r s_rps s_p50 s_p99 s_err _ s_cpu < <(run serve "$connections")
        awk -v w="$delay" -v c="$connections" -v dr="$d_rps" -v sr="$s_rps" -v d50="$d_p50" -v s50="$s_p50" -v d99="$d_p99" \
            -v s99="$s_p99" -v de="$d_err" -v se="$s_err" -v cpu="$s_cpu" 'BEGIN {
            printf "| %d ms | %d | %d | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %+.0f %% | %d | %d/%d |\n",
                w, c, dr, sr, sr / dr, d50, s50, d99, s99, (s99 / d99 - 1) * 100, cpu, de, se }'
    done
    tokens+=("$(ip netns exec "$ns" curl -sS http://127.0.0.1:8080/metrics | awk '$1 == "cellpath_serve_token_requests_total" { print $2 }')")
    stop_world
done
echo
echo "serve's token requests in each world: ${tokens[*]} (one at start for the credentials check, one for subscriber_check)"
echo "load average (1 min) as each world started: ${loads[*]}; at the end: $(cut -d' ' -f1 /proc/loadavg) ($(nproc) cores)"

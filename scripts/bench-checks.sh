#!/usr/bin/env bash
# `make bench`, third part: `cellpath subscriber-check` (and `verify` with each other provider) end
# to end in the simulated world, next to
# its floor — the round trips the workflow needs × the RTT of the network each goes over (ping,
# same run): the backend's create over Wi-Fi on a new connection (TCP, TLS, request) and its
# completion (one request on a reused connection), and the check_url chain on the cellular path
# (every DNS lookup, TCP connect, TLS handshake and request of the run's own trace). With the
# bearer up; with the bearer down, where creating the check overlaps bringing the bearer up
# (the gain is shown against the same steps one after the other); and `--repeat`, whose later
# runs reuse the bearer (and what DNS answers it may cache).
# Method and results: docs/benchmarks.md. Needs root. Runs on its own as well as from `make bench`.
#
#   CELLPATH     the cellpath binary (default: cellpath on PATH)
#   ROUNDS       timed runs per case (default: 10)
#   MODEM_DELAY  the simulated modem's answer time in ms (default: 20)
#   PREFIX       simulator prefix of the benchmark's own world (default: cpbc-)
set -euo pipefail

CELLPATH=${CELLPATH:-cellpath}
ROUNDS=${ROUNDS:-10}
MODEM_DELAY=${MODEM_DELAY:-20}
PREFIX=${PREFIX:-cpbc-}
[ "$(id -u)" = 0 ] || { echo "bench-checks: needs root (the simulated world does)" >&2; exit 77; }
for tool in jq ping awk; do command -v "$tool" >/dev/null || { echo "bench-checks: $tool is missing (sudo make deps)" >&2; exit 69; }; done

work=$(mktemp -d /tmp/cellpath-bench-checks.XXXXXX)
cleanup() {
    "$CELLPATH" sim down --prefix "$PREFIX" >/dev/null 2>&1 || echo "bench-checks: sim down --prefix $PREFIX failed" >&2
    rm -rf "$work"
}
trap cleanup EXIT
echo "{\"modems\": [{\"protocol\": \"mbim\", \"faults\": {\"responseDelayMs\": $MODEM_DELAY}}], \"api\": {\"rateLimitPerHour\": null}}" \
    > "$work/scenario.json"
echo "bench-checks: building the simulated world ($PREFIX)…" >&2
"$CELLPATH" sim up --prefix "$PREFIX" --scenario "$work/scenario.json" >/dev/null
mkdir "$work/home"
# On the device, with the world's variables, and a home for the token cache (as a user has).
device() { HOME="$work/home" "$CELLPATH" sim exec --prefix "$PREFIX" -- "$CELLPATH" "$@"; }
check() { device subscriber-check +447940448591 -m 0 --direct --json "$@" 2>/dev/null || true; }

"$CELLPATH" sim exec --prefix "$PREFIX" -- "$CELLPATH" bearer up -m 0 -q >/dev/null 2>&1
check >/dev/null   # warms the token cache: a backend holds its token
rtt() { ip netns exec "${PREFIX}ue" ping -n -q -I "$1" -c 10 -i 0.2 "$2" | awk -F'[/ ]+' '/^rtt/ { print $7 }'; }
rtt_cell=$(rtt wwan0 203.0.113.10)
rtt_wifi=$(rtt wlan0 203.0.113.10)

# Round trips of a run's check_url chain, from its own trace.
chain_round_trips() {
    jq '[.check_url.hops[] | (if .timings.dns_ms > 0 then 1 else 0 end) + (if .connection_reused then 0 else 1 end)
         + (if (.connection_reused | not) and .tls_version != null then 1 else 0 end) + 1] | add'
}

: > "$work/up.tsv"
for _ in $(seq "$ROUNDS"); do
    check > "$work/run.json"
    jq -e '.outcome == "verified"' "$work/run.json" >/dev/null || { echo "bench-checks: a run failed: $(jq -c .error "$work/run.json")" >&2; exit 1; }
    printf '%s\t%s\t%s\t%s\n' "$(jq '.total_ms' "$work/run.json")" "$(chain_round_trips < "$work/run.json")" \
        "$(jq '.steps[] | select(.step == "path") | .duration_ms' "$work/run.json")" \
        "$(jq '.steps[] | select(.step == "create") | .duration_ms' "$work/run.json")" >> "$work/up.tsv"
done
"$CELLPATH" sim exec --prefix "$PREFIX" -- "$CELLPATH" bearer down -m 0 -q >/dev/null 2>&1

: > "$work/down.tsv"
for _ in $(seq "$ROUNDS"); do
    check > "$work/run.json"
    jq -e '.outcome == "verified"' "$work/run.json" >/dev/null || { echo "bench-checks: a run failed: $(jq -c .error "$work/run.json")" >&2; exit 1; }
    jq -r '[.total_ms, (.steps[] | select(.step == "path") | .duration_ms), (.steps[] | select(.step == "create") | .duration_ms),
            ([.steps[] | select(.step == "check_url" or .step == "complete") | .duration_ms] | add)] | @tsv' "$work/run.json" >> "$work/down.tsv"
done

device subscriber-check +447940448591 -m 0 --direct --json --repeat "$ROUNDS" 2>/dev/null | jq -c 'select(.run != null)' > "$work/repeat.jsonl" || true

# The other providers' verify, bearer up: each provider's backend calls over Wi-Fi (the first
# to a host on a new connection: TCP, TLS, request; the next ones on it: 1 each), the chain on
# the cellular path. twilio: create + VerificationCheck; vonage: create + the code's check;
# camara: discovery + the token + verify (one host); vonage-nv: the token + verify (its
# endpoints are known, no discovery).
backend_round_trips() { case $1 in twilio|vonage|vonage-nv) echo 4 ;; camara) echo 5 ;; esac; }
"$CELLPATH" sim exec --prefix "$PREFIX" -- "$CELLPATH" bearer up -m 0 -q >/dev/null 2>&1
for provider in twilio vonage camara vonage-nv; do
    : > "$work/$provider.tsv"
    device verify +447940448591 --provider "$provider" -m 0 --json >/dev/null 2>&1 || true   # warm-up
    for _ in $(seq "$ROUNDS"); do
        device verify +447940448591 --provider "$provider" -m 0 --json 2>/dev/null > "$work/run.json" || true
        jq -e '.outcome == "verified"' "$work/run.json" >/dev/null || { echo "bench-checks: a $provider run failed: $(jq -c .error "$work/run.json")" >&2; exit 1; }
        printf '%s\t%s\n' "$(jq '.total_ms' "$work/run.json")" "$(chain_round_trips < "$work/run.json")" >> "$work/$provider.tsv"
    done
done
"$CELLPATH" sim exec --prefix "$PREFIX" -- "$CELLPATH" bearer down -m 0 -q >/dev/null 2>&1

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
chain_rt=$(cut -f2 "$work/up.tsv" | median)
floor_up=$(awk -v c="$rtt_cell" -v w="$rtt_wifi" -v n="$chain_rt" 'BEGIN { printf "%.1f", 3 * w + n * c + w }')
up=$(cut -f1 "$work/up.tsv" | median)
down=$(cut -f1 "$work/down.tsv" | median)
sequential=$(awk -F'\t' '{ printf "%.1f\n", $2 + $3 + $4 }' "$work/down.tsv" | median)
path=$(cut -f2 "$work/down.tsv" | median)
later=$(jq 'select(.run > 1) | .total_ms' "$work/repeat.jsonl" | median)
later_chain_rt=$(jq 'select(.run > 1)' "$work/repeat.jsonl" | jq -s '.[0]' | chain_round_trips)
floor_later=$(awk -v c="$rtt_cell" -v w="$rtt_wifi" -v n="$later_chain_rt" 'BEGIN { printf "%.1f", 3 * w + n * c + w }')

echo
echo "## subscriber-check and verify's providers end to end ($ROUNDS runs per case, same run)"
echo
echo "RTT: cellular (ping -I wwan0) $rtt_cell ms, Wi-Fi (ping -I wlan0) $rtt_wifi ms; modem answers in $MODEM_DELAY ms."
echo "Floor = create (3 × Wi-Fi RTT: TCP, TLS, request) + the check_url chain's round trips × cellular RTT + completion (1 × Wi-Fi RTT);"
echo "a provider's: its backend round trips × Wi-Fi RTT + its chain's round trips × cellular RTT."
echo
echo "| case | median ms | floor ms | median / floor |"
echo "|---|---:|---:|---:|"
echo "| bearer up (reused), chain of $chain_rt round trips | $up | $floor_up | $(ratio "$up" "$floor_up") |"
echo "| bearer down: brought up while the check is created, taken down after | $down | – | – |"
echo "| bearer down, the same steps one after the other (path + create + check_url + completion) | $sequential | – | overlap saves $(awk -v s="$sequential" -v d="$down" 'BEGIN { printf "%.0f", s - d }') ms |"
echo "| \`--repeat $ROUNDS\`, runs 2…: bearer kept, chain of $later_chain_rt round trips | $later | $floor_later | $(ratio "$later" "$floor_later") |"
for provider in twilio vonage camara vonage-nv; do
    provider_rt=$(cut -f2 "$work/$provider.tsv" | median)
    backend_rt=$(backend_round_trips "$provider")
    provider_floor=$(awk -v c="$rtt_cell" -v w="$rtt_wifi" -v n="$provider_rt" -v b="$backend_rt" 'BEGIN { printf "%.1f", b * w + n * c }')
    provider_median=$(cut -f1 "$work/$provider.tsv" | median)
    echo "| \`verify --provider $provider\`, bearer up: $backend_rt backend round trips, chain of $provider_rt | $provider_median | $provider_floor | $(ratio "$provider_median" "$provider_floor") |"
done
echo
echo "With the bearer up, finding it (the path step: the bearer's record and the kernel's configuration; the modem is asked beside the chain) took $(cut -f3 "$work/up.tsv" | median) ms"
echo "and creating the check $(cut -f4 "$work/up.tsv" | median) ms, side by side (median). Bringing the bearer up took $path ms."
echo "Target: ≤ 1.1 × floor with the bearer up, for every provider."

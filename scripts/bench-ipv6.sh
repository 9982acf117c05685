#!/usr/bin/env bash
# `make bench`, fifth part: the check_url chain over IPv4-only, IPv6-only, dual-stack and NAT64
# bearers, each against its own floor — the round trips of the run's own trace (DNS lookups, TCP
# connects, TLS handshakes, requests) × the RTT of the bearer's family, measured with ping through
# the bearer in the same run — so that the IPv6 cases can be read as ratios next to IPv4's.
# Two worlds: one with an IPv4, an IPv6 and a dual-stack modem; one with an IPv4 and a NAT64
# (IPv6-only, DNS64) modem, since a NAT64 carrier serves every IPv6 modem of its world.
# Method and results: docs/benchmarks.md. Needs root. Runs on its own as well as from `make bench`.
#
#   CELLPATH   the cellpath binary (default: cellpath on PATH)
#   ROUNDS     timed runs per case (default: 10)
#   PREFIX     simulator prefix of the benchmark's worlds (default: cpb6-)
set -euo pipefail

CELLPATH=${CELLPATH:-cellpath}
ROUNDS=${ROUNDS:-10}
PREFIX=${PREFIX:-cpb6-}
[ "$(id -u)" = 0 ] || { echo "bench-ipv6: needs root (the simulated world does)" >&2; exit 77; }
for tool in jq ping curl awk; do command -v "$tool" >/dev/null || { echo "bench-ipv6: $tool is missing (sudo make deps)" >&2; exit 69; }; done

work=$(mktemp -d /tmp/cellpath-bench-ipv6.XXXXXX)
cleanup() {
    "$CELLPATH" sim down --prefix "$PREFIX" >/dev/null 2>&1 || echo "bench-ipv6: sim down --prefix $PREFIX failed" >&2
    rm -rf "$work"
}
trap cleanup EXIT

# On the device, with the world's variables (CA, credentials).
device() { "$CELLPATH" sim exec --prefix "$PREFIX" -- "$@"; }

# A new SubscriberCheck, created over Wi-Fi as a backend would (not timed): its check_url.
token=""
new_check_url() {
    device curl -sS --fail-with-body -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
        -d '{"phone_number":"+447940448591"}' https://api.truid.test/subscriber_check/v0.2/checks | jq -er ._links.check_url.href
}

# Round trips of a fetch's chain, from its own trace.
chain_round_trips() {
    jq '[.hops[] | (if .timings.dns_ms > 0 then 1 else 0 end) + (if .connection_reused then 0 else 1 end)
         + (if (.connection_reused | not) and .tls_version != null then 1 else 0 end) + 1] | add'
}
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# One case: modem `index` brought up with `ip_type`, ROUNDS fetches of a new check_url each.
# Appends a table row to rows.md.
measure() { # label, modem index, ip type
    local label=$1 index=$2 ip_type=$3 interface=wwan$2
    device "$CELLPATH" bearer up -m "$index" --ip-type "$ip_type" -q >/dev/null
    : > "$work/case.tsv"
    for round in $(seq "$ROUNDS"); do
        url=$(new_check_url)
        device "$CELLPATH" fetch -m "$index" --json "$url" > "$work/run.json" 2> "$work/err" \
            || { echo "bench-ipv6: $label: fetch failed in round $round:" >&2; cat "$work/err" >&2; exit 1; }
        jq -e '.result.callback.code | length > 0' "$work/run.json" >/dev/null \
            || { echo "bench-ipv6: $label: the chain did not end with a code" >&2; exit 1; }
        printf '%s\t%s\t%s\n' "$(jq .total_ms "$work/run.json")" "$(chain_round_trips < "$work/run.json")" \
            "$(jq -r '[.hops[].family] | unique | join("+")' "$work/run.json")" >> "$work/case.tsv"
    done
    # The RTT to the API's address as the chain reached it (the synthesised one under NAT64).
    local api family flag
    api=$(jq -r '.hops[0].remote_address' "$work/run.json")
    family=$(jq -r '.hops[0].family' "$work/run.json")
    flag=$([ "$family" = ipv6 ] && echo -6 || echo -4)
    rtt=$(ip netns exec "${PREFIX}ue" ping "$flag" -n -q -I "$interface" -c 10 -i 0.2 "$api" | awk -F'[/ ]+' '/^rtt/ { print $7 }')
    [ -n "$rtt" ] || { echo "bench-ipv6: $label: ping $flag -I $interface $api failed" >&2; exit 1; }
    device "$CELLPATH" bearer down -m "$index" -q >/dev/null
    local total trips families floor
    total=$(cut -f1 "$work/case.tsv" | median)
    trips=$(cut -f2 "$work/case.tsv" | median)
    families=$(cut -f3 "$work/case.tsv" | sort -u | paste -sd, -)
    floor=$(awk -v n="$trips" -v r="$rtt" 'BEGIN { printf "%.1f", n * r }')
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$families" "$rtt" "$trips" "$total" "$floor" \
        "$(awk -v a="$total" -v b="$floor" 'BEGIN { printf "%.2f", a / b }')" >> "$work/rows.md"
}

# Brings up a world from `scenario` (JSON) and fetches the API token for it.
world() {
    "$CELLPATH" sim down --prefix "$PREFIX" >/dev/null 2>&1 || true
    printf '%s\n' "$1" > "$work/scenario.json"
    echo "bench-ipv6: building the simulated world ($PREFIX)…" >&2
    "$CELLPATH" sim up --prefix "$PREFIX" --scenario "$work/scenario.json" >/dev/null
    token=$(device sh -c 'curl -sS --fail-with-body -u "$CELLPATH_CLIENT_ID:$CELLPATH_CLIENT_SECRET" \
        -d "grant_type=client_credentials&scope=subscriber_check" https://api.truid.test/oauth2/v1/token' | jq -er .access_token)
}

: > "$work/rows.md"
world '{"modems": [{"protocol": "mbim", "ipType": "ipv4"}, {"protocol": "mbim", "ipType": "ipv6"},
        {"protocol": "mbim", "ipType": "ipv4v6"}], "api": {"rateLimitPerHour": null}}'
measure "IPv4-only bearer" 0 ipv4
measure "IPv6-only bearer" 1 ipv6
measure "dual-stack bearer" 2 ipv4v6
world '{"modems": [{"protocol": "mbim", "ipType": "ipv4"}, {"protocol": "mbim", "ipType": "ipv6", "nat64": true}],
        "api": {"rateLimitPerHour": null}}'
measure "IPv4-only bearer (NAT64 world)" 0 ipv4
measure "IPv6-only bearer, NAT64/DNS64" 1 ipv6

echo
echo "## check_url chain by address family ($ROUNDS runs per case, same run)"
echo
echo "Each run: a new SubscriberCheck created over Wi-Fi, then \`cellpath fetch -m N --json\` on its check_url"
echo "with the bearer up; total_ms inside the process. Floor = the trace's round trips × the RTT to the API's"
echo "address through the bearer (ping -4/-6 -I wwanN), same run."
echo
echo "| bearer | hop families | RTT ms | round trips | median ms | floor ms | median / floor |"
echo "|---|---|---:|---:|---:|---:|---:|"
cat "$work/rows.md"

#!/usr/bin/env bash
# `make bench`: the tru.ID check_url chain in the simulated world (default scenario: 40 ms one-way
# on the cellular path), timed for cellpath, curl and SDK-style clients in the same run, against
# the floor (round trips the chain needs × RTT measured with ping); then cellpath's start-up and
# memory against curl's, with the targets of issue 8. Prints Markdown tables.
# Method and results: docs/benchmarks.md. Needs root (the simulator does).
#
#   CELLPATH   the cellpath binary (default: cellpath on PATH)
#   ROUNDS     rounds; each round runs every client once, in a rotating order (default: 10)
#   STARTUPS   alternating runs of `cellpath --version` and `curl --version` (default: 51)
#   PREFIX     simulator prefix of the benchmark's own world (default: cpb-)
#   SCENARIO   scenario file for `sim up` (default: the built-in scenario)
#   KEEP_DIR   directory to keep the raw samples in (default: a temporary one, removed)
set -euo pipefail

# The SDK-style client: what the tru.ID SDKs do on a phone. A new connection per hop with
# `Connection: close`, every socket bound to the interface (SO_BINDTODEVICE); names either resolved
# with one A query to the bearer's DNS through the interface (cached per host, like an OS cache) or
# pinned like curl's --resolve; TCP_NODELAY like curl and cellpath. Prints the last response's body; exit 1 on a non-2xx end.
SDK_CLIENT='
import socket, ssl, struct, sys, os
from urllib.parse import urlsplit, urljoin
args = sys.argv[1:]
iface, ca, dns, pins = None, None, None, {}
while len(args) > 1:
    opt, val = args[0], args[1]; args = args[2:]
    if opt == "--interface": iface = val.encode()
    elif opt == "--cacert": ca = val
    elif opt == "--dns": dns = val
    elif opt == "--resolve": h, p, a = val.rsplit(":", 2); pins[(h, int(p))] = a
url = args[0]
cache = {}
def bound(kind):
    s = socket.socket(socket.AF_INET, kind)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, iface)
    if kind == socket.SOCK_STREAM: s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.settimeout(5)
    return s
def skip_name(r, i):
    while r[i] and r[i] & 0xC0 != 0xC0: i += r[i] + 1
    return i + (2 if r[i] else 1)
def lookup(host, port):
    if (host, port) in pins: return pins[(host, port)]
    if host in cache: return cache[host]
    qid = int.from_bytes(os.urandom(2), "big")
    query = struct.pack("!6H", qid, 0x0100, 1, 0, 0, 0)
    query += b"".join(bytes([len(l)]) + l.encode() for l in host.split(".")) + b"\0" + struct.pack("!2H", 1, 1)
    s = bound(socket.SOCK_DGRAM); s.sendto(query, (dns, 53)); r = s.recv(1500); s.close()
    if struct.unpack("!H", r[:2])[0] != qid or r[3] & 0x0F: sys.exit("dns: no answer for " + host)
    i = skip_name(r, 12) + 4
    for _ in range(struct.unpack("!H", r[6:8])[0]):
        i = skip_name(r, i)
        rtype, _, _, n = struct.unpack("!HHIH", r[i:i + 10]); i += 10
        if rtype == 1 and n == 4:
            cache[host] = socket.inet_ntoa(r[i:i + 4]); return cache[host]
        i += n
    sys.exit("dns: no A record for " + host)
tls = ssl.create_default_context(cafile=ca)
for hop in range(10):
    u = urlsplit(url)
    port = u.port or (443 if u.scheme == "https" else 80)
    s = bound(socket.SOCK_STREAM)
    s.connect((lookup(u.hostname, port), port))
    if u.scheme == "https": s = tls.wrap_socket(s, server_hostname=u.hostname)
    target = (u.path or "/") + ("?" + u.query if u.query else "")
    s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: sdk-style\r\nAccept: */*\r\nConnection: close\r\n\r\n" % (target, u.netloc)).encode())
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk: break
        data += chunk
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    location = next((l.split(":", 1)[1].strip() for l in lines[1:] if l.lower().startswith("location:")), None)
    if status in (301, 302, 303, 307, 308) and location:
        url = urljoin(url, location); continue
    sys.stdout.write(body.decode()); sys.exit(0 if 200 <= status < 300 else 1)
sys.exit("too many hops")
'

API_ADDR=203.0.113.10 CARRIER_ADDR=100.64.0.1 CARRIER_DNS=100.64.0.53

# ---------------------------------------------------------------------------------------------
# Inside the device namespace (`ip netns exec <prefix>ue "$0" --inside`): the measurements.
if [ "${1:-}" = "--inside" ]; then
    work=$BENCH_WORK
    printf '%s' "$SDK_CLIENT" > "$work/sdk_client.py"
    PY=/usr/bin/python3
    CA=$CELLPATH_CA_FILE
    pin=(--resolve "api.truid.test:443:$API_ADDR" --resolve "mno.carrier.test:80:$CARRIER_ADDR")

    client_cmd() { # client name → cmd (the command line, without the URL)
        case $1 in
            cellpath) cmd=("$CELLPATH" fetch --interface wwan0 --dns "$CARRIER_DNS" --json) ;;
            curl) cmd=(curl -sS -L --interface wwan0 "${pin[@]}" --cacert "$CA") ;;
            curl-dns) cmd=(curl -sS -L --interface wwan0 --cacert "$CA") ;;
            sdk-dns) cmd=("$PY" "$work/sdk_client.py" --interface wwan0 --cacert "$CA" --dns "$CARRIER_DNS") ;;
            sdk-pinned) cmd=("$PY" "$work/sdk_client.py" --interface wwan0 --cacert "$CA" "${pin[@]}") ;;
        esac
    }
    clients=(cellpath curl curl-dns sdk-dns sdk-pinned)
    # curl-dns resolves with the system resolver: point it at the bearer's DNS (in this mount
    # namespace only; the outer part routed that address through wwan0).
    mount --bind "$work/resolv.conf" /etc/resolv.conf

    # Backend leg over Wi-Fi (not timed), as in docs/simulator-api.md.
    backend=(--cacert "$CA" --resolve "api.truid.test:443:$API_ADDR")
    token=$(curl -sS --fail-with-body "${backend[@]}" -u "$CELLPATH_CLIENT_ID:$CELLPATH_CLIENT_SECRET" \
        -d 'grant_type=client_credentials&scope=subscriber_check' https://api.truid.test/oauth2/v1/token \
        | jq -er .access_token)
    new_check() {
        curl -sS --fail-with-body "${backend[@]}" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
            -d '{"phone_number":"+447940448591"}' https://api.truid.test/subscriber_check/v0.2/checks
    }

    # RTT of the cellular path, same run: to the API and to the carrier DNS, through wwan0.
    : > "$work/ping.txt"
    for target in "$API_ADDR" "$CARRIER_DNS"; do
        ping -n -q -I wwan0 -c 10 -i 0.2 "$target" | awk -F'[/ ]+' '/^rtt/ { print $7 }' >> "$work/ping.txt"
    done
    [ "$(wc -l < "$work/ping.txt")" = 2 ] || { echo "bench: ping -I wwan0 failed" >&2; exit 1; }

    # The chain's structure, from one traced cellpath run (not timed): hop URLs and connection reuse.
    check=$(new_check)
    $CELLPATH fetch --interface wwan0 --dns $CARRIER_DNS --json "$(jq -er ._links.check_url.href <<<"$check")" \
        > "$work/trace.json"
    jq -e '.result.final_status == 200 and (.result.callback.code | length > 0)' "$work/trace.json" >/dev/null \
        || { echo "bench: the traced cellpath run did not complete the chain" >&2; exit 1; }

    # The run counts only if the chain completed: the API's final answer names this check and carries a code.
    completed() { # client name, check id, its output file
        local body
        if [ "$1" = cellpath ]; then body=$(jq -c .result.json "$3"); else body=$(cat "$3"); fi
        jq -e --arg id "$2" '.check_id == $id and (.code | length > 0) and (has("error") | not)' <<<"$body" >/dev/null \
            || { echo "bench: $1 did not complete the chain: $body" >&2; return 1; }
    }

    # Timed runs: a fresh check per run, then the client opens check_url through wwan0.
    : > "$work/samples.tsv"
    for round in $(seq 1 "$ROUNDS"); do
        for k in "${!clients[@]}"; do
            name=${clients[$(( (round + k) % ${#clients[@]} ))]}
            check=$(new_check)
            id=$(jq -er .check_id <<<"$check")
            url=$(jq -er ._links.check_url.href <<<"$check")
            client_cmd "$name"
            t0=$EPOCHREALTIME
            if ! "${cmd[@]}" "$url" > "$work/out" 2> "$work/err"; then
                echo "bench: $name failed in round $round:" >&2; cat "$work/err" >&2; exit 1
            fi
            t1=$EPOCHREALTIME
            completed "$name" "$id" "$work/out" || exit 1
            [ "$name" != cellpath ] || printf 'cellpath-chain\t%s\t%s\n' "$round" "$(jq .total_ms "$work/out")" >> "$work/samples.tsv"
            printf '%s\t%s\t%s\n' "$name" "$round" "$(awk -v a="${t0/./}" -v b="${t1/./}" 'BEGIN { printf "%.1f", (b - a) / 1000 }')" \
                >> "$work/samples.tsv"
        done
    done

    # Per-process start-up cost (median of 11): no network, and one round trip (a refused connection).
    : > "$work/startup.tsv"
    startup() {
        local label=$1; shift
        for _ in $(seq 1 11); do
            t0=$EPOCHREALTIME; "$@" >/dev/null 2>&1 || true; t1=$EPOCHREALTIME
            printf '%s\t%s\n' "$label" "$(awk -v a="${t0/./}" -v b="${t1/./}" 'BEGIN { printf "%.1f", (b - a) / 1000 }')"
        done >> "$work/startup.tsv"
    }
    startup 'cellpath --version' "$CELLPATH" --version
    startup 'cellpath number +447940448591' "$CELLPATH" number +447940448591
    startup 'curl --version' curl --version
    startup "cellpath fetch … http://$CARRIER_ADDR:9/ (refused after 1 RTT)" "$CELLPATH" fetch --interface wwan0 --dns "$CARRIER_DNS" "http://$CARRIER_ADDR:9/"
    startup "curl --interface wwan0 http://$CARRIER_ADDR:9/ (refused after 1 RTT)" curl -s --interface wwan0 "http://$CARRIER_ADDR:9/"
    startup 'python3 (SDK-style client imports)' "$PY" -c 'import socket, ssl, struct; from urllib.parse import urljoin; ssl.create_default_context()'

    # Start-up and memory against curl (issue 8): `--version` of both, alternating so that both see
    # the same load; the peak RSS (GNU time's %M, KiB) of whole check_url fetches, 5 each.
    : > "$work/footprint.tsv"
    for _ in $(seq 1 "$STARTUPS"); do
        for name in cellpath curl; do
            command=$([ "$name" = cellpath ] && echo "$CELLPATH" || echo curl)
            t0=$EPOCHREALTIME; "$command" --version >/dev/null; t1=$EPOCHREALTIME
            printf 'startup-%s\t%s\n' "$name" "$(awk -v a="${t0/./}" -v b="${t1/./}" 'BEGIN { printf "%.2f", (b - a) / 1000 }')"
        done
    done >> "$work/footprint.tsv"
    for _ in 1 2 3 4 5; do
        for name in cellpath curl; do
            check=$(new_check)
            client_cmd "$name"
            /usr/bin/time -f %M -o "$work/rss" "${cmd[@]}" "$(jq -er ._links.check_url.href <<<"$check")" > "$work/out" \
                || { echo "bench: $name failed while measuring its memory" >&2; exit 1; }
            completed "$name" "$(jq -er .check_id <<<"$check")" "$work/out" || exit 1
            printf 'rss-%s\t%s\n' "$name" "$(cat "$work/rss")" >> "$work/footprint.tsv"
        done
    done
    exit 0
fi

# ---------------------------------------------------------------------------------------------
# Outside: the world's lifecycle, then the tables.
CELLPATH=$(command -v "${CELLPATH:-cellpath}") || { echo "bench: cellpath not found (set CELLPATH)" >&2; exit 69; }
ROUNDS=${ROUNDS:-10} STARTUPS=${STARTUPS:-51} PREFIX=${PREFIX:-cpb-}
[ "$(id -u)" = 0 ] || { echo "bench: needs root (the simulator builds namespaces): sudo make bench" >&2; exit 77; }
for tool in curl jq ping /usr/bin/python3 /usr/bin/time awk; do
    command -v "$tool" >/dev/null || { echo "bench: $tool is missing (sudo make deps)" >&2; exit 69; }
done
if "$CELLPATH" sim status --prefix "$PREFIX" 2>/dev/null | grep -q '^state: *up'; then
    echo "bench: a world with prefix $PREFIX is already up (another benchmark?); \`cellpath sim down --prefix $PREFIX\` first" >&2
    exit 69
fi

work=${KEEP_DIR:-$(mktemp -d /tmp/cellpath-bench.XXXXXX)}
mkdir -p "$work"
cleanup() {
    "$CELLPATH" sim down --prefix "$PREFIX" >/dev/null 2>&1 || echo "bench: sim down --prefix $PREFIX failed" >&2
    [ -n "${KEEP_DIR:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

echo "bench: building the simulated world ($PREFIX)…" >&2
"$CELLPATH" sim up --prefix "$PREFIX" ${SCENARIO:+--scenario "$SCENARIO"} >/dev/null
"$CELLPATH" sim bearer connect --prefix "$PREFIX" >/dev/null
eval "$("$CELLPATH" sim env --prefix "$PREFIX")"
export CELLPATH ROUNDS STARTUPS BENCH_WORK=$work CELLPATH_CA_FILE CELLPATH_CLIENT_ID CELLPATH_CLIENT_SECRET
delay=$(jq -r '.cellularPath.delayMs' "$CELLPATH_SIM_RUN_DIR/scenario.json")
# For curl without --resolve: the bearer's DNS server reachable by unbound sockets (through wwan0,
# as on a phone whose only network is cellular); the inner part points its resolv.conf at it.
ip -n "$CELLPATH_SIM_NETNS" route add "$CARRIER_DNS/32" dev wwan0
printf 'nameserver %s\n' "$CARRIER_DNS" > "$work/resolv.conf"
echo "bench: $ROUNDS rounds of 5 clients…" >&2
ip netns exec "$CELLPATH_SIM_NETNS" unshare --mount --propagation private "$0" --inside

# Round trips from the chain's structure (the traced run): a client that resolves through the bearer
# needs one DNS query per new host; each new connection needs TCP (1) and for https TLS 1.3 (1); each
# request needs 1. Keep-alive: one connection per origin. New connection per hop: one per request.
read -r hops hosts origins tls_origins https_hops < <(jq -r '
    [.hops[].url | capture("^(?<scheme>[a-z]+)://(?<host>[^/:?#]+)(:(?<port>[0-9]+))?")] as $u
    | [($u | length), ($u | map(.host) | unique | length), ($u | map("\(.scheme)://\(.host):\(.port)") | unique | length),
       ($u | map(select(.scheme == "https")) | map("\(.host):\(.port)") | unique | length),
       ($u | map(select(.scheme == "https")) | length)] | @tsv' "$work/trace.json")
rt_cellpath=$(( hosts + origins + tls_origins + hops ))
rt_curl=$(( origins + tls_origins + hops ))
rt_curl_dns=$(( hosts + origins + tls_origins + hops ))
rt_sdk_dns=$(( hosts + hops + https_hops + hops ))
rt_sdk_pinned=$(( hops + https_hops + hops ))
rtt=$(awk '{ s += $1 } END { printf "%.2f", s / NR }' "$work/ping.txt")
floor=$(awk -v r="$rtt" -v n="$rt_cellpath" 'BEGIN { printf "%.1f", r * n }')

stat() { # client, which (median|p90) → ms
    awk -F'\t' -v c="$1" '$1 == c { print $3 }' "$work/samples.tsv" | sort -n | awk -v w="$2" '
        { a[NR] = $1 } END {
            if (w == "median") printf "%.1f", (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)
            else { i = int(NR * 0.9 + 0.999999); printf "%.1f", a[i] } }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

reused=$(jq -r '[.hops[] | select(.connection_reused)] | length' "$work/trace.json")
echo
echo "### check_url chain, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $ROUNDS rounds"
echo
echo "Chain: $hops requests to $hosts hosts ($tls_origins over TLS); cellular delay ${delay} ms one-way," \
     "RTT (ping -I wwan0) $rtt ms; floor = $rt_cellpath round trips × RTT = $floor ms" \
     "(cellpath's traced run reused $reused connection(s))."
echo
echo "| client | round trips it needs | median ms | p90 ms | median / floor | cellpath / client |"
echo "|---|---:|---:|---:|---:|---:|"
c_med=$(stat cellpath median)
row() { # client, label, round trips
    local med p90
    med=$(stat "$1" median) p90=$(stat "$1" p90)
    echo "| $2 | $3 | $med | $p90 | $(ratio "$med" "$floor") | $(ratio "$c_med" "$med") |"
}
row cellpath '`cellpath fetch --interface wwan0 --dns 100.64.0.53`' "$rt_cellpath"
row curl '`curl -L --interface wwan0 --resolve … --cacert CA` (names pinned: no DNS)' "$rt_curl"
row curl-dns '`curl -L --interface wwan0 --cacert CA`, names by the system resolver via the bearer DNS' "$rt_curl_dns"
row sdk-dns 'SDK-style: new connection per hop, `Connection: close`, DNS via the bearer' "$rt_sdk_dns"
row sdk-pinned 'SDK-style, names pinned like curl' "$rt_sdk_pinned"
echo
echo "Target: cellpath ≤ 1.1 × floor, ≤ curl, < SDK-style."
c_floor=$(ratio "$c_med" "$floor")
verdict() { if awk "BEGIN { exit !($1) }"; then echo met; else echo "NOT met"; fi; }
chain_med=$(stat cellpath-chain median)
echo "- cellpath / floor = $c_floor: $(verdict "$c_floor <= 1.1")" \
     "(the chain inside the process, its trace's total_ms: median $chain_med ms = $(ratio "$chain_med" "$floor") × floor)"
cd_med=$(stat curl-dns median) cp_med=$(stat curl median)
echo "- cellpath / curl with the same DNS work = $(ratio "$c_med" "$cd_med"): $(verdict "$c_med <= $cd_med")"
echo "- cellpath / curl with pinned names = $(ratio "$c_med" "$cp_med"): $(verdict "$c_med <= $cp_med")" \
     "(curl skips the $hosts DNS round trips; per own round trips: cellpath $(ratio "$c_med" "$(awk -v r="$rtt" -v n="$rt_cellpath" 'BEGIN { print r * n }')")," \
     "curl $(ratio "$cp_med" "$(awk -v r="$rtt" -v n="$rt_curl" 'BEGIN { print r * n }')") × RTT)"
echo "- cellpath / SDK-style (DNS via the bearer) = $(ratio "$c_med" "$(stat sdk-dns median)"): $(verdict "$c_med < $(stat sdk-dns median)")"
echo "- cellpath / SDK-style (pinned) = $(ratio "$c_med" "$(stat sdk-pinned median)"): $(verdict "$c_med < $(stat sdk-pinned median)")"
echo
echo "### Per-process fixed cost (median of 11; the \"refused after 1 RTT\" rows include one RTT of $rtt ms)"
echo
echo "| command | median ms |"
echo "|---|---:|"
cut -f1 "$work/startup.tsv" | uniq | while IFS= read -r label; do
    med=$(awk -F'\t' -v l="$label" '$1 == l { print $2 }' "$work/startup.tsv" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    echo "| \`$label\` | $med |"
done
echo
median() { # footprint.tsv key → its median
    awk -F'\t' -v k="$1" '$1 == k { print $2 }' "$work/footprint.tsv" | sort -n \
        | awk '{ a[NR] = $1 } END { printf "%.2f", (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'
}
s_cellpath=$(median startup-cellpath) s_curl=$(median startup-curl)
m_cellpath=$(awk -v k="$(median rss-cellpath)" 'BEGIN { printf "%.1f", k / 1000 }')
m_curl=$(awk -v k="$(median rss-curl)" 'BEGIN { printf "%.1f", k / 1000 }')
s_ratio=$(ratio "$s_cellpath" "$s_curl")
echo "### Start-up and memory against curl (issue 8)"
echo
echo "| measure | cellpath | curl | cellpath / curl | target | met? |"
echo "|---|---:|---:|---:|---|---|"
echo "| start-up: \`--version\`, median of $STARTUPS alternating runs (ms) | $s_cellpath | $s_curl | $s_ratio | ≤ 1.2 × curl | $(verdict "$s_ratio <= 1.2") |"
echo "| peak RSS of a check_url fetch (\`cellpath fetch\`, \`curl -L --resolve …\`), median of 5 (MB) | $m_cellpath | $m_curl | $(ratio "$m_cellpath" "$m_curl") | ≤ 20 MB | $(verdict "$m_cellpath <= 20") |"
echo
echo "Hop timings of the traced cellpath run (ms):"
echo
echo "| hop | status | reused | dns | connect | tls | first byte | total |"
echo "|---|---:|---|---:|---:|---:|---:|---:|"
jq -r '.hops[] | "| \(.url | sub("\\?.*"; "") | sub("/[0-9a-f-]{36}"; "/{id}")) | \(.status) | \(.connection_reused) | \(.timings.dns_ms // 0 | floor) | \(.timings.connect_ms // "–" | if type == "number" then floor else . end) | \(.timings.tls_ms // "–" | if type == "number" then floor else . end) | \(.timings.first_byte_ms | floor) | \(.timings.total_ms | floor) |"' "$work/trace.json"

#!/usr/bin/env bash
# `make bench`, second part: `cellpath bearer up` + `cellpath bearer down` against libmbim's
# `mbim-network` and libqmi's `qmi-network` (Debian's libmbim-utils, libqmi-utils) on the same
# simulated modems (one MBIM, one QMI), as ratios from the same run. Both sides go through
# mbim-proxy / qmi-proxy; the scripts spawn mbimcli/qmicli for each step, cellpath keeps one
# session (and also configures the interface, which the scripts leave to the caller).
# Then the same `bearer up` + `bearer down` through the real ModemManager (`--backend
# modemmanager`, in a second world with `modemManager: true`) against the direct backend's
# medians above, as a ratio.
# Then `bearer up` alone on each modem of the device zoo (scripts/zoo-scenario.json, same answer
# time) that can bring up a bearer, against its own floor: its round trips to the modem, counted
# in its `-v` trace, × MODEM_DELAY, plus NETLINK_MS for configuring the interface.
# Then `cellpath fetch -m N check_url` with the bearer down: the time from its start to the first
# byte of check_url (the start taken inside the namespace), against two floors: the first hop's
# round trips on the cellular path after the modem's connect and IP configuration answers, or
# after every round trip of the bring-up counted in a `-v` trace of a warm-up run.
# Method and results: docs/benchmarks.md. Needs root (the simulator does). Runs on its own
# (`sudo CELLPATH=… scripts/bench-bearer.sh`) as well as from `make bench`.
#
#   CELLPATH      the cellpath binary (default: cellpath on PATH)
#   ROUNDS        rounds; each runs every client once per modem, in a rotating order (default: 10)
#   FETCH_ROUNDS  timed `fetch -m N` runs per modem, bearer down at each start (default: 5; 0: none)
#   MODEM_DELAY   the simulated modems' answer time in ms (default: 20; real modems answer in a few to tens of ms)
#   PREFIX        simulator prefix of the benchmark's own world (default: cpbb-)
#   MM_PREFIX     prefix of its world with ModemManager (default: cpbbm-; MM_ROUNDS=0 skips that part)
#   MM_ROUNDS     rounds through ModemManager (default: ROUNDS)
#   ZOO_PREFIX    prefix of the device zoo's world (default: cpbz-; ZOO_ROUNDS=0 skips that part)
#   ZOO_ROUNDS    timed `bearer up` runs per zoo modem (default: ROUNDS; skipped at MODEM_DELAY=0, where it has no floor)
#   NETLINK_MS    the floor's allowance for configuring the interface over netlink (default: 1)
set -euo pipefail

CELLPATH=${CELLPATH:-cellpath}
ROUNDS=${ROUNDS:-10}
FETCH_ROUNDS=${FETCH_ROUNDS:-5}
MODEM_DELAY=${MODEM_DELAY:-20}
PREFIX=${PREFIX:-cpbb-}
MM_PREFIX=${MM_PREFIX:-cpbbm-}
MM_ROUNDS=${MM_ROUNDS:-$ROUNDS}
ZOO_PREFIX=${ZOO_PREFIX:-cpbz-}
ZOO_ROUNDS=${ZOO_ROUNDS:-$ROUNDS}
NETLINK_MS=${NETLINK_MS:-1}
UE=${PREFIX}ue
[ "$(id -u)" = 0 ] || { echo "bench-bearer: needs root (the simulated world does)" >&2; exit 77; }
for tool in mbim-network qmi-network; do
    command -v "$tool" >/dev/null || { echo "bench-bearer: $tool is missing (sudo make deps)" >&2; exit 69; }
done

work=$(mktemp -d /tmp/cellpath-bench-bearer.XXXXXX)
cleanup() {
    "$CELLPATH" sim down --prefix "$PREFIX" >/dev/null 2>&1 || echo "bench-bearer: sim down --prefix $PREFIX failed" >&2
    if [ -n "${mm_up:-}" ]; then
        "$CELLPATH" sim down --prefix "$MM_PREFIX" >/dev/null 2>&1 || echo "bench-bearer: sim down --prefix $MM_PREFIX failed" >&2
    fi
    if [ -n "${zoo_up:-}" ]; then
        "$CELLPATH" sim down --prefix "$ZOO_PREFIX" >/dev/null 2>&1 || echo "bench-bearer: sim down --prefix $ZOO_PREFIX failed" >&2
    fi
    rm -rf "$work"
}
trap cleanup EXIT

cat > "$work/scenario.json" <<EOF
{"modems": [{"protocol": "mbim", "faults": {"responseDelayMs": $MODEM_DELAY}},
            {"protocol": "qmi", "faults": {"responseDelayMs": $MODEM_DELAY}}]}
EOF
printf 'APN=internet\nPROXY=yes\n' > "$work/network.conf"
# The simulated QMI port is a pty: libqmi cannot detect its mode, which qmi-network leaves to
# qmicli. On hardware the qmi_wwan driver tells it; here qmicli is told (QMI mode).
mkdir "$work/bin"
printf '#!/bin/sh\nexec /usr/bin/qmicli --device-open-qmi "$@"\n' > "$work/bin/qmicli"
chmod +x "$work/bin/qmicli"

echo "bench-bearer: building the simulated world ($PREFIX, modems answering in $MODEM_DELAY ms)…" >&2
"$CELLPATH" sim up --prefix "$PREFIX" --scenario "$work/scenario.json" >/dev/null
eval "$("$CELLPATH" sim env --prefix "$PREFIX")"
dev=$CELLPATH_DEV_ROOT

inside() { ip netns exec "$UE" env PATH="$work/bin:$PATH" "$@"; }
# Runs command lines (eval) one after the other, up to the first failure, their output appended to
# the file OUT, and prints "wall_ms cpu_ms status": wall time from bash's clock, CPU time (user +
# system) of the processes they started from `times`. Run inside the namespace, so that the
# harness (`ip netns exec`, `env`, a clock process) is not timed.
cat > "$work/timed" <<'TIMED'
#!/usr/bin/env bash
out=$1; shift
status=0 start=$EPOCHREALTIME
for line in "$@"; do eval "$line" >>"$out" 2>&1 || { status=$?; break; }; done
end=$EPOCHREALTIME
times > "$out.times"   # in this shell: a pipe or $(…) would run it in a subshell, without these children
tail -1 "$out.times" | awk -v a="$start" -v b="$end" -v s="$status" '{ t = 0; for (i = 1; i <= 2; i++) { split($i, p, /[ms]/); t += p[1] * 60 + p[2] }
    printf "%.1f %.1f %s\n", (b - a) * 1000, t * 1000, s }'
TIMED
chmod +x "$work/timed"
# Writes bash's clock (seconds) to the file START and becomes the command: a command's start,
# taken inside the namespace as `timed` takes it.
cat > "$work/started" <<'STARTED'
#!/usr/bin/env bash
echo "$EPOCHREALTIME" > "$1"; shift; exec "$@"
STARTED
chmod +x "$work/started"
# Round trips to the modem in a `-v` trace of libmbim/libqmi: bursts of requests sent without
# an answer in between, each answered after one modem delay; the proxies' own set-up messages
# (mbim-proxy's configuration, qmi-proxy's device path) do not reach the modem.
round_trips() {
    awk 'function end() { if (inmsg && !proxy) real[b] = 1; inmsg = 0 }
         /\] sent message\.\.\./ { end(); if (!sending) { sending = 1; b++ } inmsg = 1; proxy = 0; next }
         /\] received message\.\.\./ { end(); sending = 0; next }
         inmsg && (/proxy-control/ || /"Device Path"/) { proxy = 1 }
         END { end(); n = 0; for (i in real) n++; print n }' "$1"
}
# One up + down, timed; its output kept for a failure's message. Client, modem index → "wall ms
# cpu ms" (CPU: user + system of every process it started, which a loaded machine does not inflate).
measure() {
    local wall cpu status
    : > "$work/out"
    case $1 in
        cellpath) set -- "$1" "$2" "'$CELLPATH' bearer up -m $2 -q" "'$CELLPATH' bearer down -m $2 -q" ;;
        mbim-network) set -- "$1" "$2" "mbim-network --profile='$work/network.conf' '$dev/cdc-wdm$2' start" \
                          "mbim-network --profile='$work/network.conf' '$dev/cdc-wdm$2' stop" ;;
        qmi-network) set -- "$1" "$2" "qmi-network --profile='$work/network.conf' '$dev/cdc-wdm$2' start" \
                         "qmi-network --profile='$work/network.conf' '$dev/cdc-wdm$2' stop" ;;
    esac
    read -r wall cpu status <<< "$(inside "$work/timed" "$work/out" "$3" "$4")"
    [ "$status" = 0 ] || { echo "bench-bearer: $1 on modem $2 failed:" >&2; cat "$work/out" >&2; exit 70; }
    echo "$wall $cpu"
}

# Warm-up: the proxies start, the binaries are in the page cache.
for pair in "cellpath 0" "mbim-network 0" "cellpath 1" "qmi-network 1"; do measure $pair >/dev/null; done
echo "bench-bearer: $ROUNDS rounds…" >&2
for ((r = 0; r < ROUNDS; r++)); do
    if ((r % 2)); then order=("mbim-network 0" "cellpath 0" "qmi-network 1" "cellpath 1")
    else order=("cellpath 0" "mbim-network 0" "cellpath 1" "qmi-network 1"); fi
    for pair in "${order[@]}"; do
        set -- $pair
        read -r wall cpu <<< "$(measure "$1" "$2")"
        echo "$1-$2 $wall" >> "$work/samples"
        echo "cpu-$1-$2 $cpu" >> "$work/samples"
    done
done

median() { # sample key → median ms
    awk -v k="$1" '$1 == k { print $2 }' "$work/samples" | sort -n |
        awk '{ a[NR] = $1 } END { printf "%.1f", (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
verdict() { if awk "BEGIN { exit !($1) }"; then echo met; else echo "NOT met"; fi; }

echo
# The targets: cellpath ≤ 0.6 × the script when the modem answers at once, ≤ 0.5 × at 20 ms.
target=$( ((MODEM_DELAY == 0)) && echo 0.6 || echo 0.5 )
echo "### bearer up + down, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $ROUNDS rounds, modems answering in $MODEM_DELAY ms"
echo
echo "Wall and CPU time (user + system of every process started) of each up + down, medians."
echo
echo "| modem | cellpath ms wall / CPU | script | script ms wall / CPU | cellpath / script, wall | CPU | target ≤ $target (wall) |"
echo "|---|---:|---|---:|---:|---:|---|"
for pair in "MBIM 0 mbim-network" "QMI 1 qmi-network"; do
    set -- $pair
    c=$(median "cellpath-$2") s=$(median "$3-$2") q=$(ratio "$(median "cellpath-$2")" "$(median "$3-$2")")
    cc=$(median "cpu-cellpath-$2") sc=$(median "cpu-$3-$2")
    echo "| $1 | $c / $cc | \`$3\` | $s / $sc | $q | $(ratio "$cc" "$sc") | $(verdict "$q <= $target") |"
done

if ((MM_ROUNDS > 0)); then
    # -----------------------------------------------------------------------------------------
    # The same through ModemManager, in a world of its own (the direct backend does not work
    # beside it there: ModemManager's proxies run in its own mount namespace).
    echo "bench-bearer: the world with ModemManager ($MM_PREFIX), $MM_ROUNDS rounds…" >&2
    sed 's/^{"modems"/{"modemManager": true, "modems"/' "$work/scenario.json" > "$work/scenario-mm.json"
    mm_up=1
    "$CELLPATH" sim up --prefix "$MM_PREFIX" --scenario "$work/scenario-mm.json" >/dev/null
    mm_env=$("$CELLPATH" sim env --prefix "$MM_PREFIX" | sed -n "s/^export //p" | tr -d "'")
    measure_mm() { # modem index → ms of one up + down through ModemManager
        local wall cpu status
        : > "$work/out"
        read -r wall cpu status <<< "$(ip netns exec "${MM_PREFIX}ue" env $mm_env "$work/timed" "$work/out" \
            "'$CELLPATH' bearer up -m $1 --backend modemmanager -q" "'$CELLPATH' bearer down -m $1 --backend modemmanager -q")"
        [ "$status" = 0 ] \
            || { echo "bench-bearer: cellpath through ModemManager on modem $1 failed:" >&2; cat "$work/out" >&2; exit 70; }
        echo "$wall"
    }
    for modem in 0 1; do measure_mm "$modem" >/dev/null; done   # warm-up: ModemManager enables the modems
    for ((r = 0; r < MM_ROUNDS; r++)); do
        for modem in 0 1; do echo "mm-$modem $(measure_mm "$modem")" >> "$work/samples"; done
    done
    "$CELLPATH" sim down --prefix "$MM_PREFIX" >/dev/null
    mm_up=
    echo
    echo "### bearer up + down through ModemManager ($(ModemManager --version 2>/dev/null | head -1)), $MM_ROUNDS rounds, same run"
    echo
    echo "| modem | direct median ms | ModemManager median ms | ModemManager / direct |"
    echo "|---|---:|---:|---:|"
    for pair in "MBIM 0" "QMI 1"; do
        set -- $pair
        d=$(median "cellpath-$2") m=$(median "mm-$2")
        echo "| $1 | $d | $m | $(ratio "$m" "$d") |"
    done
fi

if ((ZOO_ROUNDS > 0 && MODEM_DELAY == 0)); then
    echo "bench-bearer: the device zoo's floor is its round trips × the modem's answer time: skipped at MODEM_DELAY=0" >&2
elif ((ZOO_ROUNDS > 0)); then
    # -----------------------------------------------------------------------------------------
    # bearer up on each zoo modem that can bring one up, against its own floor.
    echo "bench-bearer: the device zoo ($ZOO_PREFIX), $ZOO_ROUNDS rounds per modem…" >&2
    jq --argjson d "$MODEM_DELAY" '.modems |= map(.faults.responseDelayMs = $d)' \
        "$(dirname "$0")/zoo-scenario.json" > "$work/zoo.json"
    zoo_up=1
    "$CELLPATH" sim up --prefix "$ZOO_PREFIX" --scenario "$work/zoo.json" >/dev/null
    zoo_env=$("$CELLPATH" sim env --prefix "$ZOO_PREFIX" | sed -n "s/^export //p" | tr -d "'")
    zoo() { ip netns exec "${ZOO_PREFIX}ue" env $zoo_env "$CELLPATH" "$@"; }
    zoo modems --json 2>/dev/null | jq -r '.modems[] | "\(.index)\t\(.manufacturer // "-") \(.model // "-")\t\(.protocol // "-")"' \
        > "$work/zoo-modems"
    : > "$work/zoo-rows"
    while IFS=$'\t' read -r index model protocol; do
        if ! zoo bearer up -m "$index" -q >"$work/out" 2>&1; then   # warm-up; a modem that cannot is listed
            echo "$index	$model	$protocol	$(head -1 "$work/out" | sed 's/^error: //' | cut -c1-90)" >> "$work/zoo-skipped"
            continue
        fi
        zoo bearer down -m "$index" -q >/dev/null
        zoo bearer up -m "$index" -v >/dev/null 2>"$work/trace" && zoo bearer down -m "$index" -q >/dev/null
        trips=$(round_trips "$work/trace")
        for ((r = 0; r < ZOO_ROUNDS; r++)); do
            : > "$work/out"
            read -r wall cpu status <<< "$(ip netns exec "${ZOO_PREFIX}ue" env $zoo_env "$work/timed" "$work/out" \
                "'$CELLPATH' bearer up -m $index -q")"
            [ "$status" = 0 ] \
                || { echo "bench-bearer: bearer up on zoo modem $index failed:" >&2; cat "$work/out" >&2; exit 70; }
            zoo bearer down -m "$index" -q >/dev/null
            echo "zoo-$index $wall" >> "$work/samples"
            echo "cpu-zoo-$index $cpu" >> "$work/samples"
        done
        echo "$index	$model	$protocol	$trips" >> "$work/zoo-rows"
    done < "$work/zoo-modems"
    "$CELLPATH" sim down --prefix "$ZOO_PREFIX" >/dev/null
    zoo_up=
    echo
    echo "### bearer up on the device zoo, $ZOO_ROUNDS runs per modem, modems answering in $MODEM_DELAY ms"
    echo
    echo "Floor = round trips to the modem × $MODEM_DELAY ms + $NETLINK_MS ms (netlink)."
    echo
    echo "| modem | model | protocol | round trips | median ms | CPU ms | floor ms | median / floor | target ≤ 1.1 |"
    echo "|---:|---|---|---:|---:|---:|---:|---:|---|"
    while IFS=$'\t' read -r index model protocol trips; do
        m=$(median "zoo-$index") floor=$(awk -v n="$trips" -v d="$MODEM_DELAY" -v l="$NETLINK_MS" 'BEGIN { printf "%.1f", n * d + l }')
        q=$(ratio "$m" "$floor")
        echo "| $index | $model | $protocol | $trips | $m | $(median "cpu-zoo-$index") | $floor | $q | $(verdict "$q <= 1.1") |"
    done < "$work/zoo-rows"
    if [ -s "$work/zoo-skipped" ]; then
        echo
        echo "Without a bearer (\`bearer up\` refused):"
        echo
        while IFS=$'\t' read -r index model protocol why; do echo "- $index $model ($protocol): $why"; done < "$work/zoo-skipped"
    fi
fi

((FETCH_ROUNDS > 0)) || exit 0
# ---------------------------------------------------------------------------------------------
# fetch -m N with the bearer down: start → first byte of check_url (hop 1), against the floor.
echo "bench-bearer: fetch -m N, $FETCH_ROUNDS runs per modem…" >&2
API=(--cacert "$CELLPATH_CA_FILE" --resolve "api.truid.test:443:203.0.113.10")
token=$(inside curl -sS --fail-with-body "${API[@]}" -u "$CELLPATH_CLIENT_ID:$CELLPATH_CLIENT_SECRET" \
    -d 'grant_type=client_credentials&scope=subscriber_check' https://api.truid.test/oauth2/v1/token | jq -er .access_token)
check_url() { # a fresh SubscriberCheck's check_url (backend leg over Wi-Fi, not timed)
    inside curl -sS --fail-with-body "${API[@]}" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
        -d '{"phone_number":"+447940448591"}' https://api.truid.test/subscriber_check/v0.2/checks | jq -er ._links.check_url.href
}
# RTT of the cellular path (to the API, through the modem's interface), with a bearer up for it.
inside "$CELLPATH" bearer up -m 0 -q >/dev/null
rtt=$(inside ping -n -q -I wwan0 -c 10 -i 0.2 203.0.113.10 | awk -F'[/ ]+' '/^rtt/ { print $7 }')
inside "$CELLPATH" bearer down -m 0 -q >/dev/null
[ -n "$rtt" ] || { echo "bench-bearer: ping -I wwan0 failed" >&2; exit 70; }
for modem in 0 1; do
    for ((r = 0; r <= FETCH_ROUNDS; r++)); do   # run 0: warm-up, traced for its round trips
        url=$(check_url)
        if ((r == 0)); then
            inside "$CELLPATH" fetch -m "$modem" -v --json "$url" > "$work/fetch.json" 2>"$work/trace" \
                || { echo "bench-bearer: fetch -m $modem failed:" >&2; tail -5 "$work/trace" >&2; exit 70; }
            sed '/\] bearer up: /q' "$work/trace" > "$work/bring-up"   # the bring-up's part, before the chain
            echo "trips-$modem $(round_trips "$work/bring-up")" >> "$work/samples"
            continue
        fi
        inside "$work/started" "$work/start" "$CELLPATH" fetch -m "$modem" --json "$url" > "$work/fetch.json" 2>"$work/out" \
            || { echo "bench-bearer: fetch -m $modem failed:" >&2; cat "$work/out" >&2; exit 70; }
        # The first hop's first byte, on the wall clock: its start plus its phases (DNS, connect, TLS,
        # request to first byte: the curl-style time to first byte).
        jq -r --arg start "$(cat "$work/start")" \
            '.hops[0] | (.started_at * 1000 + ([.timings | .dns_ms, .connect_ms, .tls_ms, .first_byte_ms] | map(. // 0) | add))
                        - ($start | tonumber) * 1000' \
            "$work/fetch.json" | awk -v m="$modem" '{ printf "fetch-%s %.1f\n", m, $1 }' >> "$work/samples"
    done
done
hops=$(jq -r '.hops[0].url' "$work/fetch.json")
echo
echo "### fetch -m N with the bearer down: start → first byte of check_url ($hops), cellular RTT $rtt ms"
echo
echo "Floor: hop 1's round trips on the cellular path (DNS, TCP, TLS 1.3, request: 4 × RTT) after the"
echo "modem's answers: to connect and to the IP configuration query only (2 × $MODEM_DELAY ms, the floor"
echo "as first defined), or to every round trip of the bring-up in a \`-v\` trace (+ $NETLINK_MS ms netlink)."
echo
echo "| modem | median ms | floor ms (2 answers) | median / floor | round trips | floor ms (every round trip) | median / floor | target ≤ 1.15 |"
echo "|---|---:|---:|---:|---:|---:|---:|---|"
floor=$(awk -v d="$MODEM_DELAY" -v r="$rtt" 'BEGIN { printf "%.1f", 2 * d + 4 * r }')
for pair in "MBIM 0" "QMI 1"; do
    set -- $pair
    m=$(median "fetch-$2") trips=$(median "trips-$2")
    full=$(awk -v n="$trips" -v d="$MODEM_DELAY" -v r="$rtt" -v l="$NETLINK_MS" 'BEGIN { printf "%.1f", n * d + l + 4 * r }')
    q=$(ratio "$m" "$floor") f=$(ratio "$m" "$full")
    echo "| $1 | $m | $floor | $q | ${trips%.*} | $full | $f | $(verdict "$q <= 1.15") (2 answers), $(verdict "$f <= 1.15") (every round trip) |"
done

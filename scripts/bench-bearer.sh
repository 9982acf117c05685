#!/usr/bin/env bash
# `make bench`, second part: `cellpath bearer up` + `cellpath bearer down` against libmbim's
# `mbim-network` and libqmi's `qmi-network` (Debian's libmbim-utils, libqmi-utils) on the same
# simulated modems (one MBIM, one QMI), as ratios from the same run. Both sides go through
# mbim-proxy / qmi-proxy; the scripts spawn mbimcli/qmicli for each step, cellpath keeps one
# session (and also configures the interface, which the scripts leave to the caller).
# Method and results: docs/benchmarks.md. Needs root (the simulator does).
#
#   CELLPATH     the cellpath binary (default: cellpath on PATH)
#   ROUNDS       rounds; each runs every client once per modem, in a rotating order (default: 10)
#   MODEM_DELAY  the simulated modems' answer time in ms (default: 20; real modems answer in a few to tens of ms)
#   PREFIX       simulator prefix of the benchmark's own world (default: cpbb-)
set -euo pipefail

CELLPATH=${CELLPATH:-cellpath}
ROUNDS=${ROUNDS:-10}
MODEM_DELAY=${MODEM_DELAY:-20}
PREFIX=${PREFIX:-cpbb-}
UE=${PREFIX}ue
[ "$(id -u)" = 0 ] || { echo "bench-bearer: needs root (the simulated world does)" >&2; exit 77; }
for tool in mbim-network qmi-network; do
    command -v "$tool" >/dev/null || { echo "bench-bearer: $tool is missing (sudo make deps)" >&2; exit 69; }
done

work=$(mktemp -d /tmp/cellpath-bench-bearer.XXXXXX)
cleanup() {
    "$CELLPATH" sim down --prefix "$PREFIX" >/dev/null 2>&1 || echo "bench-bearer: sim down --prefix $PREFIX failed" >&2
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
now() { date +%s%N; }
# One up + down, timed; its output kept for a failure's message. Client, modem index → ms.
measure() {
    local start end
    start=$(now)
    case $1 in
        cellpath) inside "$CELLPATH" bearer up -m "$2" -q >"$work/out" 2>&1 && inside "$CELLPATH" bearer down -m "$2" -q >>"$work/out" 2>&1 ;;
        mbim-network) inside mbim-network --profile="$work/network.conf" "$dev/cdc-wdm$2" start >"$work/out" 2>&1 \
                          && inside mbim-network --profile="$work/network.conf" "$dev/cdc-wdm$2" stop >>"$work/out" 2>&1 ;;
        qmi-network) inside qmi-network --profile="$work/network.conf" "$dev/cdc-wdm$2" start >"$work/out" 2>&1 \
                         && inside qmi-network --profile="$work/network.conf" "$dev/cdc-wdm$2" stop >>"$work/out" 2>&1 ;;
    esac || { echo "bench-bearer: $1 on modem $2 failed:" >&2; cat "$work/out" >&2; exit 70; }
    end=$(now)
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f\n", (b - a) / 1e6 }'
}

# Warm-up: the proxies start, the binaries are in the page cache.
for pair in "cellpath 0" "mbim-network 0" "cellpath 1" "qmi-network 1"; do measure $pair >/dev/null; done
echo "bench-bearer: $ROUNDS rounds…" >&2
for ((r = 0; r < ROUNDS; r++)); do
    if ((r % 2)); then order=("mbim-network 0" "cellpath 0" "qmi-network 1" "cellpath 1")
    else order=("cellpath 0" "mbim-network 0" "cellpath 1" "qmi-network 1"); fi
    for pair in "${order[@]}"; do
        set -- $pair
        echo "$1-$2 $(measure "$1" "$2")" >> "$work/samples"
    done
done

median() { # sample key → median ms
    awk -v k="$1" '$1 == k { print $2 }' "$work/samples" | sort -n |
        awk '{ a[NR] = $1 } END { printf "%.1f", (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
verdict() { if awk "BEGIN { exit !($1) }"; then echo met; else echo "NOT met"; fi; }

echo
echo "### bearer up + down, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $ROUNDS rounds, modems answering in $MODEM_DELAY ms"
echo
echo "| modem | cellpath median ms | script | script median ms | cellpath / script | target ≤ 0.3 |"
echo "|---|---:|---|---:|---:|---|"
for pair in "MBIM 0 mbim-network" "QMI 1 qmi-network"; do
    set -- $pair
    c=$(median "cellpath-$2") s=$(median "$3-$2") q=$(ratio "$(median "cellpath-$2")" "$(median "$3-$2")")
    echo "| $1 | $c | \`$3\` | $s | $q | $(verdict "$q <= 0.3") |"
done

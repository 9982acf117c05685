#!/usr/bin/env bash
# `make bench`, radio part: what reading the radio context adds to a field run's checks. The
# radio is read while the check_url chain runs; the check_url step ends when both have, so per
# check the step's duration less the chain's own wall time (`check_url.total_ms`) bounds what the
# read added (it also holds the opener's set-up). Paired on the same checks, per modem (QMI and
# MBIM with Base Stations Info), against the run's total. Method and results: docs/benchmarks.md.
# Needs root.
#
#   CELLPATH   the cellpath binary (default: cellpath on PATH)
#   RUNS       field runs per modem (default: 20)
#   PREFIX     simulator prefix of the benchmark's own world (default: cpbr-)
set -euo pipefail

CELLPATH=${CELLPATH:-cellpath}
RUNS=${RUNS:-20}
PREFIX=${PREFIX:-cpbr-}
[ "$(id -u)" = 0 ] || { echo "bench-radio: needs root (the simulated world does)" >&2; exit 77; }
command -v jq >/dev/null || { echo "bench-radio: jq is missing (sudo make deps)" >&2; exit 69; }

work=$(mktemp -d /tmp/cellpath-bench-radio.XXXXXX)
cleanup() {
    "$CELLPATH" sim down --prefix "$PREFIX" >/dev/null 2>&1 || echo "bench-radio: sim down --prefix $PREFIX failed" >&2
    rm -rf "$work"
}
trap cleanup EXIT
echo '{ "modems": [ { "protocol": "qmi" }, { "device": "quectel-em120r-mhi" } ] }' > "$work/scenario.json"
"$CELLPATH" sim up --prefix "$PREFIX" --scenario "$work/scenario.json" >/dev/null
"$CELLPATH" sim exec --prefix "$PREFIX" -- "$CELLPATH" subscriber-check -m all --direct --repeat "$RUNS" \
    --interval 0 --json > "$work/runs.jsonl" || true
jq -rs '
  def median: sort | .[length / 2 | floor];
  ["backend", "runs", "median_total_ms", "median_added_ms", "mean_added_ms", "mean_added_%", "within_5%"],
  ([.[] | select(.run != null and .check_url != null)] | group_by(.modem)[] |
    (map((.steps[] | select(.step == "check_url") | .duration_ms) - .check_url.total_ms)) as $added |
    (map(.total_ms)) as $totals |
    ($added | add / length) as $mean | ($totals | add / length) as $total |
    [.[0].path.modem_backend, length, ($totals | median | floor), ($added | median | floor),
     ($mean * 10 | floor / 10), ($mean / $total * 1000 | floor / 10), (if $mean <= $total * 0.05 then "yes" else "NO" end)])
  | @tsv' "$work/runs.jsonl" | column -t

#!/usr/bin/env bash
# `make bench`, report part: `cellpath report` on RECORDS field-mode records (JSON Lines as a
# field run with `-m all` writes them: two modems, radio context on three cells of two operators,
# one check in ten failed), timed with /usr/bin/time: its wall time and peak memory against the
# limits (2 s, 200 MB) for each format, and its CPU time (what a loaded machine does not
# stretch). Method and results: docs/benchmarks.md. Needs no root.
#
#   CELLPATH   the cellpath binary (default: cellpath on PATH)
#   RECORDS    records generated (default: 100000)
set -euo pipefail

CELLPATH=${CELLPATH:-cellpath}
RECORDS=${RECORDS:-100000}
[ -x /usr/bin/time ] || { echo "bench-report: /usr/bin/time is missing (apt-get install time)" >&2; exit 69; }

work=$(mktemp -d /tmp/cellpath-bench-report.XXXXXX)
trap 'rm -rf "$work"' EXIT

awk -v n="$RECORDS" 'BEGIN {
    split("001-01 001-01 001-02", ops, " "); split("lte lte umts", rats, " ")
    split("1048577 1048578 8193", cells, " "); split("B20 B3 wcdma-2100", bands, " ")
    split("-84 -118 -95", rsrp, " ")
    for (i = 0; i < n; i++) {
        c = i % 3 + 1; modem = i % 2; start = 1796097600 + i
        outcome = (i % 10 == 9) ? "\"failure\": \"mno_not_supported\"" : "\"outcome\": \"verified\""
        printf "{\"product\": \"subscriber_check\", \"modem\": %d, \"run\": %d, \"started_at\": %d.25, ", modem, int(i / 2) + 1, start
        printf "\"phone_number\": \"+4479404485%02d\", %s, \"error\": null, ", 91 + modem, outcome
        printf "\"path\": {\"interface\": \"wwan%d\", \"ipv4_address\": \"100.64.23.%d\"}, \"operator_sent\": \"%s\", ", modem, 10 + modem, ops[c]
        printf "\"radio\": {\"source\": \"qmi\", \"rat\": \"%s\", \"operator\": \"%s\", \"cell_id\": %s, \"band\": \"%s\", \"rsrp_dbm\": %s}, ", rats[c], ops[c], cells[c], bands[c], rsrp[c]
        printf "\"steps\": [{\"step\": \"path\", \"start_ms\": 0, \"duration_ms\": %d.5, \"succeeded\": true}, ", 40 + i % 17
        printf "{\"step\": \"create\", \"start_ms\": 0, \"duration_ms\": %d.1, \"succeeded\": true}, ", 120 + i % 53
        printf "{\"step\": \"check_url\", \"start_ms\": 121, \"duration_ms\": %d.7, \"succeeded\": true}], ", 300 + i % 211
        printf "\"total_ms\": %d.9, \"check_id\": \"chk_%08d\"}\n", 520 + i % 240, i
    }
}' > "$work/runs.jsonl"

printf '%-8s %10s %10s %12s %8s\n' format wall_s cpu_s max_rss_mb within
failed=0
for format in json csv html; do
    /usr/bin/time -f '%e %M %U %S' -o "$work/time" "$CELLPATH" report "$work/runs.jsonl" --format "$format" \
        -o "$work/report.$format" >/dev/null
    read -r seconds kilobytes user system < "$work/time"
    cpu=$(awk -v u="$user" -v s="$system" 'BEGIN { printf "%.2f", u + s }')
    megabytes=$(awk -v k="$kilobytes" 'BEGIN { printf "%.1f", k / 1024 }')
    within=$(awk -v s="$seconds" -v m="$megabytes" 'BEGIN { print (s <= 2 && m <= 200) ? "yes" : "NO" }')
    [ "$within" = yes ] || failed=1
    printf '%-8s %10s %10s %12s %8s\n' "$format" "$seconds" "$cpu" "$megabytes" "$within"
done
echo "($RECORDS records, $(du -m "$work/runs.jsonl" | cut -f1) MB of JSON Lines; limits 2 s and 200 MB)"
exit "$failed"

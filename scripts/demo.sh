#!/usr/bin/env bash
# `make demo`: cellpath's main job — a SubscriberCheck whose check_url goes through the
# cellular modem only — on the built-in simulated world. Needs root (network namespaces).
set -euo pipefail
CELLPATH=${CELLPATH:-cellpath}
PREFIX=${PREFIX:-cpdemo-}

bold() { printf '\n\033[1m%s\033[0m\n' "$*"; }
# Shows a cellpath command as a user would type it (on stderr, so that $(step …) captures only
# its output), then runs it with the built binary.
step() { printf '\033[36m$ cellpath %s\033[0m\n' "$*" >&2; "$CELLPATH" "$@"; }

if [ "${1:-}" = "--on-device" ]; then
    # Runs inside the device namespace (cellpath sim exec), with the world's variables set.
    api=$CELLPATH_SIM_API_URL
    bold "2. The backend creates a SubscriberCheck over Wi-Fi (what your server, or 'cellpath serve', does)"
    token=$(curl -sS --fail -u "$CELLPATH_CLIENT_ID:$CELLPATH_CLIENT_SECRET" \
        -d 'grant_type=client_credentials&scope=subscriber_check' "$api/oauth2/v1/token" \
        | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
    check=$(curl -sS --fail -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
        -d '{"phone_number":"+447940448591"}' "$api/subscriber_check/v0.2/checks")
    check_id=$(printf '%s' "$check" | python3 -c 'import json,sys; print(json.load(sys.stdin)["check_id"])')
    check_url=$(printf '%s' "$check" | python3 -c 'import json,sys; print(json.load(sys.stdin)["_links"]["check_url"]["href"])')
    echo "check_id:  $check_id"
    echo "check_url: $check_url"

    bold "3. The device opens check_url through the modem only: every hop and every DNS query on wwan0"
    # The trace goes to stderr, the code alone to stdout (--print code): what the app hands to its backend.
    code=$(step fetch --interface wwan0 --dns 100.64.0.53 --print code "$check_url")
    echo "code: $code"

    bold "4. The backend exchanges the code: the carrier saw this SIM's number"
    curl -sS --fail -X PATCH -H "Authorization: Bearer $token" -H 'Content-Type: application/json-patch+json' \
        -d "[{\"op\":\"add\",\"path\":\"/code\",\"value\":\"$code\"}]" "$api/subscriber_check/v0.2/checks/$check_id" \
        | python3 -c 'import json,sys; r=json.load(sys.stdin); print("status:", r["status"], " match:", r["match"], " no_sim_change:", r["no_sim_change"])'

    bold "5. Over Wi-Fi a check_url is refused: the carrier cannot see the SIM"
    check=$(curl -sS --fail -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
        -d '{"phone_number":"+447940448591"}' "$api/subscriber_check/v0.2/checks")
    check_url=$(printf '%s' "$check" | python3 -c 'import json,sys; print(json.load(sys.stdin)["_links"]["check_url"]["href"])')
    echo "\$ curl $check_url    # no --interface: through wlan0"
    body=$(curl -sS -w '\n%{http_code}' "$check_url")
    printf '%s' "$body" | python3 -c 'import json,sys; lines=sys.stdin.read().rsplit("\n", 1); r=json.loads(lines[0]); print("HTTP", lines[1], r.get("title"), "-", r.get("detail"))'
    exit 0
fi

trap '"$CELLPATH" sim down --prefix "$PREFIX" >/dev/null 2>&1 || true' EXIT
echo "cellpath demo — SIM-based mobile authentication from a Linux machine, on a simulated world"

bold "1. A simulated cellular world: a device with Wi-Fi and an LTE modem, a carrier, the tru.ID API"
step sim up --prefix "$PREFIX"
step sim bearer connect --prefix "$PREFIX"

"$CELLPATH" sim exec --prefix "$PREFIX" -- "$0" --on-device

bold "6. Fail closed: with the bearer down, cellpath refuses rather than use Wi-Fi"
step sim bearer disconnect --prefix "$PREFIX"
set +e
printf '\033[36m$ cellpath sim exec -- cellpath fetch --interface wwan0 --dns 100.64.0.53 https://api.truid.test/\033[0m\n'
"$CELLPATH" sim exec --prefix "$PREFIX" -- "$CELLPATH" fetch --interface wwan0 --dns 100.64.0.53 https://api.truid.test/
status=$?
set -e
echo "exit code: $status (69: unavailable)"

bold "7. Phone numbers are parsed with libphonenumber, never rewritten"
step number "0044 7940 448591"

bold "Done. Try it yourself: sudo cellpath sim up; sudo cellpath sim exec -- bash"

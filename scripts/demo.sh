#!/usr/bin/env bash
# `make demo`: cellpath's main job — SubscriberCheck, PhoneCheck and SIMCheck from a Linux
# machine's modems, every check_url through the cellular interface only — on a simulated world
# with two modems (MBIM and QMI). Needs root (network namespaces). Leaves nothing behind.
# DEMO_PREFIX names the world's namespaces (default cpdemo-); colour only on a terminal, without NO_COLOR.
set -uo pipefail
CELLPATH=${CELLPATH:-cellpath}
world_prefix=${DEMO_PREFIX:-cpdemo-}
SCENARIO=${SCENARIO:-$(dirname "$0")/demo-scenario.json}

if [[ -t 1 && -z ${NO_COLOR:-} ]]; then
    bold_on=$'\033[1m' command_on=$'\033[36m' dim_on=$'\033[2m' off=$'\033[0m'
else
    bold_on='' command_on='' dim_on='' off=''
fi
bold() { printf '\n%s%s%s\n' "$bold_on" "$*" "$off"; }
shown() { printf '%s$ cellpath %s%s\n' "$command_on" "$*" "$off"; }
# Shows the command as a user types it on the device (inside `cellpath sim exec`, which sets the
# world's variables: the fake API's base URL, its CA and the project's credentials), runs it
# there, and prints its exit code.
device() {
    shown "$*"
    "$CELLPATH" sim exec --prefix "$world_prefix" -- "$CELLPATH" "$@"
    local status=$?
    printf '%sexit code: %s%s\n' "$dim_on" "$status" "$off"
    return 0
}

trap '"$CELLPATH" sim down --prefix "$world_prefix" >/dev/null 2>&1 || true' EXIT
echo "cellpath demo — SIM-based mobile authentication from a Linux machine, on a simulated world"

bold "1. A simulated cellular world: a device with Wi-Fi and two modems (MBIM, QMI), a carrier, the tru.ID API"
shown "sim up --scenario $(basename "$SCENARIO")"
"$CELLPATH" sim up --prefix "$world_prefix" --scenario "$SCENARIO" >/dev/null || exit
device modems

bold "2. SubscriberCheck of the first SIM's number: created on the API over Wi-Fi while modem 0's bearer comes up, check_url through wwan0 only"
device subscriber-check +447940448591 -m 0 --direct

bold "3. A number that is not this SIM's: not verified (exit 1)"
device subscriber-check +447940448592 -m 0 --direct -q

bold "4. The QMI modem's SIM was swapped 30 minutes ago: the number matches, the SIM changed (exit 2)"
device subscriber-check +447940448593 -m 1 --direct -q

bold "5. PhoneCheck (v0.1 flow) and SIMCheck"
device phone-check +447940448591 -m 0 --direct --api-version v0.1 -q
device sim-check +447940448593 --direct

bold "6. Wi-Fi is refused: wlan0 is no modem's interface (64), and forced through it the API sees no mobile IP (69)"
device subscriber-check +447940448591 --direct --interface wlan0 --dns 192.0.2.1 -q
device subscriber-check +447940448591 --direct --interface wlan0 --dns 192.0.2.1 --allow-any-interface -q

bold "7. Field mode: five checks in a row on modem 0, with a summary (add --json for JSON Lines, --metrics-file for Prometheus)"
device subscriber-check +447940448591 -m 0 --direct --repeat 5

bold "8. Phone numbers are parsed with libphonenumber, never rewritten"
shown "number 0044 7940 448591"
"$CELLPATH" number 0044 7940 448591

bold "Done; tearing the world down. Try it yourself: sudo cellpath sim up; sudo cellpath sim exec -- bash"

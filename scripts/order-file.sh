#!/usr/bin/env bash
# Writes link/cellpath.order: the functions of the front `cellpath` that a check_url fetch runs,
# in the order valgrind's callgrind first sees them, so that the release link (Package.swift)
# lays them out together and a fetch maps fewer pages of the executable (docs/benchmarks.md,
# "Start-up and memory"). Needs root (a simulated world, prefix cpo-) and valgrind.
# Usage: CELLPATH=.build/release/cellpath scripts/order-file.sh   (make order-file does this)
set -euo pipefail
CELLPATH=${CELLPATH:?set CELLPATH to the release binary}
PREFIX=${PREFIX:-cpo-}
OUT=${OUT:-$(dirname "$0")/../link/cellpath.order}
work=$(mktemp -d)
cleanup() { "$CELLPATH" sim down --prefix "$PREFIX" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT

"$CELLPATH" sim up --prefix "$PREFIX" >/dev/null
"$CELLPATH" sim bearer connect --prefix "$PREFIX" >/dev/null
eval "$("$CELLPATH" sim env --prefix "$PREFIX")"
# valgrind cannot read the DWARF that lld writes: profile a copy without debug information
# (the symbol table stays).
strip -g -o "$work/cellpath" "$CELLPATH"
ip netns exec "${PREFIX}ue" env CURL_CA_BUNDLE="$CURL_CA_BUNDLE" CELLPATH_CLIENT_ID="$CELLPATH_CLIENT_ID" \
    CELLPATH_CLIENT_SECRET="$CELLPATH_CLIENT_SECRET" CELLPATH_SYSFS_ROOT="$CELLPATH_SYSFS_ROOT" WORK="$work" bash -c '
    set -euo pipefail
    token=$(curl -sS --fail-with-body -u "$CELLPATH_CLIENT_ID:$CELLPATH_CLIENT_SECRET" \
        -d "grant_type=client_credentials&scope=subscriber_check" https://api.truid.test/oauth2/v1/token | jq -er .access_token)
    check=$(curl -sS --fail-with-body -H "Authorization: Bearer $token" -H "Content-Type: application/json" \
        -d "{\"phone_number\":\"+447940448591\"}" https://api.truid.test/subscriber_check/v0.2/checks)
    valgrind -q --tool=callgrind --demangle=no --callgrind-out-file="$WORK/callgrind.out" \
        "$WORK/cellpath" fetch --interface wwan0 --dns 100.64.0.53 --hop-timeout 60 --timeout 120 --json \
        "$(jq -er ._links.check_url.href <<<"$check")" > "$WORK/fetch.json"'
jq -e '.result.final_status == 200' "$work/fetch.json" >/dev/null || { echo "order-file: the profiled fetch failed" >&2; exit 1; }

python3 - "$work/callgrind.out" "$work/cellpath" "$OUT" <<'PY'
import re, sys
profile, binary, out = sys.argv[1:]
names = {"ob": {}, "fn": {}}
def name(kind, token):
    """Callgrind compresses names: "(7) name" the first time, "(7)" afterwards."""
    m = re.match(r"\((\d+)\)(?: (.*))?$", token)
    if not m:
        return token
    if m.group(2):
        names[kind][m.group(1)] = m.group(2)
    return names[kind].get(m.group(1))
order, seen, ob, called_ob = [], set(), None, None
def add(function, obj):
    if obj == binary and function and not function.startswith("0x") and function not in seen:
        seen.add(function)
        order.append(function)
for line in open(profile, errors="replace"):
    key, _, value = line.rstrip("\n").partition("=")
    if key == "ob":
        ob = name("ob", value)
    elif key == "fn":
        add(name("fn", value), ob)
    elif key == "cob":
        called_ob = name("ob", value)
    elif key == "cfn":
        add(name("fn", value), called_ob or ob)
        called_ob = None
with open(out, "w") as f:
    f.write("\n".join(order) + "\n")
print(f"order-file: {len(order)} functions in {out}")
PY

#!/usr/bin/env bash
# `make demo`: cellpath's main job, shown step by step.
set -euo pipefail
CELLPATH=${CELLPATH:-cellpath}

# Shows a command as a user would type it, then runs it with the built binary.
step() { printf '\n\033[1m$ cellpath %s\033[0m\n' "$*"; "$CELLPATH" "$@"; }

echo "cellpath demo — SIM-based mobile authentication from a Linux machine"
step --help
step number "0044 7940 448591"
step number "07940 448591" --region GB --json
echo
echo "An invalid number is refused with exit code 65:"
set +e
"$CELLPATH" number abc
echo "exit code: $?"
set -e

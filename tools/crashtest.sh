#!/usr/bin/env bash
# Kill-and-recover test: aftershock-server with aftershock-bots --verify, kill -9 at random
# moments, restart on the same data directory, check every recovery (tools/crashtest/crashtest.py).
#   tools/crashtest.sh --kills 20 --bots 200 --threads 2 --checkpoint cou --durability sync
# Run from the repository root after building (binaries in build/bin, or pass --bin DIR).
# --help lists every flag. Exit status 0 only if every hash matched and no violation was seen.
set -euo pipefail
exec /usr/bin/python3 "$(dirname "$0")/crashtest/crashtest.py" "$@"

#!/usr/bin/env bash
# The demo: builds Aftershock, checks every map, starts the server on dm_arena with a few dozen
# bots, prints both sides' figures, then kills the server with kill -9 while the bots play,
# restarts it on the same data directory and prints the recovery figures and the bots'
# durability check. Usage: tools/demo.sh [--bots N] [--seconds S] [--threads T]
set -euo pipefail
cd "$(dirname "$0")/.."

bots=48
seconds=20
threads=2
while [ $# -gt 0 ]; do
  case "$1" in
    --bots) bots=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "demo.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

tools/install_deps.sh
mkdir -p build
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo > build/configure.log 2>&1 || { cat build/configure.log; exit 1; }
cmake --build build -j"$(nproc)" --target aftershock-mapcheck aftershock-server aftershock-bots aftershock-inspect

out=out/demo
rm -rf "$out"; mkdir -p "$out"
port=27500
server_pid=""; bots_pid=""
cleanup() {
  [ -n "$bots_pid" ] && kill -9 "$bots_pid" 2>/dev/null || true
  [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null || true
}
trap cleanup EXIT INT TERM
report() { /usr/bin/python3 tools/demo/report.py "$@"; }

echo "== 1. Maps"
maps=(maps/*.map)
maps+=(maps/librequake/*.map)
build/bin/aftershock-mapcheck "${maps[@]}"

start_server() {  # $1: stats file
  build/bin/aftershock-server --map maps/dm_arena.map --port "$port" --threads "$threads" \
    --max-players $((bots + 16)) --data-dir "$out/data" --checkpoint cou --durability sync \
    --stats-out "$1" --stats-interval 1 --hash-log >> "$out/server.log" 2>&1 &
  server_pid=$!
}
# Up to 60 s: a first start on a map builds its PVS (docs/maps.md) before the stats file appears;
# the restart after the kill loads it from the cache.
wait_for_file() { for _ in $(seq 1 600); do [ -s "$1" ] && return 0; sleep 0.1; done; return 1; }

echo
echo "== 2. Server on dm_arena ($threads worker threads, cou checkpoints, sync durability) + $bots bots"
start_server "$out/server1.json"
wait_for_file "$out/server1.json" || { echo "server did not start; see $out/server.log"; tail -20 "$out/server.log"; exit 1; }
build/bin/aftershock-bots --server "127.0.0.1:$port" --bots "$bots" --duration $((2 * seconds + 10)) \
  --ramp 2 --verify --identity-prefix demo --out "$out/bots.json" --series "$out/bots.csv" \
  > "$out/bots.log" 2>&1 &
bots_pid=$!
sleep "$seconds"
report server "$out/server1.json"

echo
echo "== 3. kill -9 the server while $bots bots play, then restart it on the same data directory"
kill -9 "$server_pid"; wait "$server_pid" 2>/dev/null || true
killed_at=$(date +%s.%N)
start_server "$out/server2.json"
wait_for_file "$out/server2.json" || { echo "server did not restart; see $out/server.log"; exit 1; }
report recovery "$out/server2.json" "$killed_at"

echo
echo "== 4. Bots keep playing against the recovered server"
wait "$bots_pid" || true; bots_pid=""
kill -TERM "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
report bots "$out/bots.json"
report server "$out/server2.json"
echo
echo "Data directory: $out/data (inspect it with build/bin/aftershock-inspect $out/data)"

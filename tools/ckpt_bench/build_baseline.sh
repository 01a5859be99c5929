#!/usr/bin/env bash
# Builds this tree's aftershock-ckpt-bench against the recovery/ library of another commit, so an
# old and a new checkpointer can be timed by the same benchmark, alternated in one session.
# Usage: tools/ckpt_bench/build_baseline.sh COMMIT OUTDIR   -> OUTDIR/build/bin/aftershock-ckpt-bench
# A checkpointer older than the AfterUpdate hook gets a no-op one (it did not need it).
set -euo pipefail
[ $# -eq 2 ] || { sed -n '2,5p' "$0"; exit 2; }
commit=$1
out=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$out/src"
mkdir -p "$out/src"
git -C "$root" archive "$commit" | tar -x -C "$out/src"
cp "$root/tools/ckpt_bench/ckpt_bench_main.cc" "$out/src/tools/ckpt_bench/ckpt_bench_main.cc"
header="$out/src/recovery/checkpointer.h"
if ! grep -q 'AfterUpdate' "$header"; then
  sed -i 's|^  core::Status TickBoundary(uint64_t tick);|  void AfterUpdate(uint32_t, uint32_t, uint32_t) {}  // shim added by build_baseline.sh\n&|' "$header"
  grep -q 'AfterUpdate' "$header" || { echo "build_baseline.sh: could not add the shim to $header" >&2; exit 1; }
fi
cmake -S "$out/src" -B "$out/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$out/configure.log" 2>&1 \
  || { cat "$out/configure.log"; exit 1; }
cmake --build "$out/build" -j2 --target aftershock-ckpt-bench
echo "built $out/build/bin/aftershock-ckpt-bench (recovery/ of $commit)"

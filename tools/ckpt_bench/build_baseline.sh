#!/usr/bin/env bash
# Builds this tree's aftershock-ckpt-bench against the recovery/ library of another commit, so an
# old and a new checkpointer can be timed by the same benchmark, alternated in one session.
# Usage: tools/ckpt_bench/build_baseline.sh COMMIT OUTDIR   -> OUTDIR/build/bin/aftershock-ckpt-bench
# A checkpointer older than Checkpointer::Write gets one made of its own OnUpdate and a memcpy
# (what the bench did before Write existed), and a no-op AfterUpdate (it did not need one).
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
shim() {  # name, C++ line: adds the line before TickBoundary's declaration unless name is there
  grep -q "$1(" "$header" && return
  sed -i "s|^  core::Status TickBoundary(uint64_t tick);|  $2  // shim added by build_baseline.sh\n&|" "$header"
  grep -q "$1(" "$header" || { echo "build_baseline.sh: could not add $1 to $header" >&2; exit 1; }
}
sed -i 's|^#include <cstdint>$|#include <cstdint>\n#include <cstring>|' "$header"
shim AfterUpdate 'void AfterUpdate(uint32_t, uint32_t, uint32_t) {}'
shim Write 'void Write(uint32_t o, uint32_t off, const void* src, uint32_t n) { OnUpdate(o); std::memcpy(base_ + uint64_t{o} * size_ + off, src, n); }'

# A recovery/ from before the Durability -> SyncMode rename: the bench's spelling on its names.
log_header="$out/src/recovery/log_writer.h"
if ! grep -q "SyncMode" "$log_header"; then
  sed -i 's|^enum class Durability { kSync, kAsync, kOff };|&\nusing SyncMode = Durability;  // shim added by build_baseline.sh|' "$log_header"
  sed -i 's|^  Durability durability = |  Durability sync_mode = |' "$log_header"
  sed -i 's|\.durability\b|.sync_mode|g; s|options_\.durability|options_.sync_mode|g' "$out/src/recovery/"*.cc
fi

cmake -S "$out/src" -B "$out/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$out/configure.log" 2>&1 \
  || { cat "$out/configure.log"; exit 1; }
cmake --build "$out/build" -j2 --target aftershock-ckpt-bench
echo "built $out/build/bin/aftershock-ckpt-bench (recovery/ of $commit)"

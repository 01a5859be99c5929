#!/usr/bin/env bash
# Times two aftershock-ckpt-bench binaries (e.g. an old checkpointer built by build_baseline.sh
# and this tree's) on the same workload, alternating them round by round in one session, and
# writes one CSV per round and binary; plot.py ckpt merges them (medians over the rounds).
# Usage: tools/ckpt_bench/compare.sh OLD_BIN NEW_BIN OUTDIR ROUNDS [aftershock-ckpt-bench args...]
#   e.g. compare.sh /tmp/ckpt-old/build/bin/aftershock-ckpt-bench build/bin/aftershock-ckpt-bench \
#          out/ckpt 3 --dir /dev/shm/ckpt --updates 1000,16000,64000 --skews 0,0.8
set -euo pipefail
[ $# -ge 4 ] || { sed -n '2,8p' "$0"; exit 2; }
old=$1 new=$2 out=$3 rounds=$4
shift 4
mkdir -p "$out"
for round in $(seq 1 "$rounds"); do
  # Alternate which binary goes first, so neither always runs on a warmer or quieter machine.
  if [ $((round % 2)) -eq 1 ]; then order="old new"; else order="new old"; fi
  for which in $order; do
    bin=$old; [ "$which" = new ] && bin=$new
    echo "round $round: $which" >&2
    nice -n 19 "$bin" --runs 1 --csv --label "$which" "$@" > "$out/$which-$round.csv"
  done
done
echo "wrote $out/{old,new}-1..$rounds.csv; draw with: tools/experiments/plot.py ckpt $out/*.csv --out $out" >&2

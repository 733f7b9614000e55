#!/usr/bin/env bash
# Diagnostic: is collbench's extra per-call time at 1-4 MiB the non-blocking communicator?
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cb=build-gpu/collbench raw=build-gpu/bench/collbench_raw_nccl
sz=(-b 1M -e 16M -f 4)
for k in 1 2 3; do
  $raw "${sz[@]}" -n 50 --samples 20 -w 10 --json $OUT/raw_default.jsonl >/dev/null
  NCCL_COMM_BLOCKING=0 $raw "${sz[@]}" -n 50 --samples 20 -w 10 --json $OUT/raw_nonblocking.jsonl >/dev/null
  $cb --device cuda --backend nccl --op allreduce --algo library "${sz[@]}" --batch -n 50 -w 10 --min-time 0.5 \
    --max-iters 1000 -c 0 --quiet --json $OUT/cb_default.jsonl
  NCCL_COMM_BLOCKING=1 $cb --device cuda --backend nccl --op allreduce --algo library "${sz[@]}" --batch -n 50 -w 10 \
    --min-time 0.5 --max-iters 1000 -c 0 --quiet --json $OUT/cb_blocking.jsonl
done
for p in "raw_default cb_default" "raw_default cb_blocking" "raw_nonblocking cb_default"; do
  set -- $p; echo "== $1 vs $2"
  /usr/bin/env python3 scripts/gpu_compare.py $OUT/$1.jsonl $OUT/$2.jsonl --out $OUT/$1_vs_$2.txt; cat $OUT/$1_vs_$2.txt
done

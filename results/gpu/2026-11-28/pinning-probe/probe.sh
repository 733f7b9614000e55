#!/usr/bin/env bash
# Probe: does pinning to one core (taskset) take the spread out of collbench's launches at 1-4 MiB?
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cb=build-gpu/collbench raw=build-gpu/bench/collbench_raw_nccl
sz=(-b 1M -e 16M -f 4)
cbargs=(--device cuda --backend nccl --op allreduce --algo library "${sz[@]}" --batch -n 50 -w 10 --min-time 0.5
        --max-iters 1000 -c 0 --quiet)
nvidia-smi topo -m 2>&1 | head -4
for k in 1 2 3 4; do
  $raw "${sz[@]}" -n 50 --samples 20 -w 10 --json $OUT/raw.jsonl >/dev/null
  $cb "${cbargs[@]}" --json $OUT/cb.jsonl
  taskset -c 2-3 $raw "${sz[@]}" -n 50 --samples 20 -w 10 --json $OUT/raw_pinned.jsonl >/dev/null
  taskset -c 2-3 $cb "${cbargs[@]}" --json $OUT/cb_pinned.jsonl
  taskset -c 2 $raw "${sz[@]}" -n 50 --samples 20 -w 10 --json $OUT/raw_core.jsonl >/dev/null
  taskset -c 2 $cb "${cbargs[@]}" --json $OUT/cb_core.jsonl
done

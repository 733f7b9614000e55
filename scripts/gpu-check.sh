#!/usr/bin/env bash
# The one-command GPU check (issue 17): on a machine with an NVIDIA GPU, in one go, writing its
# results even when a step fails. Without a GPU it prints "no GPU: skipped" and exits 0.
#
# Usage: scripts/gpu-check.sh [--build-dir DIR] [--out DIR] [--quick] [--step-timeout S] [--dry-run]
#   --build-dir DIR  build there (default build-gpu); a carried build with collbench in it is
#                    reused as it is (configured with CUDA and NCCL: checked)
#   --out DIR        results folder (default results/gpu/<UTC date>)
#   --quick          smaller size sweeps and fewer iterations (a smoke test, about 3 minutes)
#   --step-timeout S a step still running after S seconds is killed and recorded as failed
#                    (default 600), so one hung step cannot use up a lent machine's time
#   --dry-run        no GPU needed: print each step's command and write the folder layout
#                    (README.md, steps.jsonl with status "dry-run") without running anything
#
# Steps, each logged to OUT/logs/STEP.log and recorded in OUT/steps.jsonl (status ok | failed |
# skipped, with the reason), so one failing step never stops the others:
#   env        driver, CUDA runtime, NCCL (header and library), GPU model; which tools are
#              missing (mpirun, nsys, cmake, nvcc) — one line each; without Open MPI every
#              collbench step is skipped with the reason, the rest still runs
#   build      scripts/build.sh with COLLBENCH_CUDA=ON COLLBENCH_NCCL=ON (or the carried build)
#   ctest      the gpu label (device kernels, every algorithm on device memory under mpirun -np 1, 2)
#   verify-*   collbench on device buffers, every op and algorithm, verified (-c 1):
#                np1 mpi   1 rank, --backend mpi (staged or CUDA-aware), without mpirun (Open MPI's
#                          singleton start, which still needs Open MPI installed: its orted)
#                np1 nccl  1 rank, --backend nccl: NCCL's library and every custom algorithm over
#                          the NCCL transport
#                np2 mpi   2 ranks under mpirun sharing the GPU(s) (ranks_per_gpu in the run record)
#                np2 registered  the shm algorithms with --buffers registered: the buffers in CUDA
#                          IPC peer memory, read by the peer in place (the MPI library entries run
#                          on host memory only)
#                np2 nccl  2 ranks when there are >= 2 GPUs; on one GPU NCCL refuses two ranks on
#                          one device, and the step checks collbench says so in one line (exit 2)
#   sweep      --backend nccl --algo library and the custom ring, 1 rank, device memory, size sweep
#   nccl-spawn --backend nccl without MPI: collbench --spawn N (one rank per GPU), Gloo's control plane
#   raw-nccl   bench/collbench_raw_nccl (a plain ncclAllReduce loop) against collbench at 1 rank,
#              same sizes and batch, launched alternately 3 times (raw-nccl.K, raw-nccl-collbench.K):
#              OUT/raw_vs_collbench.txt gives per size the medians, their launch ranges and the
#              verdict: within 3 %, within spread (ranges overlap: 1-8 MiB at 1 rank are ~5 us,
#              launch-bound, and move 20-40 % between launches on an H100), or not
#   kernels    bench_reduce_device: CUDA reduce kernels vs device memcpy (target >= 0.8 of memcpy's
#              moved bytes at 256 MiB, float32/bfloat16 sum)
#   nsys       when nsys exists: one profiled run, and `nsys stats` must show collbench's NVTX ranges
# Results: OUT/*.jsonl (collbench records, raw loop, kernel benchmark, steps), OUT/README.md with
# the device line and each step's outcome. Exit status: 0 when every step that ran passed, 1 when
# one failed, 2 for bad arguments.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."

build=build-gpu out="" quick=0 dry=0 step_timeout=600
while [[ $# -gt 0 ]]; do
  case $1 in
    -h | --help) usage_from_header; exit 0 ;;
    --build-dir) [[ $# -ge 2 ]] || die "--build-dir needs a folder"; build=$2; shift ;;
    --out) [[ $# -ge 2 ]] || die "--out needs a folder"; out=$2; shift ;;
    --quick) quick=1 ;;
    --step-timeout)
      [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || die "--step-timeout needs a whole number of seconds > 0"
      step_timeout=$2; shift ;;
    --dry-run) dry=1 ;;
    *) die "unknown argument '$1'; accepted: --build-dir DIR, --out DIR, --quick, --step-timeout S, --dry-run, --help" ;;
  esac
  shift
done

# A GPU is there when nvidia-smi lists one (or, without nvidia-smi, a /dev/nvidia0 node).
# GPU_CHECK_ASSUME_NO_GPU=1 (tests) pretends there is none.
have_gpu() {
  [[ ${GPU_CHECK_ASSUME_NO_GPU:-0} == 1 ]] && return 1
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi -L 2>/dev/null | grep -q '^GPU '
  else
    [[ -e /dev/nvidia0 ]]
  fi
}
if [[ $dry == 0 ]] && ! have_gpu; then
  say "no GPU: skipped"
  exit 0
fi

out=${out:-results/gpu/$(date -u +%Y-%m-%d)}
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)  # absolute: steps run tools that change directory (ctest)
steps=$out/steps.jsonl
: >"$steps"
failed=0
if [[ $quick == 1 ]]; then
  verify_sizes=(-b 8 -e 64K -f 64) sweep_sizes=(-b 1K -e 16M -f 16) raw_sizes=(-b 1M -e 16M -f 4) iters=10
else
  verify_sizes=(-b 8 -e 4M -f 32) sweep_sizes=(-b 1K -e 1G -f 4) raw_sizes=(-b 1M -e 256M -f 4) iters=50
fi
cb=$build/collbench
launcher=$(command -v mpirun || true)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

json_str() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g' | tr '\n' ' ')"; }
record() {  # record NAME STATUS SECONDS DETAIL
  printf '{"type":"step","step":%s,"status":%s,"seconds":%s,"detail":%s}\n' \
    "$(json_str "$1")" "$(json_str "$2")" "$3" "$(json_str "$4")" >>"$steps"
  say "$1: $2${4:+ ($4)}"
}
skip() { record "$1" skipped 0 "$2"; }
# cb_step NAME CMD...: a step that runs collbench. Even at 1 rank without a launcher, Open
# MPI's MPI_Init (singleton) forks its orted daemon: without Open MPI installed it cannot start.
cb_step() {
  if [[ -z $launcher && $dry == 0 ]]; then
    skip "$1" "no Open MPI (mpirun/orted): collbench's MPI_Init needs it even at 1 rank"
  else
    step "$@"
  fi
}
# step NAME CMD...: runs CMD with its output in logs/NAME.log; a failure is recorded, not fatal.
# A program is killed after --step-timeout seconds (the shell functions below bound theirs).
bounded() { timeout --kill-after=10 "$step_timeout" "$@"; }
step() {
  local name=$1 t0 rc=0
  shift
  if [[ $dry == 1 ]]; then
    printf '%q ' "$@" >"$out/logs/$name.log"
    record "$name" dry-run 0 "$(printf '%q ' "$@")"
    return 0
  fi
  t0=$(now)
  if [[ $(type -t "$1") == function ]]; then
    "$@" >"$out/logs/$name.log" 2>&1 || rc=$?
  else
    bounded "$@" >"$out/logs/$name.log" 2>&1 || rc=$?
  fi
  [[ $rc != 124 && $rc != 137 ]] || echo "killed after --step-timeout $step_timeout s" >>"$out/logs/$name.log"
  if [[ $rc == 0 ]]; then
    record "$name" ok "$(elapsed "$t0")" ""
  else
    failed=1
    # The last error line, else the last line that says something (mpirun ends its messages
    # with a row of dashes and an exit code).
    local why
    [[ $rc != 124 && $rc != 137 ]] || why="killed after --step-timeout $step_timeout s"
    [[ -n ${why:-} ]] || why=$(grep -i 'error' "$out/logs/$name.log" | tail -n 1 || true)
    [[ -n $why ]] || why=$(grep -v '^[-[:space:]]*$' "$out/logs/$name.log" | tail -n 1 || true)
    record "$name" failed "$(elapsed "$t0")" "exit $rc: $why"
  fi
  return 0
}

# Commands of steps (called through step, hence the shellcheck note).
# shellcheck disable=SC2317
refuse() {  # refuse CMD...: CMD must exit 2 with "needs one GPU per rank" in its one error line
  local rc=0 log
  log=$(bounded "$@" 2>&1) || rc=$?
  echo "$log"
  [[ $rc != 124 && $rc != 137 ]] || return "$rc"
  [[ $rc == 2 ]] && grep -q 'needs one GPU per rank' <<<"$log"
}
# shellcheck disable=SC2317
check_nvtx() {  # the report is nvtx_sum in recent nsys, nvtxsum before 2023
  { bounded nsys stats --report nvtx_sum --format csv "$out/profile.nsys-rep" 2>/dev/null ||
    bounded nsys stats --report nvtxsum --format csv "$out/profile.nsys-rep"; } | tee "$out/nvtx_ranges.csv" |
    grep -q 'allreduce/library'
}

# ---- env: what this machine has ----------------------------------------------------------
env_file=$out/environment.txt
{
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  if command -v nvidia-smi >/dev/null 2>&1; then
    echo "gpus: $(nvidia-smi --query-gpu=index,name,memory.total,uuid --format=csv,noheader 2>/dev/null | paste -sd ';')"
    echo "driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)"
  else
    echo "gpus: unknown (no nvidia-smi)"
  fi
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  [[ -x $nvcc ]] && echo "cuda_toolkit: $("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
  hdr=/usr/local/cuda/include/nccl.h
  if [[ -f $hdr ]]; then
    echo "nccl_header: $(awk '/^#define NCCL_(MAJOR|MINOR|PATCH) /{v = v (v ? "." : "") $3} END {print v}' "$hdr")"
  else  # a carried build was compiled elsewhere: its header is not here (the records name the runtime library)
    echo "nccl_header: none here ($hdr)"
  fi
  echo "cores: $(nproc)"
} >"$env_file" 2>&1 || true
missing=()
for tool in mpirun nsys cmake nvcc; do
  if ! command -v "$tool" >/dev/null 2>&1 && ! [[ $tool == nvcc && -x /usr/local/cuda/bin/nvcc ]]; then
    missing+=("$tool")
    case $tool in
      mpirun) say "missing: mpirun (Open MPI) — every collbench step is skipped (a 1-rank run starts Open MPI's orted too); kernels and the raw NCCL loop still run" ;;
      nsys) say "missing: nsys — the NVTX profile step is skipped" ;;
      cmake) say "missing: cmake — only a carried build (--build-dir) can be used" ;;
      nvcc) say "missing: nvcc — only a carried build (--build-dir) can be used" ;;
    esac
    echo "missing: $tool" >>"$env_file"
  fi
done
record env ok 0 "$(grep -E '^(gpus|driver|cuda_toolkit|nccl_header):' "$env_file" | paste -sd ';')"

# ---- build -------------------------------------------------------------------------------
if [[ -x $cb && -f $build/CMakeCache.txt ]]; then
  if grep -q '^COLLBENCH_HAVE_NCCL:INTERNAL=TRUE\|NCCL=TRUE' "$build"/CMakeCache.txt "$build.configure.log" 2>/dev/null ||
    [[ -x $build/bench/collbench_raw_nccl ]]; then
    record build ok 0 "carried build $build (CUDA and NCCL)"
  else
    record build ok 0 "carried build $build (NCCL not confirmed)"
  fi
elif command -v cmake >/dev/null 2>&1; then
  step build env BUILD_DIR="$build" CUDA_ARCHS="${CUDA_ARCHS:-90}" scripts/build.sh -DCOLLBENCH_CUDA=ON -DCOLLBENCH_NCCL=ON
else
  failed=1
  record build failed 0 "no cmake and no carried build in $build"
fi

# ---- ctest: the gpu label ------------------------------------------------------------------
if [[ -f $build/CTestTestfile.cmake || $dry == 1 ]]; then
  step ctest ctest --test-dir "$build" -L gpu --output-on-failure --output-junit "$out/ctest-gpu.xml"
  # ctest counts a skipped test as passed: name them (only those needing two GPUs may skip).
  skipped=$(grep -E '^[[:space:]]+[0-9]+ - .*\(Skipped\)' "$out/logs/ctest.log" 2>/dev/null | awk '{print $3}' | paste -sd ' ' || true)
  [[ -z $skipped ]] || record ctest-skipped skipped 0 "$skipped"
else
  skip ctest "no build"
fi

# ---- verify: every op and algorithm on device buffers -------------------------------------
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
verify=(--op all --algo all "${verify_sizes[@]}" -n 3 -w 1 -c 1 --dtype "float32,bfloat16" --quiet)
cb_step verify-np1-mpi "$cb" --device cuda --backend mpi "${verify[@]}" --json "$out/verify.jsonl"
cb_step verify-np1-nccl "$cb" --device cuda --backend nccl "${verify[@]}" --json "$out/verify.jsonl"
if [[ -n $launcher || $dry == 1 ]]; then
  step verify-np2-mpi "${launcher:-mpirun}" -np 2 "$cb" --device cuda --backend mpi "${verify[@]}" --json "$out/verify.jsonl"
  # The zero-copy algorithms read the peer's device buffers in place (CUDA IPC peer memory).
  step verify-np2-registered "${launcher:-mpirun}" -np 2 "$cb" --device cuda --backend mpi --buffers registered \
    --op allreduce,reduce_scatter,allgather,broadcast,reduce --algo shm "${verify_sizes[@]}" -n 3 -w 1 -c 1 \
    --dtype float32 --quiet --json "$out/verify.jsonl"
  if [[ ${gpus:-0} -ge 2 ]]; then
    step verify-np2-nccl "${launcher:-mpirun}" -np 2 "$cb" --device cuda --backend nccl "${verify[@]}" --json "$out/verify.jsonl"
  else
    # One GPU: NCCL refuses two ranks on it; collbench must say so in one line and exit 2.
    step verify-np2-nccl-refused refuse "${launcher:-mpirun}" -np 2 "$cb" --device cuda --backend nccl --op allreduce \
      --algo library -b 8 -e 8 --quiet
  fi
else
  skip verify-np2-mpi "no mpirun"
  skip verify-np2-registered "no mpirun"
  skip verify-np2-nccl "no mpirun"
fi

# ---- sweep: NCCL's library and the custom ring on device memory ----------------------------
cb_step sweep "$cb" --device cuda --backend nccl --op allreduce --algo library,ring "${sweep_sizes[@]}" --batch \
  -n "$iters" -w 5 --min-time 0.2 --max-iters 2000 -c 1 --quiet --json "$out/sweep.jsonl"

# ---- nccl-spawn: NCCL without MPI: --spawn starts the ranks (one per GPU), they meet through
# rank 0's rendezvous, Gloo carries the harness's control and NCCL's unique id (docs/launching.md)
step nccl-spawn "$cb" --device cuda --backend nccl --spawn "$((gpus > 0 ? gpus : 1))" --op allreduce,broadcast \
  --algo library,ring -b 8 -e 64M -f 8 -n 5 -w 1 -c 1 --quiet --json "$out/nccl_spawn.jsonl"

# ---- raw-nccl: a plain ncclAllReduce loop vs collbench at 1 rank ---------------------------
raw=$build/bench/collbench_raw_nccl
if [[ -x $raw || $dry == 1 ]]; then
  for k in 1 2 3; do  # A B A B A B: one launch of either tool is not a figure
    step "raw-nccl.$k" "$raw" "${raw_sizes[@]}" -n "$iters" --samples 20 -w 10 --json "$out/raw_nccl.jsonl"
    cb_step "raw-nccl-collbench.$k" "$cb" --device cuda --backend nccl --op allreduce --algo library "${raw_sizes[@]}" \
      --batch -n "$iters" -w 10 --min-time 0.5 --max-iters $((iters * 20)) -c 0 --quiet --json "$out/raw_nccl_collbench.jsonl"
  done
  cb_step raw-compare /usr/bin/env python3 scripts/gpu_compare.py "$out/raw_nccl.jsonl" "$out/raw_nccl_collbench.jsonl" \
    --out "$out/raw_vs_collbench.txt"
else
  skip raw-nccl "no $raw (built only with NCCL)"
fi

# ---- kernels: CUDA reduce kernels vs device memcpy ----------------------------------------
kb=$build/bench/bench_reduce_device
if [[ -x $kb || $dry == 1 ]]; then
  step kernels "$kb" --benchmark_out="$out/bench_reduce_device.json" --benchmark_out_format=json \
    --benchmark_min_time="${BENCH_MIN_TIME:-0.5}"
  step kernels-jsonl /usr/bin/env python3 scripts/gpu_compare.py --benchmark "$out/bench_reduce_device.json" \
    --out "$out/bench_reduce_device.jsonl"
else
  skip kernels "no $kb (built only with CUDA)"
fi

# ---- nsys: NVTX ranges in a profile --------------------------------------------------------
if command -v nsys >/dev/null 2>&1 || [[ $dry == 1 ]]; then
  cb_step nsys-profile nsys profile --trace=cuda,nvtx --force-overwrite=true -o "$out/profile" \
    "$cb" --device cuda --backend nccl --op allreduce --algo library,ring -b 1M -e 1M -n 5 -w 1 --quiet
  cb_step nsys-nvtx check_nvtx
else
  skip nsys "no nsys on this machine"
fi

# ---- README ----------------------------------------------------------------------------------
device_line=$(grep '^gpus:' "$env_file" | cut -d' ' -f2- || true)
{
  echo "# GPU check, $(date -u +%Y-%m-%d)"
  echo
  echo "Device: ${device_line:-unknown}; driver $(grep '^driver:' "$env_file" | cut -d' ' -f2- || true);" \
    "CUDA toolkit $(grep '^cuda_toolkit:' "$env_file" | cut -d' ' -f2- || true);" \
    "NCCL header $(grep '^nccl_header:' "$env_file" | cut -d' ' -f2- || true)" \
    "(the run records in verify.jsonl carry the runtime, driver and library versions)."
  [[ $dry == 1 ]] && echo && echo "**Dry run**: nothing was executed; the steps below are the commands."
  echo
  echo "Made by \`scripts/gpu-check.sh$([[ $quick == 1 ]] && echo ' --quick')\` (see the project README, GPU check)."
  echo "Missing tools: ${missing[*]:-none}."
  echo
  echo "| step | status | seconds | detail |"
  echo "|---|---|---|---|"
  /usr/bin/env python3 -c '
import json, sys
for line in open(sys.argv[1]):
    s = json.loads(line)
    print("| {} | {} | {} | {} |".format(s["step"], s["status"], s["seconds"], s["detail"].replace("|", "/")))' "$steps"
  [[ -f $out/raw_vs_collbench.txt ]] && echo && echo '```' && cat "$out/raw_vs_collbench.txt" && echo '```'
  echo
  echo "Files: environment.txt, steps.jsonl, verify.jsonl, sweep.jsonl, raw_nccl*.jsonl,"
  echo "bench_reduce_device.json(l), ctest-gpu.xml, logs/ (one per step), profile.nsys-rep (when nsys exists)."
} >"$out/README.md"
say "results in $out (README.md)"
exit "$failed"

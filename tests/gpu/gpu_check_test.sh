#!/usr/bin/env bash
# scripts/gpu-check.sh without a GPU (ctest unit.gpu_check_script): the one "no GPU: skipped"
# line with exit 0, bad arguments refused in one line with exit 2, and --dry-run writing the
# results layout (README.md with the device line and every step, steps.jsonl, a log per step).
set -euo pipefail
script=$1
work=$2
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
rm -rf "$work"
mkdir -p "$work"

out=$(GPU_CHECK_ASSUME_NO_GPU=1 "$script" 2>&1) || fail "no-GPU run exited $?"
[[ $out == "gpu-check.sh: no GPU: skipped" ]] || fail "no-GPU output is not the one line: '$out'"

rc=0
err=$("$script" --bogus 2>&1) || rc=$?
[[ $rc == 2 ]] || fail "bad argument exited $rc, not 2"
[[ $(wc -l <<<"$err") == 1 && $err == *"unknown argument '--bogus'"* ]] || fail "bad argument message: '$err'"
rc=0
"$script" --out >/dev/null 2>&1 || rc=$?
[[ $rc == 2 ]] || fail "--out without a folder exited $rc, not 2"

GPU_CHECK_ASSUME_NO_GPU=1 "$script" --dry-run --quick --out "$work/dry" --build-dir "$work/nobuild" >"$work/dry.out" 2>&1 ||
  fail "dry run exited $?: $(cat "$work/dry.out")"
for f in README.md steps.jsonl environment.txt logs/verify-np1-nccl.log logs/sweep.log logs/raw-nccl.3.log logs/raw-nccl-collbench.3.log; do
  [[ -s $work/dry/$f ]] || fail "dry run did not write $f"
done
grep -q '^Device: ' "$work/dry/README.md" || fail "README has no device line"
grep -q '^\*\*Dry run\*\*' "$work/dry/README.md" || fail "README does not say dry run"
for s in env build ctest verify-np1-mpi verify-np1-nccl verify-np2-mpi verify-np2-registered sweep raw-nccl.1 raw-nccl-collbench.1 raw-nccl.3 raw-compare kernels nsys-profile; do
  grep -q "\"step\":\"$s\"" "$work/dry/steps.jsonl" || fail "steps.jsonl lacks step $s"
done
/usr/bin/python3 -c 'import json, sys; [json.loads(l) for l in open(sys.argv[1])]' "$work/dry/steps.jsonl" ||
  fail "steps.jsonl is not JSON Lines"
grep -q -- '--quick\|-e 64K' "$work/dry/logs/verify-np1-mpi.log" || fail "--quick did not shrink the verify sweep"
grep -q -- '--backend nccl' "$work/dry/logs/verify-np1-nccl.log" || fail "no NCCL verify step"
# A machine that looks like it has a GPU (a fake nvidia-smi) but where everything fails: every
# step still runs and is recorded with its reason, the README is written, and the exit is 1.
mkdir -p "$work/bin" "$work/fakebuild"
printf '#!/bin/sh\ncase "$*" in *-L*) echo "GPU 0: Fake GPU (UUID: GPU-0)" ;; *driver*) echo 1.0 ;; *) echo "0, Fake GPU" ;; esac\n' \
  >"$work/bin/nvidia-smi"
printf '#!/bin/sh\necho "collbench: error: planted failure" >&2\nexit 2\n' >"$work/fakebuild/collbench"
chmod +x "$work/bin/nvidia-smi" "$work/fakebuild/collbench"
touch "$work/fakebuild/CMakeCache.txt"
rc=0
PATH=$work/bin:$PATH "$script" --quick --build-dir "$work/fakebuild" --out "$work/fake" >"$work/fake.out" 2>&1 || rc=$?
[[ $rc == 1 ]] || fail "a run whose steps fail exited $rc, not 1: $(cat "$work/fake.out")"
grep -q '"step":"verify-np1-nccl","status":"failed".*planted failure' "$work/fake/steps.jsonl" ||
  fail "a failed step is not recorded with its error line: $(cat "$work/fake/steps.jsonl")"
grep -q '"step":"ctest","status":"skipped"' "$work/fake/steps.jsonl" || fail "ctest without a build not skipped"
grep -q '"step":"kernels","status":"skipped"' "$work/fake/steps.jsonl" || fail "missing kernel benchmark not skipped"
grep -q '^Device: 0, Fake GPU' "$work/fake/README.md" || fail "README device line: $(head -3 "$work/fake/README.md")"
grep -q '| sweep | failed |' "$work/fake/README.md" || fail "README lacks the failed sweep"

# A hung step is killed after --step-timeout and recorded as failed; the steps after it still run.
mkdir -p "$work/hangbuild"
printf '#!/bin/sh\nexec sleep 60\n' >"$work/hangbuild/collbench"
chmod +x "$work/hangbuild/collbench"
touch "$work/hangbuild/CMakeCache.txt"
rc=0
t0=$SECONDS
PATH=$work/bin:$PATH "$script" --quick --step-timeout 1 --build-dir "$work/hangbuild" --out "$work/hang" >"$work/hang.out" 2>&1 || rc=$?
[[ $rc == 1 ]] || fail "a run whose steps hang exited $rc, not 1: $(cat "$work/hang.out")"
((SECONDS - t0 < 45)) || fail "--step-timeout 1 did not bound the hung steps ($((SECONDS - t0)) s)"
grep -q '"step":"verify-np1-nccl","status":"failed".*killed after --step-timeout 1 s' "$work/hang/steps.jsonl" ||
  fail "a killed step is not recorded as such: $(cat "$work/hang/steps.jsonl")"
grep -q '"step":"sweep","status":"failed"' "$work/hang/steps.jsonl" || fail "the steps after a hung one did not run"
rc=0
"$script" --step-timeout 0 >/dev/null 2>&1 || rc=$?
[[ $rc == 2 ]] || fail "--step-timeout 0 exited $rc, not 2"

# gpu_compare.py on made-up records: 2 % over the raw loop is within 3 %, 5 % is not; sizes
# under 1 MiB are not judged; the kernel verdict reads of_memcpy at 256 MiB.
compare=$(dirname "$script")/gpu_compare.py
printf '%s\n' '{"type":"raw","bytes":1024,"p50_us":10}' '{"type":"raw","bytes":1048576,"p50_us":100}' \
  '{"type":"raw","bytes":4194304,"p50_us":400}' >"$work/raw.jsonl"
printf '%s\n' '{"type":"run"}' '{"type":"result","algo":"library","bytes":1024,"time_us":{"p50":20}}' \
  '{"type":"result","algo":"library","bytes":1048576,"time_us":{"p50":102}}' \
  '{"type":"result","algo":"library","bytes":4194304,"time_us":{"p50":408}}' >"$work/cb_ok.jsonl"
/usr/bin/python3 "$compare" "$work/raw.jsonl" "$work/cb_ok.jsonl" --out "$work/cmp.txt" >/dev/null ||
  fail "2 % over raw judged not within 3 %: $(cat "$work/cmp.txt")"
grep -q '(not judged)' "$work/cmp.txt" || fail "a size under 1 MiB was judged"
sed 's/"p50":408/"p50":420/' "$work/cb_ok.jsonl" >"$work/cb_slow.jsonl"
rc=0
/usr/bin/python3 "$compare" "$work/raw.jsonl" "$work/cb_slow.jsonl" >"$work/cmp2.txt" || rc=$?
if [[ $rc != 1 ]] || ! grep -q 'NOT within' "$work/cmp2.txt"; then fail "5 % over raw not flagged (exit $rc)"; fi
[[ $(tail -1 "$work/cmp2.txt") == "NOT within at 4194304 B" ]] || fail "last line does not name the missed size: $(tail -1 "$work/cmp2.txt")"
# Three alternated launches each (the check's A B A B A B): medians 5.0 vs 5.5 us (10 % over)
# with overlapping launch ranges are "within spread"; ranges apart are not within.
printf '{"type":"raw","bytes":4194304,"p50_us":%s}\n' 5.0 4.8 6.6 >"$work/raw3.jsonl"
printf '{"type":"result","algo":"library","bytes":4194304,"time_us":{"p50":%s}}\n' 5.5 5.7 5.4 >"$work/cb3.jsonl"
/usr/bin/python3 "$compare" "$work/raw3.jsonl" "$work/cb3.jsonl" >"$work/cmp3.txt" ||
  fail "overlapping launch ranges judged not within: $(cat "$work/cmp3.txt")"
grep -q '5.000 (4.800-6.600) .* 5.500 (5.400-5.700) .* 1.100  within spread' "$work/cmp3.txt" ||
  fail "medians, ranges or verdict of alternated launches: $(cat "$work/cmp3.txt")"
printf '{"type":"result","algo":"library","bytes":4194304,"time_us":{"p50":%s}}\n' 6.9 7.0 7.2 >"$work/cb4.jsonl"
rc=0
/usr/bin/python3 "$compare" "$work/raw3.jsonl" "$work/cb4.jsonl" >"$work/cmp4.txt" || rc=$?
if [[ $rc != 1 ]] || ! grep -q 'NOT within' "$work/cmp4.txt"; then fail "separate launch ranges not flagged (exit $rc)"; fi
cat >"$work/bench.json" <<'JSON'
{"context": {"host_name": "h"}, "benchmarks": [
 {"name": "device_reduce/float32/sum/268435456/manual_time", "real_time": 1, "time_unit": "ms", "of_memcpy": 0.85},
 {"name": "device_reduce/bfloat16/sum/268435456/manual_time", "real_time": 1, "time_unit": "ms", "of_memcpy": 0.7}]}
JSON
rc=0
/usr/bin/python3 "$compare" --benchmark "$work/bench.json" --out "$work/bench.jsonl" >"$work/bench.txt" || rc=$?
[[ $rc == 1 ]] || fail "a kernel under 0.8 of memcpy not flagged (exit $rc)"
if ! grep -q 'float32 sum 256 MiB: 0.850 .* met' "$work/bench.txt" || ! grep -q 'bfloat16 .* NOT met' "$work/bench.txt"; then
  fail "kernel verdicts: $(cat "$work/bench.txt")"
fi
[[ $(grep -c '"bytes": 268435456' "$work/bench.jsonl") == 2 ]] || fail "benchmark JSON Lines: $(cat "$work/bench.jsonl")"
echo "gpu-check.sh: no-GPU line, bad arguments, dry-run layout, step timeout and gpu_compare.py OK"

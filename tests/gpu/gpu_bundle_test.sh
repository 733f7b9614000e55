#!/usr/bin/env bash
# scripts/gpu-bundle.sh (ctest unit.gpu_bundle_script): on a CUDA/NCCL build it packs the trimmed
# build and an Open MPI runtime that is closed under its shared libraries: every library an
# executable or plugin in the bundle needs is in the bundle or is one the GPU machine supplies
# (C/C++ runtime, CUDA driver, NCCL). Nothing from the build tree goes into the runtime (it would
# land on the GPU machine before the build and hide it). Exit 77 on a build without NCCL.
set -euo pipefail
script=$1 build=$2 work=$3
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
[[ -x $build/bench/collbench_raw_nccl ]] || { echo "skip: $build is not a CUDA/NCCL build"; exit 77; }
rm -rf "$work"
mkdir -p "$work/root" "$work/build"
rc=0
err=$("$script" --bogus 2>&1) || rc=$?
[[ $rc == 2 && $err == *"unknown argument '--bogus'"* ]] || fail "bad argument: exit $rc, '$err'"
"$script" --build-dir "$build" --out "$work/bundle" >"$work/out.txt" 2>&1 || fail "bundle: $(cat "$work/out.txt")"
for f in build.tar.gz runtime.tar.gz install.sh; do [[ -s $work/bundle/$f ]] || fail "no $f"; done
bash -n "$work/bundle/install.sh" || fail "install.sh is not valid bash"
tar -xzf "$work/bundle/runtime.tar.gz" -C "$work/root"
tar -xzf "$work/bundle/build.tar.gz" -C "$work/build"
for f in usr/bin/orted usr/bin/orterun usr/lib/x86_64-linux-gnu/libmpi.so.40 etc/openmpi/openmpi-mca-params.conf \
  usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_btl_vader.so usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_plm_isolated.so; do
  [[ -e $work/root/$f ]] || fail "runtime lacks $f"
done
for f in collbench bench/collbench_raw_nccl bench/bench_reduce_device tests/gpu/test_gpu_kernels CMakeCache.txt \
  tests/gpu/CTestTestfile.cmake; do
  [[ -e $work/build/$f ]] || fail "build lacks $f"
done
[[ -z $(find "$work/build" -name '*.o' -print -quit) ]] || fail "object files in the trimmed build"
[[ ! -e $work/root/${PWD#/} && ! -e $work/root/$(cd "$build" && pwd | cut -c2-) ]] || fail "the build tree is in the runtime"
# Closure: every NEEDED soname is in the bundle (runtime, or the build's own libraries) or supplied there.
supplied='^(libc|libm|libdl|libpthread|librt|libresolv|libutil|ld-linux-x86-64|libstdc\+\+|libgcc_s|libcuda|libnccl)\.so'
have=$( (find "$work/root" "$work/build" -name '*.so*' -printf '%f\n'; echo libcudart.so.13) | sort -u)
missing=$(find "$work/root/usr/bin" "$work/root/usr/lib" "$work/build" -type f | while read -r f; do
  file -b "$f" | grep -q ELF || continue
  objdump -p "$f" 2>/dev/null | awk '$1 == "NEEDED" {print $2}'
done | sort -u | grep -Ev "$supplied" | grep -vxF "$have" || true)
[[ -z $missing ]] || fail "needed but not in the bundle: $(echo $missing)"
echo "gpu-bundle.sh: bundle closed under its libraries ($(grep -o 'runtime.tar.gz [^ ]*' "$work/out.txt"))"

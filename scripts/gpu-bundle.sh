#!/usr/bin/env bash
# Packs what scripts/gpu-check.sh needs onto a GPU machine that has CUDA but neither Open MPI
# nor a package registry (a cloud GPU image): a CUDA/NCCL build made here, trimmed to what runs
# (executables, CTest files, CMakeCache.txt), and the Open MPI runtime it links, taken from this
# machine's Debian packages. NCCL and the CUDA driver are the GPU machine's own (libnccl.so.2 is
# 200+ MiB); GPU_CHECK_NCCL_DIR or a search finds NCCL there.
#
# Usage: scripts/gpu-bundle.sh [--build-dir DIR] [--out DIR]
#   --build-dir DIR  the CUDA/NCCL build (default build-gpu; make it with
#                    BUILD_DIR=build-gpu CUDA_ARCHS=90 scripts/build.sh)
#   --out DIR        where the bundle goes (default .gpu-bundle): DIR/build.tar.gz (the trimmed
#                    build), DIR/runtime.tar.gz (Open MPI, PMIx and the libraries the binaries
#                    need) and DIR/install.sh (run there, as root); about 15 MB in all
# On the GPU machine: DIR/install.sh unpacks runtime.tar.gz into / without replacing any file that
# is there already (cp -n: the machine's own libraries win), links mpirun/mpiexec, moves the build
# to the path it was built at (CTest files hold absolute paths) and prints the environment to
# source: `eval "$(.gpu-bundle/install.sh)"`, then scripts/gpu-check.sh --build-dir build-gpu.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."

build=build-gpu out=.gpu-bundle
while [[ $# -gt 0 ]]; do
  case $1 in
    -h | --help) usage_from_header; exit 0 ;;
    --build-dir) [[ $# -ge 2 ]] || die "--build-dir needs a folder"; build=$2; shift ;;
    --out) [[ $# -ge 2 ]] || die "--out needs a folder"; out=$2; shift ;;
    *) die "unknown argument '$1'; accepted: --build-dir DIR, --out DIR, --help" ;;
  esac
  shift
done
[[ -x $build/collbench && -f $build/CMakeCache.txt ]] || die "no build in $build (collbench, CMakeCache.txt)"
[[ -x $build/bench/collbench_raw_nccl ]] || die "$build is not a CUDA/NCCL build (no bench/collbench_raw_nccl)"
command -v mpirun >/dev/null || die "no Open MPI here to pack (scripts/deps.sh installs it)"

rm -rf "$out"
mkdir -p "$out/build"
trap 'rm -rf "$out/build"' EXIT
# The build, minus objects and static libraries; executables stripped (debug info is most of them).
(cd "$build" && find . -type f ! -name '*.o' ! -name '*.a' ! -name '*.d' ! -path '*/CMakeFiles/*' \
  ! -name '*.ninja*' ! -name '.ninja_*' -print0 | tar -cf - --null -T -) | tar -xf - -C "$out/build"
find "$out/build" -type f -perm -u+x -exec sh -c 'file -b "$1" | grep -q ELF && strip "$1"' _ {} \;
tar -czf "$out/build.tar.gz" -C "$out/build" .

# The runtime: Open MPI's and PMIx's trees (plugins, help texts, config), its programs, and every
# shared library that an executable or plugin resolves here, except the C runtime, the C++
# runtime and what CUDA supplies (the driver, NCCL) on the GPU machine.
files=(/usr/lib/x86_64-linux-gnu/openmpi/lib /usr/lib/x86_64-linux-gnu/pmix2 /usr/share/openmpi /etc/openmpi
       /usr/bin/orted /usr/bin/orterun /usr/bin/mpirun.openmpi /usr/bin/mpiexec.openmpi /usr/bin/ompi_info)
skip='^(libc|libm|libdl|libpthread|librt|libresolv|libutil|ld-linux-x86-64|libstdc\+\+|libgcc_s|libcuda|libnccl)\.so'
mapfile -t elves < <({ find "$out/build" -type f -perm -u+x; find /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/pmix2 -name '*.so*';
  echo /usr/bin/orted; echo /usr/bin/orterun; } | while read -r f; do file -b "$f" | grep -q ELF && echo "$f"; done)
mapfile -t libs < <(for f in "${elves[@]}"; do ldd "$f" 2>/dev/null; done |
  awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u)
for lib in "${libs[@]}"; do
  base=$(basename "$lib")
  [[ $base =~ $skip || $lib == "$PWD"/* ]] && continue  # the build's own libraries travel in build/
  real=$(readlink -f "$lib")
  # /lib is /usr/lib here (merged /usr): name both by their /usr path so one unpack fits both.
  files+=("$(readlink -f "$(dirname "$lib")")/$base" "$real")
done
printf '%s\n' "${files[@]}" | sort -u | tar -czf "$out/runtime.tar.gz" --files-from=- 2>/dev/null

cat >"$out/install.sh" <<EOF
#!/usr/bin/env bash
# Made by scripts/gpu-bundle.sh: unpack the Open MPI runtime without replacing what is there, put
# the build where its CTest files expect it, and print the environment (eval it).
set -euo pipefail
here=\$(cd "\$(dirname "\$0")" && pwd)
stage=\$(mktemp -d)
tar -xzf "\$here/runtime.tar.gz" -C "\$stage"
cp -an "\$stage/." / 2>/dev/null || cp -rn "\$stage/." /
rm -rf "\$stage"
for l in mpirun mpiexec; do [[ -e /usr/bin/\$l ]] || ln -s /usr/bin/\$l.openmpi /usr/bin/\$l; done
ldconfig
repo=\$(cd "\$here/.." && pwd)
rm -rf "\$repo/$build" && mkdir -p "\$repo/$build" && tar -xzf "\$here/build.tar.gz" -C "\$repo/$build"
built_at="$PWD"
if [[ \$repo != "\$built_at" && ! -e \$built_at ]]; then mkdir -p "\$(dirname "\$built_at")"; ln -s "\$repo" "\$built_at"; fi
nccl=\${GPU_CHECK_NCCL_DIR:-\$(dirname "\$(find /usr/local/cuda*/ /usr/lib /opt -name 'libnccl.so.2' 2>/dev/null | head -n 1)")}
cudart=\$(dirname "\$(find /usr/local/cuda*/ /usr/lib /opt -name 'libcudart.so.13' 2>/dev/null | head -n 1)")
path=\$(for d in "\$nccl" "\$cudart"; do [[ \$d == /* ]] && printf '%s:' "\$d"; done)
echo "export LD_LIBRARY_PATH=\${path%:}\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
# One machine: Open MPI's isolated launcher (its default, rsh, refuses to start without ssh).
echo "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_plm=isolated"
EOF
chmod +x "$out/install.sh"
say "bundle in $out: build.tar.gz $(du -sh "$out/build.tar.gz" | cut -f1), runtime.tar.gz $(du -sh "$out/runtime.tar.gz" | cut -f1) (${#libs[@]} libraries resolved)"

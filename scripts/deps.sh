#!/usr/bin/env bash
# Installs the Debian packages collbench needs, only those missing (< 1 s when all present).
#   scripts/deps.sh        everything: the build, every test suite and comparison (scripts/test.sh)
#   scripts/deps.sh main   what the main job needs (scripts/main.sh): the build of collbench, the
#                          local Slurm cluster, the report; not the test suites' second MPI,
#                          sanitizers, PyTorch, browser or package root
set -euo pipefail
main_pkgs=(cmake g++ make git pkg-config iproute2 util-linux procps ccache
           openmpi-bin libopenmpi-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libhwloc-dev libgloo-dev
           libgtest-dev libgmock-dev libbenchmark-dev
           slurm-wlm munge
           python3 python3-matplotlib python3-numpy python3-pandas python3-yaml)
# ... and the test suites: the second MPI, the sanitizer/fuzzer compiler, the analysis tests and
# the report's browser check, the package tests' root, PyTorch (its own Gloo, torchrun, DDP and
# torchvision's models: the comparisons and launch tests)
test_pkgs=(mpich libmpich-dev libucx-dev clang libclang-rt-14-dev
           python3-scipy python3-pytest python3-jsonschema python3-tabulate
           python3-venv python3-pip python3-setuptools python3-wheel
           chromium chromium-driver python3-selenium
           dpkg-dev mmdebstrap environment-modules
           python3-torch python3-torchvision)
case ${1:-all} in
  main) pkgs=("${main_pkgs[@]}") ;;
  all) pkgs=("${main_pkgs[@]}" "${test_pkgs[@]}") ;;
  *) echo "deps: error: '$1': accepted: main, or nothing (everything)" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

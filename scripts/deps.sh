#!/usr/bin/env bash
# Installs the Debian packages collbench needs, only those missing (< 1 s when all present).
set -euo pipefail
pkgs=(cmake g++ make git pkg-config iproute2 util-linux procps
      openmpi-bin libopenmpi-dev mpich libmpich-dev libucx-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
      libgtest-dev libgmock-dev libbenchmark-dev
      python3 python3-matplotlib python3-numpy python3-scipy python3-pytest python3-jsonschema python3-yaml
      chromium chromium-driver python3-selenium
      python3-pandas python3-tabulate python3-venv python3-pip python3-setuptools python3-wheel
      dpkg-dev mmdebstrap environment-modules ccache
      slurm-wlm munge clang libclang-rt-14-dev
      libhwloc-dev
      libgloo-dev python3-torch python3-torchvision)  # the gloo backend; PyTorch's own Gloo, torchrun, DDP and torchvision's models (the comparisons and launch tests)
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

# shellcheck shell=bash
# The one shell library of collbench's scripts (sourced, not executed): messages, --help from
# the script's header, timing, the testbed's namespaces. Scripts source it relative to
# themselves; the batch scripts (slurm/sweep.sh, slurm/analyze.sh) first find the checkout,
# since Slurm runs them as spooled copies.
#
# Messages carry the script's name, PROG (default: its file name; set PROG after sourcing to
# change it). Tests and users grep these prefixes ("sweep: 2x2: ..."). Lint: shellcheck -x -P SCRIPTDIR.

PROG=$(basename "$0")

# An installed tree (cmake --install, the .deb: P/share/collbench) has scripts/installed.sh,
# naming the folder of its programs (P/bin); a checkout has none and uses build/collbench.
COLLBENCH_INSTALLED_BINDIR=""
if [[ -f ${BASH_SOURCE[0]%/*}/installed.sh ]]; then
  # shellcheck source=/dev/null
  source "${BASH_SOURCE[0]%/*}/installed.sh"
  [[ $COLLBENCH_INSTALLED_BINDIR == /* ]] ||
    COLLBENCH_INSTALLED_BINDIR=$(cd "${BASH_SOURCE[0]%/*}/../$COLLBENCH_INSTALLED_BINDIR" 2>/dev/null && pwd) || true
fi

say() { echo "$PROG: $*"; }                                  # progress, on stdout
log() { [[ ${QUIET:-0} == 1 ]] || echo "$PROG: $*" >&2; }     # progress where stdout is data
warn() { echo "$PROG: warning: $*" >&2; }
# die MESSAGE: one line on stderr, exit 2 (usage or setup error; 1 stays free for "failed").
die() {
  echo "$PROG: error: $*" >&2
  exit 2
}

# usage_from_header: the running script's leading comment block, from line 2 to the first line
# that is not a comment, without '#SBATCH'/shellcheck lines: --help texts are written once, at
# the top of each script (the spooled copy Slurm runs has the same text).
usage_from_header() {
  awk 'NR == 1 { next }
       !/^#/ { exit }
       /^#SBATCH|^# shellcheck/ { next }
       { sub(/^# ?/, ""); if (started || $0 != "") { print; started = 1 } }' "$0"
}

# now: seconds since the epoch, with nanoseconds; elapsed T0 [FORMAT]: seconds since T0.
now() { date +%s.%N; }
elapsed() { awk -v a="$(now)" -v b="$1" -v f="${2:-%.1f}" 'BEGIN { printf f, a - b }'; }

# The emulated nodes' namespaces, named here once (slurm/testbed/nodes.sh creates them):
# the switch and one per node, cb-n1 ... (ip netns names are global to the machine).
TESTBED_SWITCH_NS=cb-switch
TESTBED_NODE_NS_PREFIX=cb-n
testbed_namespaces() {
  ip netns list 2>/dev/null |
    awk -v s="$TESTBED_SWITCH_NS" -v p="^${TESTBED_NODE_NS_PREFIX}[0-9]+\$" '$1 == s || $1 ~ p { print $1 }'
}
# busy_testbed_namespaces: those with processes in them (a cluster or test is using them).
busy_testbed_namespaces() {
  local ns
  for ns in $(testbed_namespaces); do
    [[ -n $(ip netns pids "$ns" 2>/dev/null) ]] && echo "$ns"
  done
  return 0
}

# split_build_dir "$@": the bench scripts' "[BUILD_DIR] [options...]" — BUILD_DIR is the first
# argument unless it starts with "-" (default: build); ARGS holds the rest.
split_build_dir() {
  BUILD_DIR=build
  ARGS=("$@")
  if [[ $# -gt 0 && ${1:0:1} != - ]]; then
    BUILD_DIR=$1
    ARGS=("${@:2}")
  fi
}

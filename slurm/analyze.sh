#!/usr/bin/env bash
#SBATCH --job-name=collbench-analyze
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --time=00:15:00
#SBATCH --output=collbench-analyze-%j.out
#
# Plots and report for a collbench job folder (results/<jobid>/ written by slurm/sweep.sh),
# as a follow-up job or by hand:
#
#   sbatch --dependency=afterany:<jobid> slurm/analyze.sh results/<jobid> [COLLPLOT-ARGS...]
#   slurm/analyze.sh results/<jobid> [COLLPLOT-ARGS...]
#
# Runs `analysis/collplot <jobdir> -o <jobdir>/plots COLLPLOT-ARGS` with Debian's
# /usr/bin/python3 (matplotlib; override with COLLBENCH_PYTHON). COLLBENCH_REPO names the
# checkout (or installed tree, P/share/collbench) when it cannot be found from the submit directory.
set -euo pipefail

# A spooled copy under sbatch, like slurm/sweep.sh: find the checkout the same way.
for REPO in "${COLLBENCH_REPO:-}" "$(dirname "${BASH_SOURCE[0]}")/.." \
  "$([[ -n ${SLURM_JOB_ID:-} ]] && scontrol show job "$SLURM_JOB_ID" 2>/dev/null |
    sed -n 's|^ *Command=\([^ ]*\)/slurm/[^/ ]*.*|\1|p' | head -n1)" \
  "${SLURM_SUBMIT_DIR:-}" "$PWD" ""; do
  [[ -n $REPO && -f $REPO/scripts/lib.sh && -f $REPO/analysis/collplot ]] && break
done
[[ -n $REPO ]] || { echo "analyze: error: cannot find the collbench checkout (analysis/collplot): set COLLBENCH_REPO" >&2; exit 2; }
REPO=$(cd "$REPO" && pwd)
source "$REPO/scripts/lib.sh"
PROG=analyze

main() {
  case ${1:-} in
    -h | --help) usage_from_header; exit 0 ;;
    "") die "usage: analyze.sh JOBDIR [COLLPLOT-ARGS...]" ;;
  esac
  local jobdir=$1
  shift
  [[ -d $jobdir ]] || die "no such job folder '$jobdir'"
  jobdir=$(cd "$jobdir" && pwd)
  [[ -s $jobdir/results.jsonl ]] || compgen -G "$jobdir/*.jsonl" >/dev/null || die "no *.jsonl results in $jobdir"
  local py=${COLLBENCH_PYTHON:-/usr/bin/python3}
  "$py" -c 'import matplotlib' 2>/dev/null || die "$py cannot import matplotlib (Debian: apt-get install python3-matplotlib; or set COLLBENCH_PYTHON)"
  say "$REPO/analysis/collplot $jobdir -o $jobdir/plots $*"
  MPLBACKEND=${MPLBACKEND:-Agg} "$py" "$REPO/analysis/collplot" "$jobdir" -o "$jobdir/plots" "$@"
  say "plots: $jobdir/plots/ (open report.html; summary.md for a text view)"
}

main "$@"

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
# checkout when it cannot be found from the submit directory.
set -euo pipefail

PROG=analyze
say() { echo "$PROG: $*"; }
die() {
  echo "$PROG: error: $*" >&2
  exit 2
}

is_repo() { [[ -n $1 && -f $1/analysis/collplot && -f $1/slurm/sweep.sh ]]; }
find_repo() {
  local c sub=""
  if [[ -n ${SLURM_JOB_ID:-} ]] && command -v scontrol >/dev/null; then
    # under sbatch this script is a copy in the spool folder; Command= is the original
    sub=$(scontrol show job "$SLURM_JOB_ID" 2>/dev/null | sed -n 's/^ *Command=\([^ ]*\).*/\1/p' | head -n1)
  fi
  for c in "${COLLBENCH_REPO:-}" "$(dirname "${BASH_SOURCE[0]}")/.." "${sub:+$(dirname "$sub")/..}" \
    "${SLURM_SUBMIT_DIR:-}" "$PWD"; do
    if is_repo "$c"; then
      (cd "$c" && pwd)
      return 0
    fi
  done
  return 1
}

main() {
  case ${1:-} in
    -h | --help) sed -n '8,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    "") die "usage: analyze.sh JOBDIR [COLLPLOT-ARGS...]" ;;
  esac
  local jobdir=$1
  shift
  [[ -d $jobdir ]] || die "no such job folder '$jobdir'"
  jobdir=$(cd "$jobdir" && pwd)
  [[ -s $jobdir/results.jsonl ]] || compgen -G "$jobdir/*.jsonl" >/dev/null || die "no *.jsonl results in $jobdir"
  local repo py=${COLLBENCH_PYTHON:-/usr/bin/python3}
  repo=$(find_repo) || die "cannot find the collbench checkout (analysis/collplot): set COLLBENCH_REPO"
  "$py" -c 'import matplotlib' 2>/dev/null || die "$py cannot import matplotlib (Debian: apt-get install python3-matplotlib; or set COLLBENCH_PYTHON)"
  say "$repo/analysis/collplot $jobdir -o $jobdir/plots $*"
  MPLBACKEND=${MPLBACKEND:-Agg} "$py" "$repo/analysis/collplot" "$jobdir" -o "$jobdir/plots" "$@"
  say "plots: $jobdir/plots/ (open report.html; summary.md for a text view)"
}

main "$@"

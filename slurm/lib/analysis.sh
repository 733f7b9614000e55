# shellcheck shell=bash disable=SC2034  # globals shared by the pieces of sweep.sh
# slurm/sweep.sh: plots at the end of the job, on the batch node, when it can (sourced). Its
# failure is a warning: the measurements are already safe in results.jsonl.

analyze() {
  local collplot="$REPO/analysis/collplot" py=${COLLBENCH_PYTHON:-/usr/bin/python3}
  if [[ $ANALYSIS == 0 ]]; then
    say "analysis skipped (--no-analysis)"
  elif [[ ! -s $OUT/results.jsonl ]]; then
    say "no results to analyse"
  elif [[ ! -f $collplot ]]; then
    say "note: analysis/collplot not found; analyse later with: sbatch --dependency=afterany:$JOB_ID slurm/analyze.sh $OUT"
  elif ! "$py" -c 'import matplotlib' 2>/dev/null; then
    say "note: $py has no matplotlib here; analyse elsewhere: sbatch --dependency=afterany:$JOB_ID slurm/analyze.sh $OUT  (or: analysis/collplot $OUT -o $OUT/plots)"
  else
    say "analysis: $collplot $OUT -o $OUT/plots"
    if MPLBACKEND=${MPLBACKEND:-Agg} "$py" "$collplot" "$OUT" -o "$OUT/plots" >"$OUT/plots.log" 2>&1; then
      say "plots: $OUT/plots/ (report.html, summary.md)"
    else
      warn "analysis failed (see $OUT/plots.log); the measurements are in $OUT/results.jsonl"
      tail -n 5 "$OUT/plots.log" | sed "s/^/$PROG:   | /" >&2
    fi
  fi
}

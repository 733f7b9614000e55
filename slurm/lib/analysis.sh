# shellcheck shell=bash disable=SC2034  # globals shared by the pieces of sweep.sh
# slurm/sweep.sh: plots at the end of the job, on the batch node, when it can, and with --tune
# the tuning file (sourced). A failure of either is a warning: the measurements are already safe
# in results.jsonl, and the job's exit status does not change.

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

# make_tuning: with --tune (COLLBENCH_TUNE=1), analysis/colltune on the job's results.jsonl ->
# <jobdir>/tuning.yaml (its output in tune.log), then the collbench command that uses the file
# (colltune --command: the file read back, mpirun on its largest layout).
# Needs PyYAML, not matplotlib, so it runs with --no-analysis too. Ties by the medians' standard
# errors (colltune --tie median): the p95 rule let auto miss its targets on wide spreads
# (bench/README.md, "--algo auto").
make_tuning() {
  local colltune="$REPO/analysis/colltune" py=${COLLBENCH_PYTHON:-/usr/bin/python3} file="$OUT/tuning.yaml" use
  ((TUNE)) || return 0
  if [[ ! -s $OUT/results.jsonl ]]; then
    warn "no results to tune on: no tuning file"
  elif [[ ! -f $colltune ]]; then
    warn "analysis/colltune not found: no tuning file"
  elif ! "$py" -c 'import yaml' 2>/dev/null; then
    warn "$py has no PyYAML here: no tuning file; make it elsewhere: analysis/colltune $OUT/results.jsonl -o $file"
  else
    say "tuning: $colltune --tie median $OUT/results.jsonl -o $file"
    if "$py" "$colltune" --tie median "$OUT/results.jsonl" -o "$file" >"$OUT/tune.log" 2>&1 &&
      use=$("$py" "$colltune" --command "$file" --collbench "$BIN" 2>>"$OUT/tune.log"); then
      grep '^colltune: ' "$OUT/tune.log" | sed "s/^/$PROG: /" || true
      say "tuning file: $file (choices per size: $OUT/tune.log)"
      say "use it: $use"
    else
      warn "tuning failed (see $OUT/tune.log); the measurements are in $OUT/results.jsonl"
      tail -n 5 "$OUT/tune.log" | sed "s/^/$PROG:   | /" >&2
    fi
  fi
}

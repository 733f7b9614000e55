#!/usr/bin/env bash
#SBATCH --job-name=collbench
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --time=00:30:00
#SBATCH --output=collbench-%j.out
#SBATCH --no-kill
#SBATCH --signal=B:USR1@120
#
# collbench sweep as one Slurm batch job: one allocation, one job step per node layout.
#
#   sbatch [SBATCH-OPTS] slurm/sweep.sh [OPTIONS] [SWEEP.yaml] [-- EXTRA-COLLBENCH-ARGS...]
#
# SWEEP.yaml defaults to slurm/sweeps/default.yaml. Its `layouts:` (NxR = N nodes x R ranks per
# node, from `collbench --config SWEEP.yaml --print-layouts`) are run one after another, each
# as ONE step `srun --mpi=M -N N --ntasks-per-node=R ... collbench --config SWEEP.yaml
# --json <jobdir>/results.jsonl --links <jobdir>/links.json EXTRA...` (one link calibration
# for the whole job). M is the PMI of the MPI the binary was built against (`collbench --version`):
# pmix for Open MPI, pmi2 for MPICH (and MVAPICH, Intel MPI); none for a backend whose ranks meet
# without MPI (gloo, from `collbench --print-backend`). Layouts that do not fit the allocation
# are skipped with a message. A failed step is recorded and the sweep goes on; the job fails
# (exit 1) at the end if any step failed.
#
# Faults: --no-kill keeps the allocation when a node fails (Slurm's default cancels the whole
# job): the step on that node ends, later layouts that fit the remaining nodes still run.
# --signal=B:USR1@120 warns this script 120 s (up to 60 s more) before the time limit: it
# sends SIGTERM to the running step (collbench writes its end record at once and stops; the
# point in progress is dropped), runs no further layout and prints the command that resumes.
# Submitting the same command again resumes: layouts already ok are skipped, collbench --resume skips the points
# already in results.jsonl. Exit: 0 all ok, 1 a step failed or the sweep stopped at the
# warning, 2 usage/setup error, 128+N ended by signal N (scancel, the limit itself). A failed
# analysis or tuning step is a warning: it does not change the exit status.
#
# Tuning: with --tune, after the plots analysis/colltune turns results.jsonl into
# <jobdir>/tuning.yaml (per op, layout and size range, the algorithm to run) and the job prints
# the command that uses it (collbench --algo auto --tuning <jobdir>/tuning.yaml); not when a
# signal stopped the sweep. slurm/sweeps/tuning.yaml is a sweep made for it:
#   sbatch slurm/sweep.sh --tune slurm/sweeps/tuning.yaml
#
# Options:
#   --out DIR          job folder (default $COLLBENCH_OUT, else $COLLBENCH_RESULTS/<jobid>);
#                      an existing folder is resumed: layouts recorded ok are not run again
#   --layouts LIST     run only these layouts (e.g. 2x2,3x1) instead of the YAML's
#   --launcher L       srun or mpirun (the MPI's own launcher: Open MPI's mpirun or MPICH's
#                      mpiexec.hydra, for sites whose srun lacks the PMI plugin); default srun,
#                      except Open MPI on the local emulated cluster (mpirun: docs/local-cluster.md)
#   --no-analysis      do not run analysis/collplot at the end
#   --tune             then analysis/colltune --tie median -> <jobdir>/tuning.yaml (even with --no-analysis)
#   -h, --help         this text
#
# Environment:
#   COLLBENCH            the collbench binary (default <repo>/build/collbench; the installed
#                        P/share/collbench/slurm/sweep.sh runs P/bin/collbench)
#   COLLBENCH_RESULTS    parent of job folders (default <submit dir>/results)
#   COLLBENCH_OUT        job folder (like --out)
#   COLLBENCH_LAUNCHER   srun | mpirun (like --launcher)
#   COLLBENCH_SRUN_ARGS / COLLBENCH_MPIRUN_ARGS   extra launcher options (word-split)
#   COLLBENCH_STEP_TIMEOUT  seconds one step may take (0 = no limit, the default)
#   COLLBENCH_WRAP       a command put before collbench in every step (word-split), e.g.
#                        "$PWD/slurm/profile.sh --ranks 0 --out $PWD/prof --"
#   COLLBENCH_OVERSUBSCRIBE=1  more ranks than cores are intended (also implied by the local
#                        test cluster, slurm/cluster/): yield_when_idle, mpirun --oversubscribe
#   COLLBENCH_ANALYSIS=0 same as --no-analysis;  COLLBENCH_TUNE=1 same as --tune
#   COLLBENCH_REPO       the collbench checkout (or installed tree, P/share/collbench)
#
# Job folder: results.jsonl, steps.tsv, steps/<layout>.log, slurm-env.txt, nodelist.txt,
# job.txt (scontrol show job), jobs.tsv (one line per job that used the folder), sweep.yaml,
# plots/, tuning.yaml + tune.log (--tune). See docs/slurm.md. The pieces it is made of are
# in slurm/lib/.
set -euo pipefail

# Slurm runs this file as a spooled copy, so its own folder may say nothing about the checkout
# or installed tree (which holds the shell library, the build and the sweeps; installed:
# P/share/collbench, its binary in P/bin, see scripts/lib.sh): try COLLBENCH_REPO, this file's
# folder, the submitted path (scontrol's Command=), the submit directory, the current one.
for REPO in "${COLLBENCH_REPO:-}" "$(dirname "${BASH_SOURCE[0]}")/.." \
  "$([[ -n ${SLURM_JOB_ID:-} ]] && scontrol show job "$SLURM_JOB_ID" 2>/dev/null |
    sed -n 's|^ *Command=\([^ ]*\)/slurm/[^/ ]*.*|\1|p' | head -n1)" \
  "${SLURM_SUBMIT_DIR:-}" "$PWD" ""; do
  [[ -n $REPO && -f $REPO/scripts/lib.sh && -f $REPO/slurm/lib/steps.sh ]] && break
done
[[ -n $REPO ]] || { echo "sweep: error: cannot find the collbench checkout or installed tree: submit from it or set COLLBENCH_REPO" >&2; exit 2; }
REPO=$(cd "$REPO" && pwd)
# shellcheck source-path=SCRIPTDIR/..
{
  source "$REPO/scripts/lib.sh"           # say, warn, die, usage_from_header, now, elapsed
  source "$REPO/slurm/lib/options.sh"     # parse_args, find_binary, find_sweep, read_layouts
  source "$REPO/slurm/lib/allocation.sh"  # read_allocation, pick_hosts
  source "$REPO/slurm/lib/launcher.sh"    # setup_mpi_env, launch_cmd
  source "$REPO/slurm/testbed/lib.sh"     # testbed_mpi_env (the local cluster's emulated nodes)
  source "$REPO/slurm/lib/steps.sh"       # open_job_folder, run_layouts, print_summary
  source "$REPO/slurm/lib/analysis.sh"    # analyze, make_tuning
}
PROG=sweep

main() {
  catch_signals    # -> STOP (steps.sh)
  parse_args "$@"  # -> SWEEP_ARG, LAYOUTS_ARG, OUT_ARG, LAUNCHER, ANALYSIS, TUNE, EXTRA ...
  read_allocation  # -> JOB_ID, HOSTS, SLOTS
  find_binary      # -> BIN
  find_sweep       # -> SWEEP
  read_layouts     # -> LAYOUTS
  read_backend     # -> BACKEND, MPI_NAME, MPI_FAMILY, SRUN_MPI
  choose_launcher  # -> LAUNCHER (unless --launcher named one)
  open_job_folder  # -> OUT, CONFIG_KEY
  setup_mpi_env
  say "job $JOB_ID on ${HOSTS[*]} (tasks per node: ${SLOTS[*]}), launcher $LAUNCHER$LAUNCHER_WHY, backend $BACKEND$([[ $LAUNCHER == srun ]] && echo " (srun --mpi=${SRUN_MPI:-<MpiDefault>})")"
  say "MPI: ${MPI_NAME:-none}"
  say "collbench: $BIN"
  say "sweep: $SWEEP (config $CONFIG_KEY)${EXTRA[*]:+, extra args: ${EXTRA[*]}}"
  say "layouts: ${LAYOUTS[*]}"
  say "output: $OUT"

  run_layouts "${LAYOUTS[@]}" # one step each -> FAILED, CUT; STOP (a signal came)
  print_summary
  if [[ -n $STOP ]]; then
    say "analysis skipped: SIG$STOP came ($(stop_reason)); later: slurm/analyze.sh $OUT"
    if ((TUNE)); then
      say "tuning skipped: SIG$STOP came; later: analysis/colltune --tie median $OUT/results.jsonl -o $OUT/tuning.yaml"
    fi
  else
    analyze
    make_tuning
  fi
  say "results: $OUT/results.jsonl"
  if ((CUT + FAILED)); then
    say "to resume: $(resume_hint)"
  fi
  if [[ -n $STOP && $STOP != USR1 ]]; then
    say "stopped by SIG$STOP"
    exit "$((128 + STOP_SIG))"
  fi
  if ((CUT)); then
    say "stopped before the time limit; $FAILED step(s) stopped or failed"
    exit 1
  fi
  # the warning came after the last step: nothing was cut, the job ends as it would have
  if ((FAILED)); then
    say "$FAILED step(s) failed"
    exit 1
  fi
  say "done"
}

main "$@"

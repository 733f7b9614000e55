#!/usr/bin/env bash
# Rewrites tests/costs.cmake, the one table of what each ctest costs: its seconds in a
# fresh-clone CI run (BUILD/ctest-output.log, ctest's output kept by scripts/test.sh) give its
# COST (a fresh run starts the longest first) and TIMEOUT (5x, at least 120 s); its cores column
# (kept from the table as it is; "-" for a new test) gives PROCESSORS where set. Tests the run
# skipped are left out (a GPU test or one whose tool is missing keeps its own TIMEOUT); a row of
# a test the run did not pass (failed, or not run) is kept as it was.
# Run it after a fresh-clone `.ci/run` on the CI machine kind and commit the result.
#   scripts/test-costs.sh [BUILD_DIR]   (default build)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
case ${1:-} in -h | --help) usage_from_header; exit 0 ;; esac
cd "$(dirname "$0")/.."
build=${1:-build}
output=$build/ctest-output.log
table=tests/costs.cmake
[[ -f $output ]] || die "no $output: run scripts/test.sh (it keeps ctest's output there)"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
cores=$(awk '/^  [a-z]/ && NF == 3 { print $1, $3 }' "$table" 2>/dev/null || true)
rows=$(grep '^  [a-z]' "$table" 2>/dev/null || true)
head=$(sed -n '/^set(COLLBENCH_TEST_SECONDS/q; p' "$table" | sed '1,2d')
{
  echo "# Seconds each ctest took in a fresh-clone CI run ($(date -u +%F), $cpu, $(nproc) cores);"
  echo "# seconds written by scripts/test-costs.sh, cores kept as they are."
  echo "$head"
  echo "set(COLLBENCH_TEST_SECONDS"
  # "  3/89 Test  #3: unit.transport ......   Passed    4.92 sec" (Skipped and failed ones left out)
  awk -v cores="$cores" -v rows="$rows" '
    BEGIN { n = split(cores, c, /[ \n]/); for (i = 1; i < n; i += 2) core[c[i]] = c[i + 1]
            m = split(rows, r, /\n/); for (i = 1; i <= m; i++) { split(r[i], f, " "); old[f[1]] = r[i] } }
    / Test +#[0-9]+: / { for (i = 1; i <= NF; i++) if ($i ~ /^#[0-9]+:$/) name = $(i + 1); seen[name] = 1 }
    / Test +#[0-9]+: / && / Passed / {
      printf "  %-36s %4d %s\n", name, $(NF - 1) + 0.999, (name in core) ? core[name] : "-"
    }
    / Test +#[0-9]+: / && !/ Passed / && !/Skipped/ && (name in old) { print old[name] }
    END { for (t in old) if (!(t in seen)) print old[t] }' "$output" | sort
  echo ")"
} >"$table.new"
mv "$table.new" "$table"
say "$table: $(grep -c '^  [a-z]' "$table") tests"

#include "harness/plan/cli.hpp"

#include <CLI/CLI.hpp>

#include <vector>

#include "collectives/core/error.hpp"
#include "harness/exit_status.hpp"
#include "collectives/backends/backend.hpp"
#include "harness/plan/config.hpp"
#include "harness/plan/settings.hpp"

namespace collbench {
namespace {

constexpr const char* kDescription =
    "collbench: measure, verify and compare collective communication algorithms.\n"
    "Run under a launcher, e.g.  mpirun -np 4 collbench --op allreduce --algo all -b 8 -e 16M,\n"
    "or without one:             collbench --backend thread --ranks 4 --op allreduce";

// The footer of --help: kFooter, the exit statuses (harness/exit_status.hpp), kFooterEnd.
constexpr const char* kFooter = R"(
SIZE: bytes with an optional K, M, G or T suffix (powers of 1024; KiB, MB... also accepted), e.g. 8, 64K,
  16M, 1G, 1.5M. Sizes are nccl-tests' "size": for gather, allgather, scatter, reduce_scatter and alltoall
  the whole n-chunk array. Each size is rounded down to whole elements per rank; repeats are dropped.
Timing: per point, warm-up, then iterations; every rank starts each at a time agreed on rank 0's clock
  (offsets estimated per run; --sync barrier, and ops >= 100x the calibrated barrier: after a barrier)
  -> op -> stop; an iteration's time is the max over ranks of (end - start); iterations a rank entered
  late are left out (JSON "late"). The table
  shows its p50, algbw = bytes/time (GB = 1e9 B), busbw = algbw x factor (nccl-tests doc/PERFORMANCE.md).
  Results are then verified on exactly predictable data.
Beside it, each JSON result has the reference tools' conventions:
  osu_avg_us: OSU's, each rank's mean time per call (calls separated by a start), averaged over ranks;
  nccl_avg_us: nccl-tests', each rank's mean per call of a back-to-back batch, averaged over ranks.
Sweep file: --config FILE.yaml with name, layouts, defaults (any option by long name, e.g. max_bytes: 16M)
  and cases (op, algo, overrides); explicit options override it. Examples: slurm/sweeps/*.yaml.
Output: a table on stdout (rank 0); --json FILE appends JSON Lines, schema collbench/1 (results/README.md).
Dry run: --dry-run checks everything a run would check before measuring and prints the plan (blocks,
  sizes, memory per rank at the largest size); starts no rank, writes no file. Under a launcher it
  plans for the launcher's rank count; alone, for --ranks N (default: --backend thread's own
  default, else 1), all on one node.
)";

// After the generated "Exit status:" section (exit_status.hpp).
constexpr const char* kFooterEnd = R"(Efficiency (table "eff", JSON "efficiency"): the time the point's necessary data movement takes on the
  links it crosses (intra-/inter-node rates calibrated at the run's start, osu_bw at 1 MiB, fastest of 10; memory for the
  zero-copy shm algorithms) divided by its time (docs/measurement.md).
Test only: COLLBENCH_TEST_FAULT=skip_recv:rank=R:after=N (rank R drops its irecv number N),
  kill:rank=R:after_points=N or stop:rank=R:after_points=N (rank R SIGKILLs / SIGSTOPs itself after
  N points) plants a failure, and
  delay:algo=A:min_bytes=N:percent=P slows every call of A at >= N bytes by P % of its own time (docs/reliability.md);
  COLLBENCH_TEST_CLOCK=OFFSET_US:DRIFT_PPM skews rank r's clock by r x OFFSET_US and r x DRIFT_PPM.)";

// Raw option values; CLI11 writes into these, then they are applied in table order.
struct RawOptions {
  std::string op, algo, backend, device, json, config, tuning, expect;
  bool overwrite = false, resume = false, quiet = false, list = false, print_layouts = false, dry_run = false;
  int ranks = 0;
  long keep_samples = 1000;
  std::vector<std::string> setting_values;
  std::vector<CLI::Option*> setting_opts;
  CLI::Option *op_opt = nullptr, *algo_opt = nullptr, *backend_opt = nullptr, *device_opt = nullptr,
              *json_opt = nullptr, *tuning_opt = nullptr, *config_opt = nullptr, *quiet_opt = nullptr,
              *ranks_opt = nullptr, *expect_opt = nullptr;
};

void add_selection_options(CLI::App& app, RawOptions& o) {
  const std::string ops = "OP[,OP...]|all";
  o.op_opt = app.add_option("--op", o.op, "ops to run: " + op_names() + ", or all (every collective; default allreduce)")
                 ->type_name(ops)
                 ->group("Selection");
  o.algo_opt = app.add_option("--algo", o.algo,
                              "algorithms, comma-separated, or all (default; in a list too: all,auto); library = the "
                              "backend's own; library:ALGO = one of the library's own algorithms forced (Open MPI "
                              "coll/tuned: library:ring, library:recursive_doubling ...; NCCL: library:ring_ll128 ...), "
                              "library:all = all of them (not in all); han = Open MPI's coll/han (multi-node); auto = "
                              "what --tuning names for the size and layout; see --list")
                   ->type_name("ALGO[,ALGO...]|all")
                   ->group("Selection");
  o.tuning_opt = app.add_option("--tuning", o.tuning,
                                "tuning file for --algo auto (colltune's YAML): per op, layout and size range, the "
                                "algorithm; the nearest layout's entry if none matches, else the library")
                     ->type_name("FILE")
                     ->group("Selection");
  std::string backends, names;
  for (const BackendInfo& b : Backends::get().all()) {
    backends += "; " + b.name + ": " + b.summary;
    names += (names.empty() ? "" : "|") + b.name;
  }
  o.backend_opt = app.add_option("--backend", o.backend, "communication backend (default mpi)" + backends)
                      ->type_name(names)
                      ->group("Selection");
  o.device_opt = app.add_option("--device", o.device,
                                "where buffers live: cpu (default) or cuda (GPU = node-local rank % GPUs; mpi ranks "
                                "may share one, nccl needs one per rank)")
                     ->type_name("cpu|cuda")
                     ->group("Selection");
  app.add_flag("--list", o.list,
               "list every (op, algo, backend) with its description and requirements, then exit (--json: as JSON)")
      ->group("Selection");
  app.add_flag("--dry-run", o.dry_run,
               "check everything (options, sweep file, algorithms, world size, memory per rank at the largest size), "
               "print the plan and exit 0; starts no MPI and writes no file")
      ->group("Selection");
  o.ranks_opt =
      app.add_option("--ranks", o.ranks,
                     "--backend thread: run N ranks as threads of this process (default: one per online CPU, "
                     "at least 2); --dry-run: plan for N ranks on one node (default: the launcher's count, else 1); "
                     "under a launcher it must equal the launcher's count")
          ->type_name("N")
          ->group("Selection");
}

void add_output_options(CLI::App& app, RawOptions& o) {
  o.json_opt = app.add_option("--json", o.json,
                              "append one JSON Lines record per point to FILE; --list --json (no FILE): the list as "
                              "JSON, with each algorithm's traits")
                   ->type_name("FILE")
                   ->expected(0, 1)  // a FILE, except after --list
                   ->group("Output");
  app.add_flag("--overwrite", o.overwrite, "truncate the --json file instead of appending")->group("Output");
  app.add_flag("--resume", o.resume,
               "skip points the --json file already holds for this configuration (measured with wrong = 0, or "
               "skipped); measure the rest and append")
      ->group("Output");
  app.add_option("--keep-samples", o.keep_samples,
                 "write each result's per-sample times (samples_us, µs in measurement order) when it has at most N "
                 "samples; 0: never (default 1000)")
      ->type_name("N")
      ->check(CLI::NonNegativeNumber)
      ->group("Output");
  o.expect_opt = app.add_option("--expect", o.expect,
                                "acceptance gate: YAML of op, algo, layout, size (range) -> min_busbw_GBps or "
                                "max_time_us (p50), with a tolerance; every point below its reference is named and "
                                "the exit status is " +
                                    std::to_string(code(ExitStatus::below_expectation)) +
                                    " (results all written). Written by collcompare --write-expect")
                     ->type_name("FILE")
                     ->group("Output");
  o.quiet_opt = app.add_flag("--quiet", o.quiet, "no table on stdout (errors only)")->group("Output");
  o.config_opt = app.add_option("--config", o.config, "run the sweep described by a YAML file")
                     ->type_name("FILE.yaml")
                     ->group("Sweep file");
  app.add_flag("--print-layouts", o.print_layouts,
               "print the --config file's layouts (NODESxRANKS_PER_NODE), one per line, and exit")
      ->group("Sweep file");
}

const char* group_of(const SettingOption& s) {
  const std::string n = s.name;
  if (n.find("bytes") != std::string::npos || n == "step_factor" || n == "segment") return "Sizes";
  if (n == "check" || n == "dtype" || n == "redop" || n == "root" || n == "inplace") return "Data";
  if (n == "pairs") return "Selection";
  return "Timing";
}

void add_setting_options(CLI::App& app, RawOptions& o) {
  const auto opts = setting_options();
  o.setting_values.resize(opts.size());
  for (std::size_t i = 0; i < opts.size(); ++i) {
    const SettingOption& s = opts[i];
    const std::string names = (s.short_flag[0] ? std::string(s.short_flag) + "," : "") + long_flag(s);
    CLI::Option* opt;
    if (s.value_name[0] == '\0') {
      opt = app.add_flag(names, s.help);  // a switch: its presence (count) is the value
    } else {
      opt = app.add_option(names, o.setting_values[i], s.help)->type_name(s.value_name);
    }
    opt->group(group_of(s));
    o.setting_opts.push_back(opt);
  }
}

// Explicitly given settings, applied on top of whatever the file said.
void apply_explicit_settings(const RawOptions& o, Settings& s) {
  const auto opts = setting_options();
  for (std::size_t i = 0; i < opts.size(); ++i) {
    if (o.setting_opts[i]->count() == 0) continue;
    apply_setting(s, opts[i], opts[i].value_name[0] ? std::string_view(o.setting_values[i]) : std::string_view("1"));
  }
}

bool given(const CLI::Option* opt) { return opt->count() > 0; }

void check_step_options(const RawOptions& o) {
  const auto opts = setting_options();
  bool f = false, i = false;
  for (std::size_t k = 0; k < opts.size(); ++k) {
    if (std::string_view(opts[k].name) == "step_factor") f = given(o.setting_opts[k]);
    if (std::string_view(opts[k].name) == "step_bytes") i = given(o.setting_opts[k]);
  }
  if (f && i) throw UsageError("-f/--step-factor and -i/--step-bytes cannot be combined; accepted: one of them");
}

RunConfig resolve(const RawOptions& o, std::vector<std::string> argv) {
  RunConfig cfg;
  cfg.argv = std::move(argv);
  check_step_options(o);
  std::optional<SweepFile> file;
  if (given(o.config_opt)) {
    cfg.config_path = o.config;
    file = load_sweep_file(o.config);
    cfg.name = file->name;
    cfg.layouts = file->layouts;
    if (file->backend) cfg.backend = *file->backend;
    if (file->device) cfg.device = *file->device;
    if (file->json) cfg.json_path = file->json;
    if (file->tuning) cfg.tuning_path = file->tuning;
    if (file->quiet) cfg.quiet = *file->quiet;
  } else if (o.print_layouts) {
    throw UsageError("--print-layouts needs a sweep file; accepted: --config FILE.yaml --print-layouts");
  }
  if (given(o.backend_opt)) cfg.backend = o.backend;
  if (given(o.device_opt)) cfg.device = o.device;
  if (given(o.json_opt)) cfg.json_path = o.json;
  if (given(o.tuning_opt)) cfg.tuning_path = o.tuning;
  if (given(o.expect_opt)) cfg.expect = Expectations::load(o.expect);  // malformed: exit 2 before anything runs
  if (given(o.quiet_opt)) cfg.quiet = o.quiet;
  cfg.overwrite = o.overwrite;
  cfg.keep_samples = o.keep_samples;
  cfg.resume = o.resume;
  cfg.list = o.list;
  cfg.print_layouts = o.print_layouts;
  cfg.dry_run = o.dry_run;
  if (given(o.ranks_opt)) {
    const int most = cfg.dry_run ? (1 << 20) : 1024;  // threads of one process: a sane bound
    if (o.ranks < 1 || o.ranks > most)
      throw UsageError("--ranks " + std::to_string(o.ranks) + ": out of range; accepted: 1 to " + std::to_string(most));
    cfg.ranks = o.ranks;
  }
  Backends::get().check(cfg.backend, cfg.device);

  // Cases: the file's, unless --op replaces them with one case (on the file's defaults).
  if (file && !given(o.op_opt)) {
    cfg.cases = file->cases;
    if (cfg.cases.empty() && !cfg.list && !cfg.print_layouts)
      throw UsageError("--config " + o.config + ": no cases to run; accepted: a 'cases' list, or --op OP");
  } else {
    CaseSpec c;
    c.settings = file ? file->defaults : Settings{};
    if (given(o.op_opt)) c.ops = parse_ops(o.op);
    else c.ops = {Op::allreduce};
    c.origin = "command line";
    cfg.cases.push_back(std::move(c));
  }
  for (auto& c : cfg.cases) {
    if (given(o.algo_opt)) c.algos = parse_algos(o.algo);
    apply_explicit_settings(o, c.settings);
    try {
      validate_settings(c.settings);
    } catch (const UsageError& e) {
      throw UsageError(c.origin == "command line" ? std::string(e.what()) : c.origin + ": " + e.what());
    }
  }
  if (cfg.json_path && cfg.json_path->empty()) throw UsageError("--json: empty path; accepted: a writable file path");
  if (cfg.resume && !cfg.json_path) throw UsageError("--resume needs the results file; accepted: --resume --json FILE");
  if (cfg.resume && cfg.overwrite)
    throw UsageError("--resume and --overwrite cannot be combined; accepted: one of them");
  return cfg;
}

}  // namespace

CommandLine parse_command_line(int argc, const char* const* argv) {
  CLI::App app{kDescription, "collbench"};
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.get_formatter()->column_width(34);
  app.footer(std::string(kFooter) + exit_status_help() + kFooterEnd);
  RawOptions o;
  add_selection_options(app, o);
  add_setting_options(app, o);
  add_output_options(app, o);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return {{}, app.help()};
  } catch (const CLI::CallForAllHelp&) {
    return {{}, app.help()};
  } catch (const CLI::ParseError& e) {
    throw UsageError(std::string(e.what()) + "; accepted: the options listed by collbench --help");
  }
  if (o.list && given(o.json_opt)) {  // --list --json: the registry as JSON on stdout (app/main.cpp)
    if (!o.json.empty())
      throw UsageError("--list --json prints the list on stdout, not to '" + o.json + "'; accepted: --list --json");
    CommandLine cl;
    cl.config.list = cl.config.list_json = true;
    return cl;
  }
  return {resolve(o, std::vector<std::string>(argv, argv + argc)), std::nullopt};
}

}  // namespace collbench

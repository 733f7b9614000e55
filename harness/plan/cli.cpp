#include "harness/plan/cli.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <vector>

#include "collbench_version.hpp"

#include "collectives/core/error.hpp"
#include "harness/exit_status.hpp"
#include "collectives/backends/backend.hpp"
#include "harness/plan/config.hpp"
#include "harness/plan/help_text.hpp"
#include "harness/plan/muscle_memory.hpp"
#include "harness/plan/settings.hpp"

namespace collbench {
namespace {

constexpr std::size_t kHelpWidth = 100;  // every line of --help and --help-all fits in it
constexpr std::size_t kHelpIndent = 30;  // where an option's text starts

constexpr const char* kDescription =
    "collbench: measure, verify and compare collective communication algorithms.\n"
    "Usage: mpirun -np N collbench [OPTIONS]     or, without MPI: collbench --backend gloo --spawn N\n"
    "       torchrun --no_python --nproc_per_node N collbench --backend gloo   (or srun)\n"
    "  e.g. mpirun -np 4 collbench --op allreduce -b 8 -e 128M -f 2      (the library's own allreduce)\n"
    "       mpirun -np 4 collbench --op allreduce --algo ring,library --interleave\n";

// --help: the main options, each with a one-line text (--help-all gives every option in full).
struct Brief {
  const char* name;  // the option's long name, as CLI11 knows it ("--op"; "--help" for -h,--help)
  const char* text;
};
constexpr Brief kBrief[] = {
    {"--op", "allreduce (default), broadcast, reduce, gather, allgather, scatter, reduce_scatter, "
             "alltoall, all (every collective); pingpong"},
    {"--algo", "library (default: the backend's own, as nccl-tests), ring ... (--list), all"},
    {"--backend", "mpi (default), gloo (PyTorch's CPU library), nccl, thread (ranks as threads, no MPI)"},
    {"--spawn", "start N ranks on this host (gloo, nccl; no launcher, as mp.spawn); or torchrun, srun"},
    {"--device", "cpu (default) or cuda"},
    {"--ranks", "--backend thread: N ranks as threads; --dry-run: plan for N ranks"},
    {"--list", "list the algorithms and exit (with --op, --backend: theirs; --json)"},
    {"--dry-run", "check everything, print the plan (sizes, memory) and exit; runs nothing"},
    {"--min-bytes", "smallest size (default 8)"},
    {"--max-bytes", "largest size, included (default 16M)"},
    {"--step-factor", "size factor between points (default 2; 1: linear steps of -i)"},
    {"--step-bytes", "linear step instead (nccl-tests' -i; OSU's iterations are -n)"},
    {"--check", "verify the results after timing (default 1)"},
    {"--dtype", "element types, or all (default float32)"},
    {"--redop", "reductions: sum (default), prod, max, min, avg, or all"},
    {"--root", "root rank of rooted collectives (default 0)"},
    {"--inplace", "out of place (0, default), in place (1) or both"},
    {"--iters", "timed iterations per point (default 20)"},
    {"--warmup", "warm-up iterations per point (default 5)"},
    {"--batch", "time -n back-to-back calls as one sample (nccl-tests style)"},
    {"--interleave", "alternate the algorithms at each size: fair comparisons"},
    {"--timeout", "a wait longer than this ends the run naming the peer (default 60)"},
    {"--workload", "a training step's gradient sync instead of sizes (--model resnet50)"},
    {"--json", "append the results to FILE as JSON Lines (results/README.md)"},
    {"--resume", "skip the points the --json file already holds"},
    {"--expect", "acceptance gate: exit 5 naming every point below its reference"},
    {"--quiet", "no table on stdout"},
    {"--config", "run a sweep file (slurm/sweeps/*.yaml)"},
    {"--help", "this help"},
    {"--help-all", "every option, other tools' options, timing, exit statuses"},
    {"--version", "version, git commit, the MPI library and the backends built in"},
};

// The brief names kDefaultBackend as the default (one fact: checked where it is copied).
static_assert([] {
  for (const auto& b : kBrief)
    if (std::string_view(b.name) == "--backend") {
      const std::string_view text = b.text, name = kDefaultBackend;
      return text.starts_with(name) && text.substr(name.size()).starts_with(" (default)");
    }
  return false;
}());

constexpr const char* kBriefFooter = R"(
SIZE: bytes with K, M, G or T (powers of 1024): 8, 64K, 16M, 1G.
nccl-tests' -b -e -f -i -n -w -c -d -o -r -T and OSU's -m MIN:MAX, -x mean what they mean there;
  --help-all says what the other tools' options become. All options: docs/options.md.
)";

// The footer of --help-all: kFooter, the exit statuses (harness/exit_status.hpp), kFooterEnd,
// the other tools' options (muscle_memory.hpp). Wrapped at kHelpWidth.
constexpr const char* kFooter = R"(
SIZE: bytes with an optional K, M, G or T suffix (powers of 1024; KiB, MB... also accepted), e.g. 8, 64K, 16M, 1G, 1.5M. Sizes are nccl-tests' "size": for gather, allgather, scatter, reduce_scatter and alltoall the whole n-chunk array. Each size is rounded down to whole elements per rank; a size below one element per rank is raised to one (a 0-byte point only with -b 0); repeats are dropped.
Algorithms: no --algo measures the backend's own collective (library), as nccl-tests does; --backend thread has none, so there it measures every algorithm; pingpong measures its three methods (latency, bw, bibw); --workload ddp the library's allreduce. --algo all: every algorithm. Op and algorithm names: any case, with or without '_' (all_reduce, AllReduce, Ring), bcast; a near miss gets "did you mean".
Timing: per point, warm-up, then iterations; every rank starts each at a time agreed on rank 0's clock (offsets estimated per run; --sync barrier, and ops >= 100x the calibrated barrier: after a barrier) -> op -> stop; an iteration's time is the max over ranks of (end - start); iterations a rank entered late are left out (JSON "late"). The table shows its p50, algbw = bytes/time (GB = 1e9 B), busbw = algbw x factor (nccl-tests doc/PERFORMANCE.md). Results are then verified on exactly predictable data.
Beside it, each JSON result has the reference tools' conventions:
  osu_avg_us: OSU's, each rank's mean time per call (calls separated by a start), averaged over ranks;
  nccl_avg_us: nccl-tests', each rank's mean per call of a back-to-back batch, averaged over ranks.
Sweep file: --config FILE.yaml with name, layouts, defaults (any option by long name, e.g. max_bytes: 16M) and cases (op, algo, overrides); explicit options override it. Examples: slurm/sweeps/*.yaml.
Output: a table on stdout (rank 0); --json FILE appends JSON Lines, schema collbench/1 (results/README.md).
Dry run: --dry-run checks everything a run would check before measuring and prints the plan (blocks, sizes, memory per rank at the largest size); starts no rank, writes no file. Under a launcher it plans for the launcher's rank count; alone, for --ranks N (default: --backend thread's own default, else 1), all on one node.
)";

// After the generated "Exit status:" section (exit_status.hpp).
constexpr const char* kFooterEnd = R"(Efficiency (table "eff", JSON "efficiency"): the time the point's necessary data movement takes on the links it crosses (intra-/inter-node rates calibrated at the run's start, osu_bw at 1 MiB, fastest of 30, or reused from --links; memory for the zero-copy shm algorithms) divided by its time (docs/measurement.md). The table shows it only when the calibration was steady (p50 sample within 10 % of the fastest).
)";

const char* brief_of(const CLI::Option& opt) {
  for (const auto& b : kBrief)
    for (const auto& l : opt.get_lnames())
      if ("--" + l == b.name) return b.text;
  return nullptr;
}

// "  -b, --min-bytes SIZE": the option's names and value.
std::string option_head(const CLI::Option& opt) {
  std::string h = "  ";
  for (const auto& n : opt.get_snames()) h += "-" + n + ", ";
  for (const auto& n : opt.get_lnames()) h += "--" + n + ", ";
  h.resize(h.size() - 2);
  if (opt.get_type_size_max() > 0) {
    std::string value = opt.get_type_name();
    h += " " + value.substr(0, value.find(':'));  // CLI11 appends validators' names after ':'
  }
  return h;
}

// The options of `app` by group, in the order added: all of them with their full text, or
// (brief) the main ones with kBrief's.
std::string options_text(const CLI::App& app, bool brief) {
  std::vector<std::string> groups;
  for (const CLI::Option* opt : app.get_options())
    if (std::find(groups.begin(), groups.end(), opt->get_group()) == groups.end()) groups.push_back(opt->get_group());
  std::string out;
  for (const auto& g : groups) {
    std::string lines;
    for (const CLI::Option* opt : app.get_options()) {
      if (opt->get_group() != g) continue;
      const char* text = brief ? brief_of(*opt) : opt->get_description().c_str();
      if (text) lines += wrap_entry(option_head(*opt), text, kHelpIndent, kHelpWidth);
    }
    if (!lines.empty()) out += "\n" + g + ":\n" + lines;
  }
  return out;
}

std::string help_text(const CLI::App& app) { return kDescription + options_text(app, true) + kBriefFooter; }

std::string help_all_text(const CLI::App& app) {
  return kDescription + options_text(app, false) + wrap_text(kFooter, kHelpWidth) +
         wrap_text(exit_status_help(), kHelpWidth) + wrap_text(kFooterEnd, kHelpWidth) + "\n" +
         foreign_options_help(kHelpWidth);
}

CommandLine printed(std::string text) {
  CommandLine cl;
  cl.help = std::move(text);
  return cl;
}

std::string version_text() {
  std::string out = std::string("collbench ") + COLLBENCH_VERSION_STRING + " (git " + COLLBENCH_GIT_COMMIT + ")\n";
  std::string names;
  for (const BackendInfo& b : Backends::get().all()) {
    const bool here = !b.unavailable || b.unavailable(b.devices.front()).empty();
    names += (names.empty() ? "" : ", ") + b.name + (here ? "" : " (not available here)");
    if (b.library_version)
      if (const std::string v = b.library_version(); !v.empty()) out += b.name + ": " + v + "\n";
  }
  return out + "backends: " + names + "\n";
}

// Raw option values; CLI11 writes into these, then they are applied in table order.
struct RawOptions {
  std::string op, algo, backend, device, json, config, tuning, expect, links;
  bool overwrite = false, resume = false, quiet = false, list = false, print_layouts = false, print_backend = false,
       dry_run = false,
       version = false;
  int ranks = 0, spawn = 0;
  std::string launcher;
  long keep_samples = 1000;
  std::vector<std::string> setting_values;
  std::vector<CLI::Option*> setting_opts;
  CLI::Option *op_opt = nullptr, *algo_opt = nullptr, *backend_opt = nullptr, *device_opt = nullptr,
              *json_opt = nullptr, *tuning_opt = nullptr, *links_opt = nullptr, *config_opt = nullptr, *quiet_opt = nullptr,
              *ranks_opt = nullptr, *expect_opt = nullptr, *spawn_opt = nullptr, *launcher_opt = nullptr;
};

void add_selection_options(CLI::App& app, RawOptions& o) {
  const std::string ops = "OP[,OP...]|all";
  o.op_opt = app.add_option("--op", o.op,
                            "ops to run: " + op_names() +
                                ", or all (every collective; default allreduce); any case, with or without '_' "
                                "(all_reduce, AllReduce), bcast")
                 ->type_name(ops)
                 ->group("Selection");
  o.algo_opt = app.add_option("--algo", o.algo,
                              "algorithms, comma-separated (any case), or all (in a list too: all,auto); library = "
                              "the backend's own (the default, as nccl-tests; a backend without one, thread: all; "
                              "pingpong: all its methods); library:ALGO = one of the library's own algorithms forced (Open MPI "
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
  o.backend_opt = app.add_option("--backend", o.backend, std::string("communication backend (default ") + kDefaultBackend + ")" + backends)
                      ->type_name(names)
                      ->group("Selection");
  o.device_opt = app.add_option("--device", o.device,
                                "where buffers live: cpu (default) or cuda (GPU = node-local rank % GPUs; mpi ranks "
                                "may share one, nccl needs one per rank)")
                     ->type_name("cpu|cuda")
                     ->group("Selection");
  app.add_flag("--list", o.list,
               "list every (op, algo, backend) with its description and requirements, then exit; with --op "
               "and --backend, only theirs (--json: every entry, as JSON)")
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
  o.spawn_opt = app.add_option("--spawn", o.spawn,
                               "start N ranks as processes on this host, as PyTorch's mp.spawn (this process is rank 0 "
                               "and serves the rendezvous; --backend gloo or nccl); docs/launching.md")
                    ->type_name("N")
                    ->group("Selection");
  std::string boots;
  for (const auto& b : Backends::get().bootstraps()) boots += (boots.empty() ? "" : "|") + b.name;
  o.launcher_opt = app.add_option("--launcher", o.launcher,
                                  "how ranks start, when the environment would choose wrongly (default: the launcher "
                                  "that started this process: torchrun's, srun's or mpirun's variables; docs/launching.md)")
                       ->type_name(boots)
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
      ->group("Output");
  o.expect_opt = app.add_option("--expect", o.expect,
                                "acceptance gate: YAML of op, algo, layout, size (range) -> min_busbw_GBps or "
                                "max_time_us (p50), with a tolerance; every point below its reference is named and "
                                "the exit status is " +
                                    std::to_string(code(ExitStatus::below_expectation)) +
                                    " (results all written). Written by collcompare --write-expect")
                     ->type_name("FILE")
                     ->group("Output");
  o.links_opt = app.add_option("--links", o.links,
                                "reuse the link rates in FILE (the yardstick of eff) where it holds one for this "
                                "backend, device and the same hosts; calibrate the others and add them to FILE (created "
                                "if absent): the runs of one job then share one yardstick (slurm/sweep.sh does)")
                    ->type_name("FILE")
                    ->group("Output");
  o.quiet_opt = app.add_flag("--quiet", o.quiet, "no table on stdout (errors only)")->group("Output");
  o.config_opt = app.add_option("--config", o.config, "run the sweep described by a YAML file")
                     ->type_name("FILE.yaml")
                     ->group("Sweep file");
  app.add_flag("--print-layouts", o.print_layouts,
               "print the --config file's layouts (NODESxRANKS_PER_NODE), one per line, and exit")
      ->group("Sweep file");
  app.add_flag("--print-backend", o.print_backend,
               "print the run's backend and the launchers its ranks start under, in order of preference "
               "(e.g. \"gloo torchrun srun mpi spawn\"; slurm/sweep.sh reads it), and exit")
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
    // -f 1 is nccl-tests' "no factor": the linear steps of -i.
    if (std::string_view(opts[k].name) == "step_factor") f = given(o.setting_opts[k]) && o.setting_values[k] != "1";
    if (std::string_view(opts[k].name) == "step_bytes") i = given(o.setting_opts[k]);
  }
  if (f && i)
    throw UsageError("-f/--step-factor and -i/--step-bytes cannot be combined; accepted: one of them, or -f 1 -i SIZE");
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
  if (given(o.links_opt)) {
    if (o.links.empty()) throw UsageError("--links: empty path; accepted: a file path");
    cfg.links_path = o.links;
  }
  if (given(o.expect_opt)) cfg.expect = Expectations::load(o.expect);  // malformed: exit 2 before anything runs
  if (given(o.quiet_opt)) cfg.quiet = o.quiet;
  cfg.overwrite = o.overwrite;
  if (o.keep_samples < 0)
    throw UsageError("--keep-samples " + std::to_string(o.keep_samples) + ": negative; accepted: an integer >= 0");
  cfg.keep_samples = o.keep_samples;
  cfg.resume = o.resume;
  cfg.list = o.list;
  cfg.print_layouts = o.print_layouts;
  cfg.print_backend = o.print_backend;
  cfg.dry_run = o.dry_run;
  if (given(o.ranks_opt)) {
    const int most = cfg.dry_run ? (1 << 20) : 1024;  // threads of one process: a sane bound
    if (o.ranks < 1 || o.ranks > most)
      throw UsageError("--ranks " + std::to_string(o.ranks) + ": out of range; accepted: 1 to " + std::to_string(most));
    cfg.ranks = o.ranks;
  }
  if (given(o.spawn_opt)) {
    if (o.spawn < 1 || o.spawn > 1024)
      throw UsageError("--spawn " + std::to_string(o.spawn) + ": out of range; accepted: 1 to 1024");
    if (!o.launcher.empty() && o.launcher != "spawn")
      throw UsageError("--spawn starts the ranks itself, --launcher " + o.launcher + " says another launcher does; accepted: one of them");
    cfg.spawn = o.spawn;
  }
  cfg.launcher = o.launcher;
  Backends::get().check_launcher(cfg.launcher);  // a misspelt launcher first: it is wrong anywhere
  Backends::get().check(cfg.backend, cfg.device);

  // Cases: the file's, unless --op replaces them with one case (on the file's defaults).
  if (file && !given(o.op_opt)) {
    cfg.cases = file->cases;
    if (cfg.cases.empty() && !cfg.list && !cfg.print_layouts && !cfg.print_backend)
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
  CLI::App app{"collbench", "collbench"};
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  RawOptions o;
  add_selection_options(app, o);
  add_setting_options(app, o);
  add_output_options(app, o);
  app.set_help_flag("-h,--help", "print the main options and exit")->group("Help");
  app.set_help_all_flag("--help-all", "print every option, the other tools' options, how points are timed and the "
                                      "exit statuses, then exit")
      ->group("Help");
  app.add_flag("--version", o.version, "print collbench's version, git commit, the MPI library it was built against "
                                       "and the backends built in, then exit")
      ->group("Help");
  // Other tools' options first: their meaning as collbench's options, or a one-line answer.
  std::vector<std::string> args = rewrite_foreign_options(std::vector<std::string>(argv + 1, argv + argc));
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector last argument first
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    return printed(help_text(app));
  } catch (const CLI::CallForAllHelp&) {
    return printed(help_all_text(app));
  } catch (const CLI::ParseError& e) {
    throw UsageError(std::string(e.what()) + "; accepted: the options listed by collbench --help-all");
  }
  if (o.version) return printed(version_text());
  if (o.list && given(o.json_opt)) {  // --list --json: the registry as JSON on stdout (app/main.cpp)
    if (!o.json.empty())
      throw UsageError("--list --json prints the list on stdout, not to '" + o.json + "'; accepted: --list --json");
    CommandLine cl;
    cl.config.list = cl.config.list_json = true;
    return cl;
  }
  CommandLine cl;
  cl.config = resolve(o, std::vector<std::string>(argv, argv + argc));
  if (cl.config.list) {  // --list --op OP --backend B: only theirs
    if (given(o.op_opt)) cl.list_ops = cl.config.cases.front().ops;
    // One op's list is one backend's (the run's, default mpi), so that it fits a screen; the
    // list names the others' entries it leaves out.
    if (given(o.backend_opt) || given(o.op_opt)) cl.list_backend = cl.config.backend;
  }
  return cl;
}

}  // namespace collbench

#include "harness/plan/muscle_memory.hpp"

#include <cstdlib>

#include "collectives/core/error.hpp"
#include "harness/plan/help_text.hpp"

namespace collbench {
namespace {

using Args = std::optional<std::vector<std::string>>;
const Args kAsTyped = std::nullopt;
const Args kAnswer = std::vector<std::string>{};

bool starts_option(std::string_view a) { return a.size() >= 2 && a[0] == '-' && !(a[1] >= '0' && a[1] <= '9'); }

// OSU's -m [MIN:]MAX: MAX, MIN:MAX or MIN:.
Args message_size(std::optional<std::string_view> v) {
  const std::size_t colon = v->find(':');
  if (colon == std::string_view::npos) return std::vector<std::string>{"--max-bytes", std::string(*v)};
  std::vector<std::string> out;
  if (colon > 0) out.insert(out.end(), {"--min-bytes", std::string(v->substr(0, colon))});
  if (colon + 1 < v->size()) out.insert(out.end(), {"--max-bytes", std::string(v->substr(colon + 1))});
  return out.empty() ? kAnswer : Args(out);
}
Args warmup(std::optional<std::string_view> v) { return std::vector<std::string>{"--warmup", std::string(*v)}; }
Args iterations(std::optional<std::string_view> v) { return std::vector<std::string>{"--iters", std::string(*v)}; }
Args min_bytes(std::optional<std::string_view> v) { return std::vector<std::string>{"--min-bytes", std::string(*v)}; }
Args max_bytes(std::optional<std::string_view> v) { return std::vector<std::string>{"--max-bytes", std::string(*v)}; }
Args step_bytes(std::optional<std::string_view> v) { return std::vector<std::string>{"--step-bytes", std::string(*v)}; }
Args step_factor(std::optional<std::string_view> v) {
  return std::vector<std::string>{"--step-factor", std::string(*v)};
}
Args datatype(std::optional<std::string_view> v) { return std::vector<std::string>{"--dtype", std::string(*v)}; }
Args version(std::optional<std::string_view>) { return std::vector<std::string>{"--version"}; }
Args validation(std::optional<std::string_view>) { return std::vector<std::string>{"--check", "1"}; }
// nccl-tests' -R 0|1|2: no registration, local, symmetric (both: the peer memory here).
Args local_register(std::optional<std::string_view> v) {
  if (*v == "0") return std::vector<std::string>{"--buffers", "plain"};
  if (*v == "1" || *v == "2") return std::vector<std::string>{"--buffers", "registered"};
  return kAnswer;
}
// collbench's -d is the data type (nccl-tests'); OSU's -d names an accelerator.
Args dtype_or_device(std::optional<std::string_view> v) {
  for (std::string_view acc : {"cuda", "rocm", "openacc", "managed", "sycl"})
    if (*v == acc) return kAnswer;
  return kAsTyped;
}
// collbench's -T is nccl-tests' timeout in seconds; OSU's -T a data type (mpi_char ...).
Args timeout_or_type(std::optional<std::string_view> v) {
  char* end = nullptr;
  const std::string s(*v);
  std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size() ? kAsTyped : kAnswer;
}
// collbench's -f is nccl-tests' step factor; OSU's bare -f asks for full statistics.
Args factor_or_full(std::optional<std::string_view> v) { return v ? kAsTyped : kAnswer; }
// collbench's -c 0|1 is nccl-tests'; OSU's bare -c turns validation on (collbench's default).
Args check_or_validation(std::optional<std::string_view> v) {
  return v ? kAsTyped : Args(std::vector<std::string>{"--check", "1"});
}

constexpr const char* kLaunch = "mpirun -np NRANKS collbench, or collbench --backend thread --ranks N";

constexpr ForeignOption kForeign[] = {
    // ---- meanings kept: the arguments become collbench's
    {"--minbytes", "nccl-tests", "smallest size", ForeignValue::one, min_bytes, "same as -b/--min-bytes", "-b"},
    {"--maxbytes", "nccl-tests", "largest size", ForeignValue::one, max_bytes, "same as -e/--max-bytes", "-e"},
    {"--stepbytes", "nccl-tests", "linear step", ForeignValue::one, step_bytes, "same as -i/--step-bytes", "-i"},
    {"--stepfactor", "nccl-tests", "size factor", ForeignValue::one, step_factor, "same as -f/--step-factor", "-f"},
    {"--warmup_iters", "nccl-tests", "warm-up iterations", ForeignValue::one, warmup, "same as -w/--warmup", "-w"},
    {"--datatype", "nccl-tests", "data type", ForeignValue::one, datatype, "same as -d/--dtype", "-d"},
    {"-x", "OSU", "warm-up iterations", ForeignValue::one, warmup, "same as -w/--warmup", "-w"},
    {"--iterations", "OSU", "timed iterations", ForeignValue::one, iterations, "same as -n/--iters", "-n"},
    {"-m,--message-size", "OSU", "size range [MIN:]MAX", ForeignValue::one, message_size,
     "-m MIN:MAX = -b MIN -e MAX, -m MAX = -e MAX (OSU's meaning; nccl-tests' -m, ops per sample: --batch)",
     "-m MIN:MAX, -m MAX, -m MIN:"},
    {"-R,--local_register", "nccl-tests", "buffer registration 0|1|2", ForeignValue::one, local_register,
     "-R 0 = --buffers plain, -R 1 or 2 = --buffers registered", "-R 0, -R 1, -R 2 (--buffers plain|registered)"},
    {"-v", "OSU", "version", ForeignValue::none, version, "same as --version", "--version"},
    {"--validation", "OSU", "check results", ForeignValue::none, validation, "same as -c 1 (the default)", "-c 1"},
    {"-c", "OSU", "check results (no value)", ForeignValue::optional, check_or_validation,
     "-c alone = -c 1 (the default); with a value it is nccl-tests' -c", "-c 0, -c 1"},
    // ---- one letter, two meanings: collbench keeps nccl-tests', answers OSU's
    {"-d", "OSU", "accelerator (-d cuda)", ForeignValue::one, dtype_or_device,
     "collbench's -d is nccl-tests' data type; buffers on a GPU are --device cuda", "--device cuda"},
    {"-T", "OSU", "MPI data type (-T mpi_float)", ForeignValue::one, timeout_or_type,
     "collbench's -T is nccl-tests' timeout in seconds; the data type is -d/--dtype", "-d float32, -T SECONDS"},
    {"-f,--full", "OSU", "full statistics (no value)", ForeignValue::optional, factor_or_full,
     "collbench's -f is nccl-tests' step factor; every JSON result has min, p50, mean, p95, p99, max "
     "(--json FILE)",
     "-f N (step factor), --json FILE"},
    // ---- answers: the collbench way, and why
    {"-g,--ngpus", "nccl-tests", "GPUs per thread", ForeignValue::one, nullptr,
     "collbench uses one GPU per rank; launch one rank per GPU",
     "mpirun -np NGPUS collbench --device cuda"},
    {"-t,--nthreads", "nccl-tests, OSU", "threads per process (OSU: test calls)", ForeignValue::one, nullptr,
     "ranks are processes under a launcher, or threads of one process with --backend thread; calls are blocking",
     kLaunch},
    {"-a,--average", "nccl-tests, OSU", "how ranks' times combine (OSU: GPU array size)", ForeignValue::one, nullptr,
     "collbench chose nccl-tests' meaning: the table shows the max over ranks per iteration (-a 3); every JSON "
     "result also has nccl_avg_us (-a 1) and osu_avg_us",
     "collbench without -a; --json FILE for the averages"},
    {"-z,--blocking,--tail-lat", "nccl-tests, OSU", "blocking calls (OSU: tail percentiles)", ForeignValue::optional,
     nullptr,
     "collbench chose neither: every call completes before the next (nccl-tests -z 1), and p95/p99 (OSU -z) are "
     "in every JSON result",
     "collbench without -z; --batch for nccl-tests' back-to-back timing"},
    {"-G,--cudagraph,--graph", "nccl-tests, OSU", "CUDA graph launches (OSU: plots)", ForeignValue::one, nullptr,
     "collbench captures no CUDA graphs; plots come from the results", "analysis/collplot RESULTS.jsonl -o DIR"},
    {"-N,--run_cycles", "nccl-tests", "repeat the sweep", ForeignValue::one, nullptr,
     "one run is one pass; repeat the command and compare the runs", "analysis/collcompare BEFORE AFTER"},
    {"-C,--report_cputime", "nccl-tests", "CPU time instead of latency", ForeignValue::one, nullptr,
     "collbench reports the wall time of each call, max over ranks", "collbench without -C"},
    {"-p,--parallel_init", "nccl-tests", "initialise threads in parallel", ForeignValue::one, nullptr,
     "each rank initialises its own communicator", "collbench without -p"},
    {"--agg_iters", "nccl-tests", "ops per timed sample", ForeignValue::one, nullptr,
     "back-to-back ops per sample are --batch (-n of them per sample)", "--batch -n N"},
    {"-M,--mem-limit", "OSU", "memory per process", ForeignValue::one, nullptr,
     "collbench checks the memory per rank at the largest size before measuring (--dry-run prints it)",
     "-e/--max-bytes SIZE"},
    {"-u,--validation-warmup", "OSU", "warm-up before validation", ForeignValue::one, nullptr,
     "verification runs once after timing, outside the timed iterations", "-c 0|1"},
    {"-I,--session", "OSU", "MPI sessions", ForeignValue::none, nullptr,
     "ranks start with the world communicator of their backend", "collbench without -I"},
    {"-D,--ddt", "OSU", "derived datatypes", ForeignValue::one, nullptr,
     "buffers are contiguous arrays of one element type", "-d/--dtype LIST"},
    {"-P,--papi", "OSU", "PAPI counters", ForeignValue::one, nullptr,
     "no hardware counters; collbench emits NVTX ranges for Nsight Systems", "slurm/profile.sh (docs/profiling.md)"},
    {"--accelerator", "OSU", "accelerator", ForeignValue::one, nullptr, "buffers on a GPU are --device cuda",
     "--device cuda"},
};

const ForeignOption* find_foreign(std::string_view flag) {
  for (const auto& f : kForeign) {
    std::string_view names = f.names;
    while (!names.empty()) {
      const std::size_t comma = names.find(',');
      if (names.substr(0, comma) == flag) return &f;
      names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 1);
    }
  }
  return nullptr;
}

[[noreturn]] void answer(std::string_view flag, const ForeignOption& f) {
  throw UsageError(std::string(flag) + " (" + f.tool + ": " + f.theirs + "): " + f.answer + "; accepted: " +
                   f.accepted);
}

}  // namespace

std::span<const ForeignOption> foreign_options() { return kForeign; }

std::vector<std::string> rewrite_foreign_options(std::vector<std::string> args) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    if (!starts_option(a)) {
      out.push_back(a);
      continue;
    }
    // --flag=VALUE, -xVALUE, --flag VALUE, -x VALUE
    std::string flag = a;
    std::optional<std::string> attached;
    if (a.starts_with("--")) {
      if (const std::size_t eq = a.find('='); eq != std::string::npos) {
        flag = a.substr(0, eq);
        attached = a.substr(eq + 1);
      }
    } else if (a.size() > 2) {
      flag = a.substr(0, 2);
      attached = a.substr(2);
    }
    const ForeignOption* f = find_foreign(flag);
    if (!f) {
      out.push_back(a);
      continue;
    }
    std::optional<std::string> value = attached;
    std::size_t used = 0;  // arguments after this one taken as its value
    if (!value && f->value != ForeignValue::none && i + 1 < args.size() &&
        (f->value == ForeignValue::one || !starts_option(args[i + 1]))) {
      value = args[i + 1];
      used = 1;
    }
    if (!f->rewrite) answer(flag, *f);
    if (f->value == ForeignValue::one && !value)
      throw UsageError(flag + " needs a value (" + f->tool + ": " + f->theirs + "); accepted: " + f->accepted);
    const Args r = f->rewrite(value ? std::optional<std::string_view>(*value) : std::nullopt);
    if (!r) {  // collbench's own option of that letter: as typed
      out.push_back(a);
      continue;
    }
    if (r->empty()) answer(flag, *f);
    out.insert(out.end(), r->begin(), r->end());
    i += used;
  }
  return out;
}

std::string foreign_options_help(std::size_t width) {
  std::string out =
      "Other tools' options: nccl-tests' -b -e -f -i -n -w -c -d -o -r -T -R mean what they mean there, and\n"
      "  their long spellings (--minbytes ...) too. Where nccl-tests and OSU give a letter two meanings,\n"
      "  collbench keeps nccl-tests' (-i step bytes: OSU's iterations are -n; -d; -T; -f; -a) but OSU's\n"
      "  -m [MIN:]MAX. The rest answer with the collbench way (exit 2):\n";
  for (const auto& f : kForeign) {
    std::string names;  // f.names with a space after each comma
    for (const char c : std::string_view(f.names)) {
      names += c;
      if (c == ',') names += ' ';
    }
    const std::string what = std::string(f.tool) + ": " + f.theirs + " -> " +
                             (f.rewrite ? std::string(f.answer) : "exit 2: " + std::string(f.answer) + "; use " +
                                                                          f.accepted);
    out += wrap_entry("  " + names, what, 28, width);
  }
  return out;
}

}  // namespace collbench

#include "harness/plan/settings.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "collectives/core/error.hpp"
#include "harness/plan/p2p_method.hpp"
#include "harness/plan/sizes.hpp"
#include "harness/plan/spelling.hpp"

namespace collbench {

// ---------------------------------------------------------------- strict value parsers

long long parse_int(std::string_view text, long long min, long long max, const char* accepted) {
  long long v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || v < min || v > max)
    throw UsageError("bad value '" + std::string(text) + "'; accepted: " + accepted);
  return v;
}

double parse_number(std::string_view text, double min, double max, const char* accepted) {
  const std::string s(text);
  char* end = nullptr;
  errno = 0;
  const double v = s.empty() ? NAN : std::strtod(s.c_str(), &end);
  if (s.empty() || errno != 0 || end != s.c_str() + s.size() || !std::isfinite(v) || v < min || v > max)
    throw UsageError("bad value '" + s + "'; accepted: " + accepted);
  return v;
}

bool parse_bool(std::string_view t) {
  if (t == "1" || t == "true" || t == "yes" || t == "on") return true;
  if (t == "0" || t == "false" || t == "no" || t == "off") return false;
  throw UsageError("bad value '" + std::string(t) + "'; accepted: 0, 1 (or true, false)");
}

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    std::string_view item = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty()) throw UsageError("empty item in list '" + std::string(text) + "'; accepted: comma-separated names");
    out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string op_names() {
  std::string s;
  for (const auto& name : op_name_list()) s += (s.empty() ? "" : ", ") + name;
  return s;
}

std::vector<OpChoice> parse_ops(std::string_view text) {
  if (folded(text) == "all") return {std::begin(kAllOps), std::end(kAllOps)};
  std::vector<OpChoice> out;
  for (const auto& item : split_list(text)) {
    const std::optional<std::string> name = canonical_op_name(item);
    if (!name) {
      // nccl-tests' --op is the reduction (sum ...): collbench's names the collective.
      if (parse_redop(folded(item)))
        throw UsageError("--op " + item + ": collbench's --op names the collective (nccl-tests' --op is the "
                         "reduction: here -o/--redop " + folded(item) + "); accepted: " + op_names() + ", all");
      throw UsageError("unknown op '" + item + "'" + did_you_mean(item, op_name_list()) + "; accepted: " + op_names() +
                       ", all (the collectives); any case, with or without '_' (all_reduce, AllReduce), bcast");
    }
    const OpChoice choice = *name == kPingpongOp ? OpChoice{Pingpong{}} : OpChoice{*parse_op(*name)};
    if (std::find(out.begin(), out.end(), choice) == out.end()) out.push_back(choice);
  }
  return out;
}

std::vector<std::string> parse_algos(std::string_view text) {
  std::vector<std::string> out;
  for (auto& item : split_list(text)) {
    // Algorithm names are lower case: Ring is ring (resolve_algos suggests a near miss).
    std::transform(item.begin(), item.end(), item.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(std::move(item));
  }
  return out;  // "all" stays a name: every algorithm ("all,auto" keeps both; resolve_algos)
}

std::string parse_layout(std::string_view text) {
  const std::size_t x = text.find('x');
  constexpr const char* kAccepted = "NODESxRANKS_PER_NODE with both >= 1, e.g. 2x4";
  try {
    if (x == std::string_view::npos) throw UsageError("no 'x'");
    parse_int(text.substr(0, x), 1, 1 << 20, kAccepted);
    parse_int(text.substr(x + 1), 1, 1 << 20, kAccepted);
  } catch (const UsageError&) {
    throw UsageError("bad layout '" + std::string(text) + "'; accepted: " + kAccepted);
  }
  return std::string(text);
}

namespace {

constexpr const char* kCountAccepted = "an integer >= 1";
constexpr std::uint64_t kNcclTestsStepBytes = 1 << 20;  // nccl-tests' default -i

// "a,b" or "all" -> values in the order given, without repeats; `parse` maps one name (or
// nothing, refused naming `what` and the accepted `names`).
template <class T, class All, class Parse>
std::vector<T> parse_names(std::string_view text, const All& all, Parse parse, const char* what,
                           const std::string& names) {
  if (text == "all") return {std::begin(all), std::end(all)};
  std::vector<T> out;
  for (const auto& item : split_list(text)) {
    const std::optional<T> v = parse(item);
    if (!v) throw UsageError(std::string("unknown ") + what + " '" + item + "'; accepted: " + names + ", all");
    if (std::find(out.begin(), out.end(), *v) == out.end()) out.push_back(*v);
  }
  return out;
}

std::vector<DType> parse_dtypes(std::string_view text) {
  return parse_names<DType>(text, kAllDTypes, parse_dtype, "dtype", dtype_names());
}

std::vector<RedOp> parse_redops(std::string_view text) {
  return parse_names<RedOp>(text, kAllRedOps, parse_redop, "redop", redop_names());
}

std::vector<bool> parse_placements(std::string_view t) {
  if (t == "both") return {false, true};
  try {
    return {parse_bool(t)};
  } catch (const UsageError&) {
    throw UsageError("bad value '" + std::string(t) + "'; accepted: 0 (out of place), 1 (in place), both");
  }
}

int parse_count(std::string_view t) { return static_cast<int>(parse_int(t, 1, 1'000'000'000, kCountAccepted)); }

constexpr SettingOption kOptions[] = {
    {"min_bytes", "-b", "SIZE", "smallest message size (nccl-tests size; default 8)", "a size", false,
     [](Settings& s, std::string_view v) { s.min_bytes = parse_size(v); }},
    {"max_bytes", "-e", "SIZE", "largest message size, included (default 16M)", "a size", false,
     [](Settings& s, std::string_view v) { s.max_bytes = parse_size(v); }},
    {"step_factor", "-f", "N",
     "multiply the size by N between points (default 2); 1: no factor, linear steps of -i (default 1M), as nccl-tests",
     "an integer >= 1", false,
     [](Settings& s, std::string_view v) {
       const auto f = static_cast<std::uint64_t>(parse_int(v, 1, 1 << 30, "an integer >= 1 (1: linear steps of -i)"));
       if (f == 1) {  // nccl-tests: a step factor of 1 means its -i steps (1 MiB unless given)
         if (s.step_bytes == 0) s.step_bytes = kNcclTestsStepBytes;
         return;
       }
       s.step_factor = f;
       s.step_bytes = 0;
     }},
    {"step_bytes", "-i", "SIZE",
     "add SIZE between points instead (linear steps, nccl-tests' -i; OSU's -i, iterations, is -n here)", "a size > 0",
     false,
     [](Settings& s, std::string_view v) {
       s.step_bytes = parse_size(v);
       if (s.step_bytes == 0) throw UsageError("step must be > 0; accepted: a size > 0, e.g. 1M");
     }},
    {"segment", "", "SIZE",
     "pipelining segment for chunked algorithms (default 0: the algorithm's own; shm's is chosen from the caches)",
     "a size",
     false, [](Settings& s, std::string_view v) { s.segment_bytes = parse_size(v); }},

    {"check", "-c", "0|1",
     "verify every point after timing (default 1); nccl-tests' -c N > 1 is 1: verified once, after timing",
     "0, 1", false,
     [](Settings& s, std::string_view v) {
       long long n = 0;  // nccl-tests' check count: any N > 0 verifies
       const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
       s.check = ec == std::errc{} && end == v.data() + v.size() && n >= 0 ? n > 0 : parse_bool(v);
     }},
    {"dtype", "-d", "LIST", "element types, comma-separated, or all (default float32)", "dtype names or all", true,
     [](Settings& s, std::string_view v) { s.dtypes = parse_dtypes(v); }},
    {"redop", "-o", "LIST", "reduction ops for reducing collectives, or all (default sum; avg as NCCL's ncclAvg)", "sum, prod, max, min, avg, all",
     true, [](Settings& s, std::string_view v) {
       s.redops = parse_redops(v);
       s.redops_given = true;
     }},
    {"root", "-r", "R", "root rank of rooted collectives (default 0)", "an integer from 0 to world size - 1", false,
     [](Settings& s, std::string_view v) {
       s.root = static_cast<int>(parse_int(v, 0, 1 << 30, "an integer from 0 to world size - 1"));
     }},
    {"inplace", "", "0|1|both", "out of place (0, default), in place (1) or both", "0, 1, both", false,
     [](Settings& s, std::string_view v) { s.placements = parse_placements(v); }},
    {"iters", "-n", "N", "timed iterations per point (default 20; the first round when adaptive)", kCountAccepted,
     false, [](Settings& s, std::string_view v) { s.iters = parse_count(v); }},
    {"warmup", "-w", "N", "untimed warm-up iterations per point (default 5; collectives: more until 5 ms)", "an integer >= 0", false,
     [](Settings& s, std::string_view v) {
       s.warmup = static_cast<int>(parse_int(v, 0, 1'000'000'000, "an integer >= 0"));
     }},
    {"batch", "", "", "time -n back-to-back ops as one sample and report the mean per op (nccl-tests style)", "0, 1",
     false, [](Settings& s, std::string_view v) { s.batch = parse_bool(v); }},
    {"interleave", "", "", "at each size run the algorithms' iterations round-robin, each round in its own (seeded) order, for fair comparisons",
     "0, 1", false, [](Settings& s, std::string_view v) { s.interleave = parse_bool(v); }},
    {"sync", "", "clock|barrier",
     "per-iteration start: clock (default; agreed start time on offset-corrected clocks, as ReproMPI) or barrier",
     "clock, barrier", false,
     [](Settings& s, std::string_view v) {
       if (v == "clock")
         s.sync = SyncMethod::clock;
       else if (v == "barrier")
         s.sync = SyncMethod::barrier;
       else
         throw UsageError("bad value '" + std::string(v) + "'; accepted: clock, barrier");
     }},
    {"buffers", "", "plain|registered",
     "where send/recv live: plain (default) or registered in the node's peer memory (device memory: CUDA IPC), "
     "read in place by the shm algorithms (nccl-tests -R)",
     "plain, registered", false,
     [](Settings& s, std::string_view v) {
       if (v == "plain")
         s.registered_buffers = false;
       else if (v == "registered")
         s.registered_buffers = true;
       else
         throw UsageError("bad value '" + std::string(v) + "'; accepted: plain, registered");
     }},
    {"cache", "", "hot|cold",
     "hot (default): every call reuses one send/recv set, as nccl-tests; cold: each call takes the next set of a "
     "pool larger than the last-level cache (IMB -off_cache), so it starts on data not in cache",
     "hot, cold", false,
     [](Settings& s, std::string_view v) {
       if (v == "hot")
         s.cache_cold = false;
       else if (v == "cold")
         s.cache_cold = true;
       else
         throw UsageError("bad value '" + std::string(v) + "'; accepted: hot, cold");
     }},
    {"cache_pool", "", "SIZE", "--cache cold: the pool per rank (default 2x the last-level cache, read from sysfs)",
     "a size from 4K to 1024T", false,
     [](Settings& s, std::string_view v) {
       s.cache_pool_bytes = parse_size(v);
       // Bounded so the pool's arithmetic (sets x set bytes) cannot wrap; memory refuses far less.
       if (s.cache_pool_bytes < 4096 || s.cache_pool_bytes > (1ull << 50))
         throw UsageError("bad value '" + std::string(v) + "'; accepted: a size from 4K to 1024T");
     }},
    {"per_rank", "", "",
     "keep when every rank finished and started, per sample, in the results (per_rank; for finding stragglers)", "0, 1",
     false, [](Settings& s, std::string_view v) { s.per_rank = parse_bool(v); }},
    {"timeout", "-T", "SECONDS", "a wait longer than this aborts the run naming the peer (default 60)",
     "a number of seconds > 0", false,
     [](Settings& s, std::string_view v) { s.timeout_s = parse_number(v, 1e-3, 1e7, "a number of seconds > 0"); }},
    {"min_time", "", "SECONDS", "adaptive: measure each point for at least this long", "a number of seconds >= 0",
     false,
     [](Settings& s, std::string_view v) { s.min_time_s = parse_number(v, 0, 1e7, "a number of seconds >= 0"); }},
    {"max_noise", "", "FRACTION",
     "adaptive: iterate until the 95% CI half-width of the mean is below FRACTION of it (e.g. 0.01)",
     "a fraction in [0, 1)", false,
     [](Settings& s, std::string_view v) { s.max_noise = parse_number(v, 0, 0.999999, "a fraction in [0, 1)"); }},
    {"max_iters", "", "N", "adaptive: at most N timed iterations per point (default 1000)", kCountAccepted, false,
     [](Settings& s, std::string_view v) { s.max_iters = parse_count(v); }},
    {"workload", "", "ddp",
     "instead of a size sweep, a training step's gradient sync: all of --model's DDP buckets all-reduced back to "
     "back per step (-n steps, -w warm-up steps)",
     "ddp", false,
     [](Settings& s, std::string_view v) {
       if (v != "ddp") throw UsageError("bad value '" + std::string(v) + "'; accepted: ddp");
       s.workload = std::string(v);
     }},
    {"model", "", "NAME|FILE",
     "--workload ddp: linear, resnet50, bert-base, gpt2, vit-b16, llama2-7b, or a parameter list (.json/.yaml)",
     "a model name or a .json/.yaml file", false,
     [](Settings& s, std::string_view v) {
       if (v.empty()) throw UsageError("empty model; accepted: a model name or a .json/.yaml file");
       s.model = std::string(v);
     }},
    {"bucket_cap_mb", "", "MIB", "--workload ddp: DDP's bucket_cap_mb (default 25; the first bucket's cap is 1 MiB)",
     "a number of MiB > 0", false,
     [](Settings& s, std::string_view v) {
       s.bucket_cap_mb = parse_number(v, 0, 1e7, "a number of MiB > 0");
       if (s.bucket_cap_mb <= 0) throw UsageError("bad value '" + std::string(v) + "'; accepted: a number of MiB > 0");
     }},
    {"grad_dtype", "", "DTYPE", "--workload ddp: gradient dtype (default: each parameter's own, float32 for the builtins)",
     "float32, bfloat16, float16, float64", false,
     [](Settings& s, std::string_view v) {
       const auto d = parse_dtype(v);
       if (!d || (*d != DType::float32 && *d != DType::bfloat16 && *d != DType::float16 && *d != DType::float64))
         throw UsageError("bad value '" + std::string(v) + "'; accepted: float32, bfloat16, float16, float64");
       s.grad_dtype = *d;
     }},
    {"grad_order", "", "FILE",
     "--workload ddp: gradient-ready order (one parameter name per line, or a JSON list), as DDP rebuilds its buckets "
     "after the first step (default: reverse registration order)",
     "a readable file", false, [](Settings& s, std::string_view v) { s.grad_order = std::string(v); }},
    {"compute_ms", "", "F,B,O",
     "--workload ddp: forward, backward and optimizer time per step on one device, in ms (recorded for the "
     "analysis' overlap model)",
     "three numbers >= 0, e.g. 30,60,5", true,
     [](Settings& s, std::string_view v) {
       const auto parts = split_list(v);
       if (parts.size() != 3) throw UsageError("bad value '" + std::string(v) + "'; accepted: three numbers >= 0, e.g. 30,60,5");
       std::array<double, 3> ms{};
       for (std::size_t i = 0; i < 3; ++i) ms[i] = parse_number(parts[i], 0, 1e9, "three numbers >= 0, e.g. 30,60,5");
       s.compute_ms = ms;
     }},
    {"compute_profile", "", "FILE",
     "--workload ddp: a per-layer profile instead (forward_ms, optimizer_ms, backward_ms per module), giving each "
     "bucket's backward time",
     "a readable .yaml/.json file", false, [](Settings& s, std::string_view v) { s.compute_profile = std::string(v); }},
    {"pairs", "", "auto|all|S-D,...",
     "pingpong: rank pairs to measure; auto (default) = one intra-node and one inter-node pair, all = every i<j",
     "auto, all, or rank pairs SRC-DST, e.g. 0-1,0-4", true,
     [](Settings& s, std::string_view v) { s.pairs = parse_pairs(v); }},
};

std::string normalised(std::string_view key) {
  std::string k(key);
  std::replace(k.begin(), k.end(), '-', '_');
  return k;
}

}  // namespace

std::span<const SettingOption> setting_options() { return kOptions; }

const SettingOption* find_setting(std::string_view key) {
  const std::string k = normalised(key);
  for (const auto& o : kOptions)
    if (k == o.name) return &o;
  return nullptr;
}

std::string long_flag(const SettingOption& o) {
  std::string f = std::string("--") + o.name;
  std::replace(f.begin(), f.end(), '_', '-');
  return f;
}

void apply_setting(Settings& s, const SettingOption& o, std::string_view value) {
  try {
    o.apply(s, value);
  } catch (const UsageError& e) {
    const std::string flag = o.short_flag[0] ? std::string(o.short_flag) + "/" + long_flag(o) : long_flag(o);
    throw UsageError(flag + ": " + e.what());
  }
}

void validate_settings(const Settings& s) {
  if (s.min_bytes > s.max_bytes)
    throw UsageError("--min-bytes (" + std::to_string(s.min_bytes) + ") is larger than --max-bytes (" +
                     std::to_string(s.max_bytes) + "); accepted: min-bytes <= max-bytes");
  // A linear sweep can ask for more sizes than a plan can hold (found by argv fuzzing:
  // -i 3K -e 16E planned for ever); a geometric one has at most 64. 2048: nccl-tests' -b 1M -e 1G
  // -i 1M (1024) passes, an OSU user's -m 4:1M -i 100 meaning 100 iterations (10487 sizes) does not.
  constexpr std::uint64_t kMaxSizes = 2048;
  if (s.step_bytes > 0 && (s.max_bytes - s.min_bytes) / s.step_bytes >= kMaxSizes)
    throw UsageError("-i/--step-bytes " + std::to_string(s.step_bytes) + " from " + std::to_string(s.min_bytes) +
                     " to " + std::to_string(s.max_bytes) + " B is more than " + std::to_string(kMaxSizes) +
                     " sizes (OSU's -i is iterations: -n here); accepted: a larger step or a smaller range");
  if (s.batch && s.interleave)
    throw UsageError("--batch and --interleave cannot be combined; accepted: one of them");
  if (s.workload.empty() && (!s.model.empty() || !s.grad_order.empty() || s.compute_ms || !s.compute_profile.empty()))
    throw UsageError(
        "--model, --grad-order, --compute-ms and --compute-profile describe a workload; accepted: with --workload ddp");
  if (s.compute_ms && !s.compute_profile.empty())
    throw UsageError("--compute-ms and --compute-profile both give the step's compute; accepted: one of them");
  if (!s.workload.empty() && s.model.empty())
    throw UsageError("--workload ddp needs a model; accepted: --model resnet50 (or linear, bert-base, gpt2, vit-b16, "
                     "llama2-7b, a .json/.yaml parameter list)");
  if (!s.workload.empty() && s.batch)
    throw UsageError("--batch does not apply to --workload ddp (a step is timed as one sample); accepted: without it");
  if (!s.cache_cold && s.cache_pool_bytes > 0)
    throw UsageError("--cache-pool sizes the cold pool; accepted: with --cache cold");
  if (!s.workload.empty() && s.cache_cold)
    throw UsageError("--cache cold does not apply to --workload ddp (a step already walks every gradient bucket once); "
                     "accepted: --cache hot");
  if (s.adaptive() && s.max_iters < s.iters)
    throw UsageError("--max-iters (" + std::to_string(s.max_iters) + ") is below --iters (" + std::to_string(s.iters) +
                     "); accepted: max-iters >= iters");
}

}  // namespace collbench

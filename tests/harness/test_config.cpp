// The YAML sweep file and the command line: same settings table, layered precedence,
// errors naming FILE:LINE:COL.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "collectives/core/error.hpp"
#include "collectives/gpu/gpu.hpp"
#include "harness/plan/cli.hpp"
#include "harness/plan/config.hpp"
#include "harness/results/records.hpp"
#include "command_line.hpp"

namespace collbench {
namespace {

using testing::parse_config;

std::string error_of(const std::string& yaml) {
  try {
    parse_sweep_yaml(yaml, "sweep.yaml");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "<no error>";
}

std::string cli_error(std::vector<std::string> args) {
  try {
    parse_config(std::move(args));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "<no error>";
}

class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    path_ = std::filesystem::temp_directory_path() /
            ("collbench_cfg_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + ".yaml");
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

constexpr const char* kGood = R"(name: demo
layouts: ["1x2", "2x2"]
defaults:
  min_bytes: 1K
  max-bytes: 64K
  step_factor: 4
  iters: 7
  warmup: 1
  dtype: [float32, int32]
  redop: all
  inplace: both
  check: 0
  batch: true
  timeout: 5
  segment: 8K
cases:
  - op: allreduce
    algo: [ring, library]
)";

TEST(SweepFile, GoodFileIsEquivalentToFlags) {
  TempFile f(kGood);
  const RunConfig from_file = parse_config({"--config", f.path()});
  const RunConfig from_flags =
      parse_config({"--op", "allreduce", "--algo", "ring,library", "-b", "1K", "-e", "64K", "-f", "4",
                    "-n", "7", "-w", "1", "--dtype", "float32,int32", "--redop", "all", "--inplace",
                    "both", "-c", "0", "--batch", "--timeout", "5", "--segment", "8K"});
  ASSERT_EQ(from_file.cases.size(), 1u);
  const auto a = config_json(from_file)["cases"][0], b = config_json(from_flags)["cases"][0];
  EXPECT_EQ(a["settings"], b["settings"]);
  EXPECT_EQ(a["ops"], b["ops"]);
  EXPECT_EQ(a["algos"], b["algos"]);
  EXPECT_EQ(from_file.name, "demo");
  EXPECT_EQ(from_file.layouts, (std::vector<std::string>{"1x2", "2x2"}));
  EXPECT_EQ(a["settings"]["mode"], "batch");
  EXPECT_EQ(a["settings"]["redop"].size(), 5u);
}

TEST(SweepFile, CasesInheritDefaultsAndOverride) {
  const SweepFile f = parse_sweep_yaml(R"(cases:
  - {op: broadcast, algo: naive, root: 1}
  - {op: [allgather, alltoall]}
defaults: {iters: 3}
)",
                                       "s.yaml");
  ASSERT_EQ(f.cases.size(), 2u);
  EXPECT_EQ(f.cases[0].settings.root, 1);
  EXPECT_EQ(f.cases[0].settings.iters, 3) << "defaults apply whatever the key order";
  EXPECT_EQ(f.cases[0].algos, (std::vector<std::string>{"naive"}));
  EXPECT_EQ(f.cases[1].ops, (std::vector<OpChoice>{Op::allgather, Op::alltoall}));
  EXPECT_TRUE(f.cases[1].algos.empty()) << "no algo: the default (the library's own)";
  EXPECT_EQ(f.cases[1].origin, "s.yaml:3:5");
}

TEST(SweepFile, UnknownKeyNamesKeyAndPosition) {
  const std::string e = error_of("defaults:\n  iters: 3\n  iterz: 4\ncases: [{op: allreduce}]\n");
  EXPECT_NE(e.find("sweep.yaml:3:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown key 'iterz'"), std::string::npos) << e;
  EXPECT_NE(e.find("; accepted: "), std::string::npos) << e;
  const std::string top = error_of("nmae: x\n");
  EXPECT_NE(top.find("sweep.yaml:1:1: unknown top-level key 'nmae'"), std::string::npos) << top;
  const std::string in_case = error_of("cases:\n  - op: allreduce\n    algorithm: ring\n");
  EXPECT_NE(in_case.find("sweep.yaml:3:5: unknown key 'algorithm' in a case"), std::string::npos) << in_case;
}

TEST(SweepFile, SyntaxErrorHasLineAndColumn) {
  const std::string e = error_of("defaults:\n  iters: [1, 2\ncases: []\n");
  EXPECT_NE(e.find("YAML syntax error"), std::string::npos) << e;
  EXPECT_NE(e.find("sweep.yaml:"), std::string::npos) << e;
  const std::string e2 = error_of("a: b: c\n");
  EXPECT_NE(e2.find("sweep.yaml:1:"), std::string::npos) << e2;
}

TEST(SweepFile, WrongTypesAndValues) {
  std::string e = error_of("defaults:\n  iters: [1, 2]\n");
  EXPECT_NE(e.find("sweep.yaml:2:10: 'iters' is a list"), std::string::npos) << e;
  e = error_of("defaults: 5\n");
  EXPECT_NE(e.find("sweep.yaml:1:11: 'defaults' must be a mapping"), std::string::npos) << e;
  e = error_of("cases: {op: allreduce}\n");
  EXPECT_NE(e.find("'cases' must be a list"), std::string::npos) << e;
  e = error_of("defaults:\n  max_bytes: 1Q\n");
  EXPECT_NE(e.find("sweep.yaml:2:14:"), std::string::npos) << e;
  EXPECT_NE(e.find("bad size '1Q'"), std::string::npos) << e;
  e = error_of("defaults:\n  iters: {a: 1}\n");
  EXPECT_NE(e.find("'iters' is a mapping"), std::string::npos) << e;
  e = error_of("defaults:\n  iters:\n");
  EXPECT_NE(e.find("'iters' is empty"), std::string::npos) << e;
  e = error_of("cases:\n  - {algo: ring}\n");
  EXPECT_NE(e.find("sweep.yaml:2:5: a case needs 'op'"), std::string::npos) << e;
  e = error_of("cases:\n  - {op: allreduse}\n");
  EXPECT_NE(e.find("unknown op 'allreduse'"), std::string::npos) << e;
  e = error_of("defaults: {iters: 1, iters: 2}\n");
  EXPECT_NE(e.find("duplicate key 'iters'"), std::string::npos) << e;
  e = error_of("layouts: [2y2]\n");
  EXPECT_NE(e.find("bad layout '2y2'"), std::string::npos) << e;
  e = error_of("defaults: {min_bytes: 2M, max_bytes: 1M}\n");
  EXPECT_NE(e.find("sweep.yaml:1:11:"), std::string::npos) << e;
  EXPECT_NE(e.find("larger than --max-bytes"), std::string::npos) << e;
  e = error_of("defaults: {step_factor: 4, step_bytes: 1K}\n");
  EXPECT_NE(e.find("sweep.yaml:1:11: step_factor and step_bytes cannot be combined"), std::string::npos) << e;
  e = error_of("");
  EXPECT_NE(e.find("empty"), std::string::npos) << e;
}

TEST(SweepFile, MissingFile) {
  EXPECT_THROW(load_sweep_file("/nonexistent/sweep.yaml"), UsageError);
  const std::string e = cli_error({"--config", "/nonexistent/sweep.yaml"});
  EXPECT_NE(e.find("/nonexistent/sweep.yaml: cannot read"), std::string::npos) << e;
  EXPECT_NE(cli_error({"--config", "/tmp"}).find("cannot read"), std::string::npos);
}

TEST(CommandLine, ExplicitFlagsOverrideTheFile) {
  TempFile f("defaults: {iters: 7, max_bytes: 1M}\ncases:\n  - {op: allreduce, iters: 9}\n  - {op: broadcast}\n");
  const RunConfig c = parse_config({"--config", f.path(), "-n", "3"});
  ASSERT_EQ(c.cases.size(), 2u);
  EXPECT_EQ(c.cases[0].settings.iters, 3);
  EXPECT_EQ(c.cases[1].settings.iters, 3);
  EXPECT_EQ(c.cases[1].settings.max_bytes, 1u << 20) << "the file's other defaults stay";
  const RunConfig replaced = parse_config({"--config", f.path(), "--op", "gather", "--algo", "naive"});
  ASSERT_EQ(replaced.cases.size(), 1u) << "--op replaces the file's cases";
  EXPECT_EQ(replaced.cases[0].ops, std::vector<OpChoice>{Op::gather});
  EXPECT_EQ(replaced.cases[0].settings.iters, 7);
  const RunConfig algo_only = parse_config({"--config", f.path(), "--algo", "library"});
  EXPECT_EQ(algo_only.cases[1].algos, std::vector<std::string>{"library"});
}

TEST(CommandLine, DefaultsAndRunOptions) {
  const RunConfig c = parse_config({});
  ASSERT_EQ(c.cases.size(), 1u);
  EXPECT_EQ(c.cases[0].ops, std::vector<OpChoice>{Op::allreduce});
  EXPECT_TRUE(c.cases[0].algos.empty());
  EXPECT_EQ(c.cases[0].settings.min_bytes, 8u);
  EXPECT_EQ(c.cases[0].settings.max_bytes, 16u << 20);
  EXPECT_TRUE(c.cases[0].settings.check);
  EXPECT_EQ(c.backend, "mpi");
  EXPECT_EQ(c.device, "cpu");
  EXPECT_FALSE(c.json_path);
  const RunConfig d =
      parse_config({"--op", "all", "--json", "x.jsonl", "--overwrite", "--quiet", "-i", "1M", "--inplace", "1"});
  EXPECT_EQ(d.cases[0].ops.size(), 8u);
  EXPECT_EQ(*d.json_path, "x.jsonl");
  EXPECT_TRUE(d.overwrite);
  EXPECT_TRUE(d.quiet);
  EXPECT_EQ(d.cases[0].settings.step_bytes, 1u << 20);
  EXPECT_EQ(d.cases[0].settings.placements, std::vector<bool>{true});
  EXPECT_EQ(d.argv.size(), 11u);
  const RunConfig e = parse_config({"--min-time", "0.5", "--max-noise", "0.02", "--max-iters", "50", "--interleave"});
  EXPECT_TRUE(e.cases[0].settings.adaptive());
  EXPECT_EQ(e.cases[0].settings.mode(), TimingMode::interleaved);
}

TEST(CommandLine, BadArgumentsSayWhatAndWhatIsAccepted) {
  struct Bad {
    std::vector<std::string> args;
    const char* expect;
  };
  const Bad cases[] = {
      {{"--op", "allreduc"}, "unknown op 'allreduc'"},
      {{"-b", "-1"}, "negative"},
      {{"-e", "1Q"}, "unknown suffix 'Q'"},
      {{"-n", "0"}, "-n/--iters"},
      {{"-w", "-3"}, "-w/--warmup"},
      {{"-c", "maybe"}, "-c/--check"},
      {{"--dtype", "float33"}, "unknown dtype 'float33'"},
      {{"--redop", "mean"}, "unknown redop 'mean'"},
      {{"--inplace", "maybe"}, "--inplace"},
      {{"--backend", "nccl"}, "--backend nccl moves device memory only"},
      {{"--backend", "ucc"}, "unknown --backend 'ucc'"},
      {{"--batch", "--interleave"}, "cannot be combined"},
      {{"-f", "2", "-i", "1K"}, "cannot be combined"},
      {{"-b", "2M", "-e", "1M"}, "larger than --max-bytes"},
      {{"--max-iters", "5", "-n", "10", "--min-time", "1"}, "below --iters"},
      {{"--timeout", "-1"}, "--timeout"},
      {{"--max-noise", "1"}, "--max-noise"},
      {{"--bogus"}, "--bogus"},
      {{"--print-layouts"}, "needs a sweep file"},
      {{"--json", ""}, "empty path"},
      {{"--op", "allreduce,"}, "empty item"},
  };
  std::vector<Bad> all(std::begin(cases), std::end(cases));
  if (gpu::device_count() == 0) all.push_back({{"--device", "cuda"}, "--device cuda: "});  // no GPU / built without CUDA
  for (const auto& c : all) {
    const std::string e = cli_error(c.args);
    EXPECT_NE(e.find(c.expect), std::string::npos) << c.args.front() << ": " << e;
    EXPECT_NE(e.find("; accepted: "), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << "one line: " << e;
  }
}

TEST(CommandLine, HelpIsReturnedNotPrinted) {
  const char* argv[] = {"collbench", "--help-all"};
  const CommandLine cl = parse_command_line(2, argv);
  ASSERT_TRUE(cl.help);
  for (const char* must : {"--op", "--algo", "--min-bytes", "--step-bytes", "--iters", "--warmup", "--check", "--dtype",
                           "--redop", "--root", "--inplace", "--json", "--overwrite", "--config", "--list", "--timeout",
                           "--batch", "--interleave", "--min-time", "--max-noise", "--max-iters", "--segment", "--quiet",
                           "--print-layouts", "--backend", "--device", "Exit status"})
    EXPECT_NE(cl.help->find(must), std::string::npos) << must;
}

}  // namespace
}  // namespace collbench

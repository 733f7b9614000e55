// nccl-tests' and OSU's options (harness/plan/muscle_memory.hpp): every row of the table, its
// meaning kept (the arguments collbench reads) or its one-line answer (a UsageError).
#include <gtest/gtest.h>

#include <set>

#include "collectives/core/error.hpp"
#include "harness/plan/cli.hpp"
#include "harness/plan/muscle_memory.hpp"
#include "command_line.hpp"

namespace collbench {
namespace {

using testing::parse_command;

using V = std::vector<std::string>;

std::string answer_of(const V& args) {
  try {
    rewrite_foreign_options(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "<no error>";
}

// Every name of every row is either rewritten or answered here, once: a new row needs a case.
struct Case {
  V args;
  V want;             // the rewritten arguments ({} where it answers)
  const char* words;  // in the answer
};
const Case kCases[] = {
    {{"--minbytes", "8"}, {"--min-bytes", "8"}, ""},
    {{"--maxbytes=1M"}, {"--max-bytes", "1M"}, ""},
    {{"--stepbytes", "1K"}, {"--step-bytes", "1K"}, ""},
    {{"--stepfactor", "4"}, {"--step-factor", "4"}, ""},
    {{"--warmup_iters", "3"}, {"--warmup", "3"}, ""},
    {{"--datatype", "float"}, {"--dtype", "float"}, ""},
    {{"-x", "100"}, {"--warmup", "100"}, ""},
    {{"--iterations", "1000"}, {"--iters", "1000"}, ""},
    {{"-m", "64:1M"}, {"--min-bytes", "64", "--max-bytes", "1M"}, ""},
    {{"--message-size", "1K"}, {"--max-bytes", "1K"}, ""},
    {{"-R", "1"}, {"--buffers", "registered"}, ""},
    {{"--local_register", "0"}, {"--buffers", "plain"}, ""},
    {{"-v"}, {"--version"}, ""},
    {{"--validation"}, {"--check", "1"}, ""},
    {{"-c", "-b", "8"}, {"--check", "1", "-b", "8"}, ""},
    {{"-d", "cuda"}, {}, "--device cuda"},
    {{"-T", "mpi_float"}, {}, "-d/--dtype"},
    {{"-f", "-b", "8"}, {}, "step factor"},
    {{"--full"}, {}, "p99"},
    {{"-g", "1"}, {}, "one GPU per rank"},
    {{"--ngpus", "8"}, {}, "mpirun -np NGPUS collbench --device cuda"},
    {{"-t", "2"}, {}, "--backend thread"},
    {{"--nthreads", "2"}, {}, "--backend thread"},
    {{"-a", "1"}, {}, "max over ranks"},
    {{"--average=3"}, {}, "nccl_avg_us"},
    {{"-z", "1"}, {}, "p95/p99"},
    {{"--blocking", "0"}, {}, "--batch"},
    {{"--tail-lat"}, {}, "p95/p99"},
    {{"-G", "10"}, {}, "CUDA graphs"},
    {{"--cudagraph", "1"}, {}, "CUDA graphs"},
    {{"--graph", "png"}, {}, "collplot"},
    {{"-N", "3"}, {}, "collcompare"},
    {{"--run_cycles", "0"}, {}, "collcompare"},
    {{"-C", "1"}, {}, "wall time"},
    {{"--report_cputime", "1"}, {}, "wall time"},
    {{"-p", "1"}, {}, "communicator"},
    {{"--parallel_init", "1"}, {}, "communicator"},
    {{"--agg_iters", "4"}, {}, "--batch"},
    {{"-M", "1G"}, {}, "--dry-run"},
    {{"--mem-limit", "1G"}, {}, "--dry-run"},
    {{"-u", "5"}, {}, "once after timing"},
    {{"--validation-warmup", "5"}, {}, "once after timing"},
    {{"-I"}, {}, "world communicator"},
    {{"--session"}, {}, "world communicator"},
    {{"-D", "cont"}, {}, "contiguous"},
    {{"--ddt", "cont"}, {}, "contiguous"},
    {{"-P", "x"}, {}, "NVTX"},
    {{"--papi", "x"}, {}, "NVTX"},
    {{"--accelerator", "cuda"}, {}, "--device cuda"},
};

TEST(MuscleMemory, EveryRowKeepsItsMeaningOrAnswersInOneLine) {
  std::set<std::string> covered;
  for (const auto& c : kCases) {
    std::string flag = c.args[0].substr(0, c.args[0].find('='));
    covered.insert(flag);
    if (!c.want.empty()) {
      EXPECT_EQ(rewrite_foreign_options(c.args), c.want) << flag;
      continue;
    }
    const std::string e = answer_of(c.args);
    EXPECT_TRUE(e.starts_with(flag + " (")) << e;
    EXPECT_NE(e.find(c.words), std::string::npos) << flag << ": " << e;
    EXPECT_NE(e.find("; accepted: "), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  for (const auto& row : foreign_options()) {
    std::string names = row.names;
    for (std::size_t p = 0; p != std::string::npos;) {
      const std::size_t comma = names.find(',', p);
      const std::string n = names.substr(p, comma == std::string::npos ? std::string::npos : comma - p);
      EXPECT_TRUE(covered.count(n)) << n << " has no case in kCases";
      p = comma == std::string::npos ? comma : comma + 1;
    }
  }
}

TEST(MuscleMemory, CollbenchsOwnLettersStayAsTyped) {
  const V own = {"-b", "8", "-e", "128M", "-f", "2", "-i", "1M", "-n", "20", "-w", "5", "-c", "0", "-d", "float32",
                 "-o", "sum", "-r", "0", "-T", "60", "-f2", "-dfloat32", "--", "-g"};
  EXPECT_EQ(rewrite_foreign_options(own), own);
  EXPECT_EQ(rewrite_foreign_options({"-b", "-1"}), (V{"-b", "-1"})) << "a negative value is not an option";
  EXPECT_EQ(rewrite_foreign_options({"-m", "2:"}), (V{"--min-bytes", "2"}));
  EXPECT_NE(answer_of({"-R", "7"}).find("--buffers"), std::string::npos);
  EXPECT_NE(answer_of({"-x"}).find("-x needs a value"), std::string::npos);
}

TEST(MuscleMemory, NcclTestsStepFactorOne) {
  // -f 1: no factor, nccl-tests' linear -i steps (1 MiB unless -i says otherwise).
  const Settings one = parse_command({"-b", "1M", "-e", "4M", "-f", "1"}).config.cases[0].settings;
  EXPECT_EQ(one.step_bytes, 1u << 20);
  const Settings with_i = parse_command({"-b", "8", "-e", "64", "-f", "1", "-i", "8"}).config.cases[0].settings;
  EXPECT_EQ(with_i.step_bytes, 8u);
  const Settings same = parse_command({"-b", "8", "-e", "8", "-f", "1"}).config.cases[0].settings;
  EXPECT_EQ(same.min_bytes, same.max_bytes);
  EXPECT_THROW(parse_command({"-f", "2", "-i", "8"}), UsageError);
  EXPECT_THROW(parse_command({"-f", "0"}), UsageError);
  // nccl-tests' -c N (check iterations): verified, once.
  EXPECT_TRUE(parse_command({"-c", "5"}).config.cases[0].settings.check);
  EXPECT_FALSE(parse_command({"-c", "0"}).config.cases[0].settings.check);
  // OSU's -m and -x, through the whole command line.
  const Settings osu = parse_command({"-m", "4K:64K", "-x", "7"}).config.cases[0].settings;
  EXPECT_EQ(osu.min_bytes, 4096u);
  EXPECT_EQ(osu.max_bytes, 65536u);
  EXPECT_EQ(osu.warmup, 7);
}

}  // namespace
}  // namespace collbench

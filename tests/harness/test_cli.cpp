// --help, --help-all and --version (harness/plan/cli.cpp): sizes a terminal shows, no test-only
// hooks, no parser placeholders.
#include <gtest/gtest.h>

#include <sstream>

#include "harness/plan/cli.hpp"
#include "harness/plan/help_text.hpp"

namespace collbench {
namespace {

std::string printed(const char* flag) {
  const char* argv[] = {"collbench", flag};
  const CommandLine cl = parse_command_line(2, argv);
  EXPECT_TRUE(cl.help) << flag;
  return cl.help.value_or("");
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(Help, FitsAScreenAndHoldsTheMainOptions) {
  const std::string h = printed("--help");
  const auto lines = lines_of(h);
  EXPECT_LE(lines.size(), 60u) << h;
  for (const auto& l : lines) EXPECT_LE(l.size(), 100u) << l;
  for (const char* must : {"--op", "--algo", "-b, --min-bytes", "-e, --max-bytes", "-f, --step-factor", "-n, --iters",
                           "-w, --warmup", "-c, --check", "--backend", "--json", "--list", "--help-all", "--version"})
    EXPECT_NE(h.find(must), std::string::npos) << must;
  EXPECT_EQ(h.find("--overwrite"), std::string::npos) << "--help-all's";
}

TEST(Help, AllHasEveryOptionAndNoTestHooksOrPlaceholders) {
  for (const char* flag : {"--help", "--help-all"}) {
    const std::string h = printed(flag);
    for (const auto& l : lines_of(h)) EXPECT_LE(l.size(), 100u) << flag << ": " << l;
    EXPECT_EQ(h.find("COLLBENCH_TEST"), std::string::npos) << flag;
    EXPECT_EQ(h.find("NONNEGATIVE"), std::string::npos) << flag;
    EXPECT_EQ(h.find(":POSITIVE"), std::string::npos) << flag;
  }
  const std::string all = printed("--help-all");
  for (const char* must : {"--overwrite", "--keep-samples N", "--print-layouts", "--segment", "--cache-pool",
                           "Exit status:", "Other tools' options", "-g, --ngpus", "-m, --message-size"})
    EXPECT_NE(all.find(must), std::string::npos) << must;
}

TEST(Help, VersionNamesCommitMpiAndBackends) {
  const std::string v = printed("--version");
  EXPECT_TRUE(v.starts_with("collbench ")) << v;
  EXPECT_NE(v.find("(git "), std::string::npos) << v;
  EXPECT_NE(v.find("mpi: "), std::string::npos) << v;  // MPI_Get_library_version's first line
  EXPECT_NE(v.find("backends: gloo, mpi"), std::string::npos) << v;
  EXPECT_NE(v.find("gloo: Gloo "), std::string::npos) << v;  // BackendInfo::library_version
  EXPECT_NE(v.find("thread"), std::string::npos) << v;
}

TEST(HelpText, WrapsAtTheWidthAndKeepsColumns) {
  const std::string e = wrap_entry("  --op OP", "one two three four five six", 12, 24);
  EXPECT_EQ(e, "  --op OP   one two\n            three four\n            five six\n");
  EXPECT_EQ(wrap_entry("  --a-very-long-head", "x", 12, 40), "  --a-very-long-head\n            x\n");
  EXPECT_EQ(wrap_text("  0   short\n", 40), "  0   short\n");
  EXPECT_EQ(wrap_text("  0   aaaa bbbb cccc", 12), "  0   aaaa\n    bbbb\n    cccc\n");
}

}  // namespace
}  // namespace collbench

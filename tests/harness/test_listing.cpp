// `collbench --list` (harness/report/listing.cpp): aligned, sorted, filtered, sized for a terminal.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

#include "harness/report/listing.hpp"

namespace collbench {
namespace {

std::vector<std::string> listing(const ListFilter& f) {
  std::FILE* tmp = std::tmpfile();
  print_algorithm_list(tmp, Registry::get(), f);
  std::rewind(tmp);
  std::vector<std::string> out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, tmp)) {
    std::string l(buf);
    if (!l.empty() && l.back() == '\n') l.pop_back();
    out.push_back(l);
  }
  std::fclose(tmp);
  return out;
}

TEST(Listing, OneOpFitsAScreenLibraryFirst) {
  const auto lines = listing({{Op::allreduce}, "mpi"});  // the CLI's --list --op allreduce: the run's backend
  EXPECT_LE(lines.size(), 40u);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0], "allreduce:");
  // Rows start at column 2; continuation lines are deeper.
  std::vector<std::string> algos;
  for (std::size_t i = 2; i < lines.size() && lines[i].starts_with("  "); ++i)
    if (lines[i][2] != ' ') algos.push_back(lines[i].substr(2, lines[i].find(' ', 2) - 2));  // not a continuation
  ASSERT_GE(algos.size(), 3u);
  EXPECT_EQ(algos[0], "library");
  std::size_t i = 1;
  while (i < algos.size() && algos[i].starts_with("library:")) ++i;
  EXPECT_GT(i, 1u) << "the library's variants after it";
  EXPECT_EQ(algos.at(i), "han") << "then the library's other entries";
  for (std::size_t k = i + 2; k < algos.size(); ++k) EXPECT_LT(algos[k - 1], algos[k]) << "then collbench's, by name";
  EXPECT_NE(std::find(algos.begin(), algos.end(), "ring"), algos.end());
}

TEST(Listing, ColumnsHoldTheLongestNameAndLinesFit) {
  const auto lines = listing({});
  ASSERT_FALSE(lines.empty());
  const std::size_t desc = lines.front().find("description");  // the header row's column
  ASSERT_NE(desc, std::string::npos) << lines.front();
  for (const auto& l : lines) {
    EXPECT_LE(l.size(), 100u) << l;
    if (l.starts_with("broadcast ") && l.find("library:scatter_allgather") != std::string::npos) {
      const std::size_t name_end = l.find(' ', l.find("library:"));
      EXPECT_GE(l.find_first_not_of(' ', name_end), name_end + 2) << "name and backend apart: " << l;
    }
    if (l.starts_with("allreduce ")) {  // every row's description starts in the header's column
      ASSERT_GT(l.size(), desc) << l;
      EXPECT_EQ(l[desc - 1], ' ') << l;
      EXPECT_NE(l[desc], ' ') << l;
    }
  }
}

TEST(Listing, FiltersByBackendAndOp) {
  for (const auto& l : listing({{Op::broadcast}, std::string("thread")}))
    if (l.starts_with("  ") && l[2] != ' ') {  // a row: algo, backend, description
      std::istringstream row(l);
      std::string algo, backend;
      row >> algo >> backend;
      EXPECT_EQ(backend == "any" || backend == "backend", true) << l;
      EXPECT_FALSE(algo.starts_with("library")) << l;
    }
  const auto pp = listing({{Pingpong{}}, std::nullopt});
  EXPECT_EQ(pp[0], "pingpong:");
  EXPECT_LE(pp.size(), 8u);
}

}  // namespace
}  // namespace collbench

// Facts defined once in the code and written again in the docs: the exit statuses
// (harness/exit_status.hpp) against `--help`, the docs' "Exit status" table and the results
// schema's `end` record; the NVTX ranges (harness/runtime/nvtx.hpp) against the docs' "What the
// timeline shows" table. A doc row added, dropped, reordered or reworded at its start fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectives/backends/backend.hpp"
#include "harness/exit_status.hpp"
#include "harness/plan/cli.hpp"
#include "harness/runtime/nvtx.hpp"

namespace collbench {
namespace {

std::string read_file(const char* path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.is_open()) << "cannot read " << path;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// The cells of each body row of the first table after the heading whose text starts with
// `heading` (any level), in order. Cells are split at '|' outside backticks.
std::vector<std::vector<std::string>> table_after(const std::string& md, const std::string& heading) {
  std::istringstream in(md);
  std::string line;
  bool in_section = false, in_table = false;
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    if (!in_section) {
      const auto text = line.find_first_not_of('#');
      in_section = line.starts_with("#") && text != std::string::npos && trim(line.substr(text)).starts_with(heading);
      continue;
    }
    if (!line.starts_with("|")) {
      if (in_table) break;
      if (line.starts_with("#")) break;  // the next section: no table in this one
      continue;
    }
    in_table = true;
    std::vector<std::string> cells;
    std::string cell;
    bool code = false;
    for (std::size_t i = 1; i < line.size(); ++i) {
      if (line[i] == '`') code = !code;
      if (line[i] == '|' && !code) {
        cells.push_back(trim(cell));
        cell.clear();
      } else {
        cell += line[i];
      }
    }
    rows.push_back(cells);
  }
  EXPECT_TRUE(in_section) << "no heading '" << heading << "'";
  EXPECT_GE(rows.size(), 2u) << "no table under '" << heading << "'";
  if (rows.size() >= 2) rows.erase(rows.begin(), rows.begin() + 2);  // the header and the |---| line
  return rows;
}

// ------------------------------------------------------------------ exit statuses

TEST(ExitStatus, TableInValueOrderWithDistinctNames) {
  std::set<std::string_view> names{kSignalStatusName};
  for (std::size_t i = 0; i < kExitStatuses.size(); ++i) {
    EXPECT_EQ(code(kExitStatuses[i].status), static_cast<int>(i));
    EXPECT_TRUE(names.insert(kExitStatuses[i].name).second) << kExitStatuses[i].name;
    EXPECT_FALSE(kExitStatuses[i].meaning.empty());
  }
  for (int sig : kStopSignals) EXPECT_GT(signal_exit_status(sig), code(kExitStatuses.back().status));
  EXPECT_EQ(signal_exit_status(SIGTERM), 143);  // what a shell and Slurm report
  EXPECT_EQ(signal_statuses_text(), "143 / 130");
}

TEST(ExitStatus, HelpPrintsTheTable) {
  const char* argv[] = {"collbench", "--help-all"};
  const CommandLine cl = parse_command_line(2, argv);
  ASSERT_TRUE(cl.help);
  const std::string section = exit_status_help();
  // --help-all wraps lines at 100 columns: joined again, the section is there as generated.
  std::string joined;
  std::istringstream help(*cl.help);
  for (std::string l; std::getline(help, l);) {
    if (!joined.empty() && l.find_first_not_of(' ') == 4)  // a status line's continuation
      joined.back() = ' ', joined += l.substr(4) + "\n";
    else
      joined += l + "\n";
  }
  EXPECT_NE(joined.find(section), std::string::npos) << *cl.help;
  std::istringstream lines(section);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "Exit status:");
  for (const auto& e : kExitStatuses) {
    std::getline(lines, line);
    EXPECT_TRUE(trim(line).starts_with(std::to_string(code(e.status)) + " ")) << line;
    EXPECT_TRUE(line.ends_with(e.meaning)) << line;
  }
  std::getline(lines, line);
  EXPECT_TRUE(trim(line).starts_with(signal_statuses_text())) << line;
  EXPECT_FALSE(std::getline(lines, line)) << "one line per status: " << line;
}

// docs/reliability.md "Exit status": | status | meaning | results file |, one row per status in
// order, each meaning starting with the code's one line (the rest is the docs' detail).
TEST(ExitStatus, DocsTableMatches) {
  const auto rows = table_after(read_file(COLLBENCH_EXIT_STATUS_DOC), "Exit status");
  std::vector<std::pair<std::string, std::string_view>> want;
  for (const auto& e : kExitStatuses) want.emplace_back(std::to_string(code(e.status)), e.meaning);
  want.emplace_back(signal_statuses_text(), kSignalStatusMeaning);
  ASSERT_EQ(rows.size(), want.size()) << COLLBENCH_EXIT_STATUS_DOC << ": one row per exit status";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    ASSERT_GE(rows[i].size(), 2u);
    EXPECT_EQ(rows[i][0], want[i].first) << COLLBENCH_EXIT_STATUS_DOC << " row " << i + 1;
    EXPECT_TRUE(rows[i][1].starts_with(want[i].second))
        << COLLBENCH_EXIT_STATUS_DOC << " row " << rows[i][0] << ": the meaning must start with \"" << want[i].second
        << "\", got \"" << rows[i][1] << "\"";
  }
}

// The README quotes exit statuses in prose ("--expect: exit 5"): each one it names is the enum's.
TEST(ExitStatus, ReadmeQuotesTheEnum) {
  const std::string readme = read_file(COLLBENCH_README);
  const std::string gate = "acceptance gate: exit ";
  const auto at = readme.find(gate);
  ASSERT_NE(at, std::string::npos) << "README.md: the --expect row";
  EXPECT_EQ(std::stoi(readme.substr(at + gate.size())), code(ExitStatus::below_expectation));
}

// The results schema's `end` record names exactly the statuses an end record can carry.
TEST(ExitStatus, SchemaEndRecordEnumMatches) {
  const auto schema = nlohmann::json::parse(read_file(COLLBENCH_SCHEMA_FILE));
  std::set<int> want;
  for (const auto& e : kExitStatuses)
    if (e.in_end_record) want.insert(code(e.status));
  for (int sig : kStopSignals) want.insert(signal_exit_status(sig));
  const auto& field = schema.at("$defs").at("end").at("properties").at("exit_status");
  ASSERT_TRUE(field.contains("enum")) << field.dump();
  EXPECT_EQ(field.at("enum").get<std::set<int>>(), want) << field.dump();
}

// ------------------------------------------------------------------ NVTX ranges

TEST(NvtxRanges, OneRowPerKindAndNamesFilled) {
  std::set<nvtx::RangeKind> kinds;
  for (const auto& r : nvtx::kRanges) {
    EXPECT_TRUE(kinds.insert(r.kind).second) << r.pattern;
    EXPECT_EQ(&nvtx::range_info(r.kind), &r);
  }
  EXPECT_EQ(nvtx::range_name(nvtx::RangeKind::point, {{"op", "allreduce"}, {"algo", "ring"}, {"bytes", "1048576"}}),
            "allreduce/ring 1048576B");
  EXPECT_EQ(nvtx::range_name(nvtx::RangeKind::iter, {{"point", "allreduce/ring 8B"}}), "iter allreduce/ring 8B");
  EXPECT_EQ(nvtx::range_name(nvtx::RangeKind::pingpong,
                             {{"method", "latency"}, {"src", "0"}, {"dst", "1"}, {"bytes", "8"}}),
            "pingpong/latency 0-1 8B");
}

// docs/profiling.md "What the timeline shows": | range | level | what it spans | value |, one
// row per kRanges entry in order ("—" for none). harness.nvtx checks the recorded ranges
// against the same table.
TEST(NvtxRanges, DocsTableMatches) {
  const auto rows = table_after(read_file(COLLBENCH_NVTX_DOC), "What the timeline shows");
  ASSERT_EQ(rows.size(), nvtx::kRanges.size()) << COLLBENCH_NVTX_DOC << ": one row per range";
  auto or_dash = [](std::string_view s) { return s.empty() ? std::string("—") : std::string(s); };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = nvtx::kRanges[i];
    ASSERT_GE(rows[i].size(), 4u);
    EXPECT_EQ(rows[i][0], "`" + std::string(r.pattern) + "`") << COLLBENCH_NVTX_DOC << " row " << i + 1;
    EXPECT_EQ(rows[i][1], or_dash(r.levels)) << r.pattern;
    EXPECT_TRUE(rows[i][2].starts_with(r.spans)) << r.pattern << ": must start with \"" << r.spans << "\", got \""
                                                  << rows[i][2] << "\"";
    if (r.payload.empty())
      EXPECT_EQ(rows[i][3], "—") << r.pattern;
    else
      EXPECT_TRUE(rows[i][3].starts_with(r.payload)) << r.pattern << ": " << rows[i][3];
  }
}

// The schema's backend list and run-record version keys are the registry's (backend.hpp).
TEST(Backends, SchemaMatchesRegistry) {
  const auto schema = nlohmann::json::parse(read_file(COLLBENCH_SCHEMA_FILE));
  std::set<std::string> in_schema, registered;
  for (const auto& b : schema["$defs"]["backend"]["enum"]) in_schema.insert(b.get<std::string>());
  for (const auto& b : Backends::get().all()) registered.insert(b.name);
  EXPECT_EQ(in_schema, registered);
  std::set<std::string> keys_in_schema;
  const auto& run = schema["$defs"]["run"]["properties"]["versions"];
  for (const auto& [k, v] : run["properties"].items()) keys_in_schema.insert(k);
  const auto keys = Backends::get().version_keys();
  EXPECT_EQ(keys_in_schema, std::set<std::string>(keys.begin(), keys.end()));
  EXPECT_EQ(run["required"], nlohmann::json::array({"collbench"}));
}

// Every backend names a bootstrap that is built, and devices it can be asked for.
TEST(Backends, EachOneIsWhole) {
  for (const auto& b : Backends::get().all()) {
    SCOPED_TRACE(b.name);
    EXPECT_FALSE(b.bootstraps.empty());
    for (const auto& name : b.bootstraps) EXPECT_NE(Backends::get().find_bootstrap(name), nullptr) << name;
    EXPECT_FALSE(b.devices.empty());
    EXPECT_FALSE(b.summary.empty());
    EXPECT_TRUE(b.make);
  }
  EXPECT_NE(Backends::get().find("thread"), nullptr);
  EXPECT_NE(Backends::get().find("mpi"), nullptr);
  EXPECT_NE(Backends::get().find("nccl"), nullptr);
}

}  // namespace
}  // namespace collbench


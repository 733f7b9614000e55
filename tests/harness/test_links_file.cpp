// --links FILE: the link rates shared by the runs of a job; read back exactly, reused only on
// the same backend, device and hosts, and nothing else accepted.
#include <gtest/gtest.h>

#include "collectives/core/error.hpp"
#include "harness/results/links_file.hpp"

namespace collbench {
namespace {

LinkRate rate(double GBps, const char* src_host, const char* dst_host) {
  return LinkRate{GBps, 0, 1, 1 << 20, 30, 0.04, src_host, dst_host, ""};
}

TEST(LinksFile, RoundTripsAndReusesOnTheSameHostsOnly) {
  LinksFile f{"mpi", "cpu", {}};
  record_rate(f, "intra", rate(11.5, "n1", "n1"), "run1");
  record_rate(f, "inter", rate(1.2, "n1", "n2"), "run1");
  const LinksFile back = parse_links_file(format_links_file(f), "links.json");
  ASSERT_EQ(back.rates.size(), 2u);
  const auto intra = reusable_rate(back, "mpi", "cpu", "intra", "n1", "n1");
  ASSERT_TRUE(intra);
  EXPECT_DOUBLE_EQ(intra->GBps, 11.5);
  EXPECT_EQ(intra->samples, 30);
  EXPECT_DOUBLE_EQ(intra->spread, 0.04);
  EXPECT_EQ(intra->reused_from, "links.json");
  EXPECT_EQ(back.rates[0].run_id, "run1");
  EXPECT_FALSE(reusable_rate(back, "mpi", "cpu", "intra", "n2", "n2")) << "another node";
  EXPECT_FALSE(reusable_rate(back, "thread", "cpu", "intra", "n1", "n1")) << "another backend";
  EXPECT_FALSE(reusable_rate(back, "mpi", "cuda", "inter", "n1", "n2")) << "another device";
  EXPECT_TRUE(reusable_rate(back, "mpi", "cpu", "inter", "n1", "n2"));
}

TEST(LinksFile, ARecordReplacesTheSameClassAndHosts) {
  LinksFile f{"mpi", "cpu", {}};
  record_rate(f, "intra", rate(11.5, "n1", "n1"), "run1");
  record_rate(f, "intra", rate(9.0, "n1", "n1"), "run2");
  record_rate(f, "intra", rate(8.0, "n2", "n2"), "run2");
  ASSERT_EQ(f.rates.size(), 2u);
  EXPECT_DOUBLE_EQ(reusable_rate(f, "mpi", "cpu", "intra", "n1", "n1")->GBps, 9.0);
}

TEST(LinksFile, TrustsNothingItReads) {
  const std::string good = format_links_file(LinksFile{"mpi", "cpu", {{"intra", rate(11.5, "n1", "n1"), "r"}}});
  EXPECT_NO_THROW(parse_links_file(good, "f"));
  const auto replaced = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  for (const std::string& text :
       {std::string("not json"), std::string("[]"), std::string("{}"), replaced("collbench-links/1", "collbench-links/9"),
        replaced("\"intra\"", "\"sideways\""), replaced("11.5", "-1"), replaced("11.5", "1e300"),
        replaced("11.5", "\"fast\""), replaced("\"samples\": 30", "\"samples\": 0"),
        replaced("\"src_host\": \"n1\"", "\"src_host\": 7"), good.substr(0, good.size() / 2)}) {
    try {
      parse_links_file(text, "links.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--links links.json: "), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace collbench

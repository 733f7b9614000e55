#include "harness/report/p2p_table.hpp"

#include <algorithm>
#include <optional>

#include "harness/report/text.hpp"

namespace collbench {
namespace {

constexpr int kClassWidth = 23;  // "  %10s %10s": time, bandwidth

struct ClassSummary {
  int pairs = 0;
  std::optional<double> time_us, bw_GBps;  // medians over the class's measured pairs
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

ClassSummary summarize_class(const std::vector<PointResult>& row, const char* link) {
  ClassSummary c;
  std::vector<double> t, bw;
  for (const auto& r : row) {
    if (r.link != link) continue;
    ++c.pairs;
    if (r.skipped || !r.time_us) continue;
    t.push_back(r.time_us->p50);
    bw.push_back(r.algbw_GBps.value_or(0));
  }
  if (!t.empty()) {
    c.time_us = median(t);
    c.bw_GBps = median(bw);
  }
  return c;
}

std::string pair_name(const PointResult& r, const std::vector<std::string>& hosts) {
  const auto host = [&](int rank) {
    return rank < static_cast<int>(hosts.size()) ? hosts[static_cast<std::size_t>(rank)] : std::string("?");
  };
  std::string s = std::to_string(*r.src) + "-" + std::to_string(*r.dst) + " (" + host(*r.src);
  if (r.link == "inter") s += "-" + host(*r.dst);
  return s + ")";
}

// "intra 0-1 (n1)", "inter: median of 3 pairs" or "inter: none".
std::string class_title(const std::vector<PointResult>& row, const char* link, const std::vector<std::string>& hosts) {
  std::vector<const PointResult*> in;
  for (const auto& r : row)
    if (r.link == link) in.push_back(&r);
  if (in.empty()) return std::string(link) + ": none";
  if (in.size() == 1) return std::string(link) + " " + pair_name(*in.front(), hosts);
  return std::string(link) + ": median of " + std::to_string(in.size()) + " pairs";
}

void print_class(std::FILE* out, const ClassSummary& c) {
  if (!c.time_us) {
    std::fprintf(out, "  %10s %10s", "-", "-");
    return;
  }
  std::fprintf(out, "  %10.2f %10.3f", *c.time_us, *c.bw_GBps);
}

const char* method_description(P2pMethod m) {
  for (const auto& i : kP2pMethods)
    if (i.method == m) return i.description;
  return "";
}

}  // namespace

P2pTable::P2pTable(std::FILE* out, const P2pBlock& block, std::vector<std::string> host_of_rank)
    : out_(out), block_(block), host_of_rank_(std::move(host_of_rank)) {}

void P2pTable::begin() {
  const Settings& s = block_.settings;
  std::fprintf(out_, "#\n# pingpong %s  (%s)\n", p2p_method_name(block_.method), method_description(block_.method));
  std::fprintf(out_,
               "#   per pair: %d back-to-back iters + %d warm-up, the other ranks waiting; time = p50 per message, "
               "bw = bytes/time (GB = 1e9 B); pairs %s\n",
               s.iters, s.warmup, pairs_text(s.pairs).c_str());
  std::fflush(out_);
}

void P2pTable::print_column_header(const std::vector<PointResult>& row) const {
  std::string titles = "#" + std::string(11, ' ');
  for (const char* link : {"intra", "inter"})
    titles += text::centered(class_title(row, link, host_of_rank_), kClassWidth);
  std::fprintf(out_, "%s  %8s\n", titles.c_str(), "inter/");
  std::fprintf(out_, "#%11s  %10s %10s  %10s %10s  %8s %6s\n", "size", "time", "bw", "time", "bw", "intra", "#wrong");
  std::fprintf(out_, "#%11s  %10s %10s  %10s %10s  %8s %6s\n", "(B)", "(us)", "(GB/s)", "(us)", "(GB/s)", "(time)", "");
}

void P2pTable::add_row(const std::vector<PointResult>& row) {
  if (row.empty()) return;
  if (rows_.empty()) print_column_header(row);
  rows_.push_back(row);
  const ClassSummary intra = summarize_class(row, "intra"), inter = summarize_class(row, "inter");
  std::fprintf(out_, "%12llu", static_cast<unsigned long long>(row.front().bytes));
  print_class(out_, intra);
  print_class(out_, inter);
  if (intra.time_us && inter.time_us && *intra.time_us > 0)
    std::fprintf(out_, "  %7.1fx", *inter.time_us / *intra.time_us);
  else
    std::fprintf(out_, "  %8s", "-");
  std::uint64_t wrong = 0;
  bool checked = false;
  for (const auto& r : row) {
    wrong += r.wrong;
    checked = checked || r.checked;
  }
  if (checked)
    std::fprintf(out_, " %6llu\n", static_cast<unsigned long long>(wrong));
  else
    std::fprintf(out_, " %6s\n", "N/A");
  std::fflush(out_);
}

void P2pTable::print_matrix(const std::vector<PointResult>& row, bool bandwidth) const {
  int n = 0;
  for (const auto& r : row) n = std::max({n, *r.src + 1, *r.dst + 1});
  std::fprintf(out_, "# %s matrix at %llu B: %s; row = src, column = dst; * = across nodes\n",
               p2p_method_name(block_.method), static_cast<unsigned long long>(row.front().bytes),
               bandwidth ? "bandwidth (GB/s)" : "p50 time (us)");
  std::fprintf(out_, "#     ");
  for (int c = 0; c < n; ++c) std::fprintf(out_, " %8d ", c);
  std::fprintf(out_, "\n");
  for (int s = 0; s < n; ++s) {
    std::fprintf(out_, "# %4d", s);
    for (int d = 0; d < n; ++d) {
      const auto it =
          std::find_if(row.begin(), row.end(), [&](const PointResult& r) { return *r.src == s && *r.dst == d; });
      if (it == row.end() || it->skipped || !it->time_us) {
        std::fprintf(out_, " %8s ", s == d ? "-" : "");
        continue;
      }
      const double v = bandwidth ? it->algbw_GBps.value_or(0) : it->time_us->p50;
      std::fprintf(out_, bandwidth ? " %8.3f%c" : " %8.2f%c", v, it->link == "inter" ? '*' : ' ');
    }
    std::fprintf(out_, "\n");
  }
}

void P2pTable::end() {
  if (!rows_.empty() && block_.settings.pairs.kind == PairSpec::Kind::all) {
    print_matrix(rows_.front(), false);
    print_matrix(rows_.back(), true);
  }
  std::fflush(out_);
}

}  // namespace collbench

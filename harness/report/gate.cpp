#include "harness/report/gate.hpp"

#include <set>

namespace collbench {

std::vector<ExpectVerdict> check_expectations(const Expectations& x, const PointResult& r, const TunedLayout& run_layout) {
  std::vector<ExpectVerdict> out;
  if (r.ddp) return out;
  for (const ExpectEntry& e : x.entries()) {
    if (e.op != r.op || (e.algo != "any" && e.algo != r.algo)) continue;
    if (e.layout && !(*e.layout == run_layout)) continue;
    if (r.bytes < e.min_bytes || (e.max_bytes && r.bytes > *e.max_bytes)) continue;
    if ((e.dtype && *e.dtype != r.dtype) || (e.in_place && *e.in_place != r.in_place)) continue;
    ExpectVerdict v;
    v.entry = &e;
    if (e.min_busbw_GBps) {
      v.metric = "busbw_GBps";
      v.limit = *e.min_busbw_GBps * (1 - e.tolerance);
      if (r.busbw_GBps && !r.skipped) v.measured = *r.busbw_GBps;
      v.pass = v.measured && *v.measured >= v.limit;
    } else {
      v.metric = "time_us";
      v.limit = *e.max_time_us * (1 + e.tolerance);
      if (r.time_us && !r.skipped) v.measured = r.time_us->p50;
      v.pass = v.measured && *v.measured <= v.limit;
    }
    out.push_back(v);
  }
  return out;
}
namespace {

std::string label(const PointResult& r, const TunedLayout& layout) {
  std::string s = r.op + "/" + r.algo + " " + layout.label() + " " + r.dtype;
  if (r.in_place) s += " in-place";
  if (r.src && r.dst) s += " " + std::to_string(*r.src) + "-" + std::to_string(*r.dst);
  return s + " " + std::to_string(r.bytes) + "B";
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 100 ? "%.1f" : v >= 1 ? "%.3g" : "%.3g", v);
  return buf;
}

std::string reference(const ExpectVerdict& v) {
  return number(v.entry->min_busbw_GBps ? *v.entry->min_busbw_GBps : *v.entry->max_time_us);
}

}  // namespace

void Gate::add(const PointResult& r) {
  for (ExpectVerdict& v : check_expectations(x_, r, layout_)) rows_.push_back({label(r, layout_), v});
}

long Gate::failed() const {
  long n = 0;
  for (const Row& row : rows_) n += !row.v.pass;
  return n;
}

void Gate::print(std::FILE* out) const {
  std::fprintf(out, "#\n# acceptance (--expect %s): %ld check%s, %ld below the reference\n", x_.path().c_str(), checked(),
               checked() == 1 ? "" : "s", failed());
  if (!rows_.empty()) {
    std::fprintf(out, "# %-44s %-13s %10s %10s %5s %10s  %-7s %s\n", "point", "metric", "measured", "reference", "tol",
                 "limit", "verdict", "entry");
    for (const Row& row : rows_) {
      const ExpectVerdict& v = row.v;
      const bool busbw = v.metric == "busbw_GBps";
      char tol[16];
      std::snprintf(tol, sizeof tol, "%.0f%%", v.entry->tolerance * 100);
      std::fprintf(out, "  %-44s %-13s %10s %10s %5s %10s  %-7s %s:%d\n", row.point.c_str(),
                   busbw ? "busbw GB/s >=" : "p50 us <=", v.measured ? number(*v.measured).c_str() : "skipped",
                   reference(v).c_str(), tol, number(v.limit).c_str(), v.pass ? "pass" : "FAIL", x_.path().c_str(),
                   v.entry->line);
    }
  }
  std::set<const ExpectEntry*> used;
  for (const Row& row : rows_) used.insert(row.v.entry);
  std::string unused;
  for (const ExpectEntry& e : x_.entries())
    if (!used.count(&e)) unused += (unused.empty() ? "" : ", ") + x_.path() + ":" + std::to_string(e.line);
  if (!unused.empty()) std::fprintf(out, "# entries that named no point of this run (not checked): %s\n", unused.c_str());
  std::fflush(out);
}

std::string Gate::failures() const {
  std::string s;
  for (const Row& row : rows_) {
    if (row.v.pass) continue;
    const bool busbw = row.v.metric == "busbw_GBps";
    s += (s.empty() ? "" : "; ") + row.point + " ";
    if (!row.v.measured) s += "skipped (expected " + std::string(busbw ? "busbw >= " : "p50 <= ") + number(row.v.limit) + ")";
    else if (busbw) s += "busbw " + number(*row.v.measured) + " < " + number(row.v.limit) + " GB/s";
    else s += "p50 " + number(*row.v.measured) + " > " + number(row.v.limit) + " us";
  }
  return s;
}

}  // namespace collbench

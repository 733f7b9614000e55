#include "harness/results/links_file.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "collectives/core/error.hpp"

namespace collbench {
namespace {

using plain_json = nlohmann::json;  // not report_json.cpp's ordered_json

[[noreturn]] void bad(const std::string& path, const std::string& why) {
  throw UsageError("--links " + path + ": " + why + "; accepted: a file collbench wrote with --links (or none: it is "
                                                    "created), schema " + kLinksSchema);
}

const plain_json& field(const plain_json& o, const char* name, plain_json::value_t type, const std::string& path) {
  const auto it = o.find(name);
  const bool number = type == plain_json::value_t::number_float;
  if (it == o.end() || !(number ? it->is_number() : it->type() == type))
    bad(path, std::string("'") + name + "' missing or of the wrong type");
  return *it;
}

double finite(const plain_json& o, const char* name, double lo, double hi, const std::string& path) {
  const double v = field(o, name, plain_json::value_t::number_float, path).get<double>();
  if (!std::isfinite(v) || v < lo || v > hi) bad(path, std::string("'") + name + "' out of range");
  return v;
}

}  // namespace

LinksFile parse_links_file(const std::string& text, const std::string& path) {
  plain_json j;
  try {
    j = plain_json::parse(text);
  } catch (const plain_json::exception&) {
    bad(path, "not JSON");
  }
  if (!j.is_object()) bad(path, "not a JSON object");
  if (field(j, "schema", plain_json::value_t::string, path) != kLinksSchema) bad(path, "another schema");
  LinksFile f;
  f.backend = field(j, "backend", plain_json::value_t::string, path).get<std::string>();
  f.device = field(j, "device", plain_json::value_t::string, path).get<std::string>();
  const plain_json& rates = field(j, "rates", plain_json::value_t::array, path);
  if (rates.size() > 64) bad(path, "more rates than a job has link classes and hosts for");
  for (const plain_json& r : rates) {
    if (!r.is_object()) bad(path, "a rate that is not an object");
    LinksFile::Entry e;
    e.link = field(r, "link", plain_json::value_t::string, path).get<std::string>();
    if (e.link != "intra" && e.link != "inter") bad(path, "'link' is neither intra nor inter");
    e.rate.GBps = finite(r, "GBps", 1e-9, 1e6, path);
    e.rate.src = static_cast<int>(finite(r, "src", 0, 1 << 24, path));
    e.rate.dst = static_cast<int>(finite(r, "dst", 0, 1 << 24, path));
    e.rate.bytes = static_cast<std::uint64_t>(finite(r, "bytes", 1, 1ull << 40, path));
    e.rate.samples = static_cast<int>(finite(r, "samples", 1, 1 << 20, path));
    e.rate.spread = finite(r, "spread", 0, 1e6, path);
    e.rate.src_host = field(r, "src_host", plain_json::value_t::string, path).get<std::string>();
    e.rate.dst_host = field(r, "dst_host", plain_json::value_t::string, path).get<std::string>();
    e.run_id = field(r, "run_id", plain_json::value_t::string, path).get<std::string>();
    e.rate.reused_from = path;
    f.rates.push_back(std::move(e));
  }
  return f;
}

std::string format_links_file(const LinksFile& f) {
  plain_json rates = plain_json::array();
  for (const auto& e : f.rates)
    rates.push_back({{"link", e.link},
                     {"GBps", e.rate.GBps},
                     {"src", e.rate.src},
                     {"dst", e.rate.dst},
                     {"src_host", e.rate.src_host},
                     {"dst_host", e.rate.dst_host},
                     {"bytes", e.rate.bytes},
                     {"samples", e.rate.samples},
                     {"spread", e.rate.spread},
                     {"run_id", e.run_id}});
  return plain_json{{"schema", kLinksSchema}, {"backend", f.backend}, {"device", f.device}, {"rates", rates}}.dump(1) +
         "\n";
}

std::optional<LinkRate> reusable_rate(const LinksFile& f, const std::string& backend, const std::string& device,
                                      const std::string& link, const std::string& src_host, const std::string& dst_host) {
  if (f.backend != backend || f.device != device) return std::nullopt;
  for (const auto& e : f.rates)
    if (e.link == link && e.rate.src_host == src_host && e.rate.dst_host == dst_host) return e.rate;
  return std::nullopt;
}

void record_rate(LinksFile& f, const std::string& link, const LinkRate& rate, const std::string& run_id) {
  std::erase_if(f.rates, [&](const LinksFile::Entry& e) {
    return e.link == link && e.rate.src_host == rate.src_host && e.rate.dst_host == rate.dst_host;
  });
  LinkRate r = rate;
  r.reused_from.clear();
  f.rates.push_back({link, r, run_id});
}

}  // namespace collbench

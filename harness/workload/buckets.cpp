#include "harness/workload/buckets.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "collectives/core/error.hpp"
#include "harness/workload/text_file.hpp"

namespace collbench::workload {

std::vector<Bucket> assign_buckets(const Model& m, std::span<const std::size_t> ready, std::uint64_t cap_bytes,
                                   std::uint64_t first_cap_bytes, std::optional<DType> grad_dtype) {
  if (cap_bytes == 0 || first_cap_bytes == 0)
    throw UsageError("bucket caps must be at least 1 byte (bucket cap " + std::to_string(cap_bytes) +
                     ", first bucket cap " + std::to_string(first_cap_bytes) + ")");
  std::vector<bool> seen(m.params.size(), false);
  for (std::size_t i : ready) {
    if (i >= seen.size() || seen[i]) throw std::invalid_argument("assign_buckets: ready order is not a permutation");
    seen[i] = true;
  }
  if (ready.size() != m.params.size()) throw std::invalid_argument("assign_buckets: ready order misses parameters");

  // A dtype's open bucket and whether it is still that dtype's first (the limit iterator of
  // compute_bucket_assignment_by_size advances only when a bucket closes). Few dtypes: a vector.
  struct Open {
    Bucket bucket;
    bool first = true;
  };
  std::vector<Open> open;
  std::vector<Bucket> out;
  for (std::size_t i : ready) {
    const Param& p = m.params[i];
    const DType t = grad_dtype.value_or(p.dtype);
    auto o = std::find_if(open.begin(), open.end(), [t](const Open& x) { return x.bucket.dtype == t; });
    if (o == open.end()) o = open.insert(open.end(), Open{Bucket{{}, t, 0, 0}, true});
    const auto n = static_cast<std::uint64_t>(p.numel());
    o->bucket.params.push_back(i);
    o->bucket.count += n;
    o->bucket.bytes += n * dtype_size(t);
    if (o->bucket.bytes >= (o->first ? first_cap_bytes : cap_bytes)) {
      out.push_back(std::move(o->bucket));
      o->bucket = Bucket{{}, t, 0, 0};
      o->first = false;
    }
  }
  // The leftovers close newest dtype first: reducer.cpp walks its std::unordered_map of open
  // buckets, which libstdc++ iterates newest key first (PyTorch 1.13.1's
  // _compute_bucket_assignment_by_size, measured: tests/harness/ddp_torch.py checks it).
  for (auto o = open.rbegin(); o != open.rend(); ++o)
    if (!o->bucket.params.empty()) out.push_back(std::move(o->bucket));
  return out;
}

std::vector<std::size_t> reverse_registration_order(const Model& m) {
  std::vector<std::size_t> order(m.params.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = order.size() - 1 - i;
  return order;
}

namespace {

// Collects names in order against the model, refusing the first unknown or repeated one;
// `where` is "line 7" (text) or "entry 3" (JSON).
class Orderer {
 public:
  Orderer(const std::string& path, const Model& m) : path_(path), m_(m) {
    for (std::size_t i = 0; i < m.params.size(); ++i) index_.emplace(m.params[i].name, i);
  }

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw UsageError("ready order " + path_ + ": " + (where.empty() ? "" : where + ": ") + what);
  }

  void add(const std::string& where, const std::string& name) {
    const auto it = index_.find(name);
    if (it == index_.end()) fail(where, "'" + name + "' is not a parameter of model " + m_.name);
    const auto [prev, fresh] = first_at_.emplace(name, where);
    if (!fresh) fail(where, "'" + name + "' listed twice (first at " + prev->second + ")");
    order_.push_back(it->second);
  }

  std::vector<std::size_t> finish() const {
    if (order_.size() != m_.params.size())
      for (const Param& p : m_.params)
        if (!first_at_.contains(p.name))
          fail("", "'" + p.name + "' is missing (" + std::to_string(m_.params.size() - order_.size()) + " of " +
                       std::to_string(m_.params.size()) + " parameters missing; each must be listed exactly once)");
    return order_;
  }

 private:
  std::string path_;
  const Model& m_;
  std::unordered_map<std::string, std::size_t> index_;
  std::unordered_map<std::string, std::string> first_at_;
  std::vector<std::size_t> order_;
};

bool looks_like_json(const std::string& text, const std::string& path) {
  if (std::filesystem::path(path).extension() == ".json") return true;
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && text[first] == '[';
}

}  // namespace

std::vector<std::size_t> parse_ready_order(const std::string& text, const std::string& path, const Model& m) {
  Orderer o(path, m);
  if (looks_like_json(text, path)) {
    nlohmann::json list;
    try {
      list = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      o.fail("line " + std::to_string(line_of_byte(text, e.byte)),
             "malformed JSON (" + json_parse_reason(e.what()) + ")");
    }
    if (!list.is_array()) o.fail("", "not a JSON list of parameter names");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string where = "entry " + std::to_string(i);
      if (!list[i].is_string()) o.fail(where, list[i].dump() + " is not a parameter name");
      o.add(where, list[i].get<std::string>());
    }
    return o.finish();
  }
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    line.erase(std::min(line.find('#'), line.size()));
    const std::size_t b = line.find_first_not_of(" \t\r"), e = line.find_last_not_of(" \t\r");
    if (b == std::string::npos) continue;
    o.add("line " + std::to_string(n), line.substr(b, e - b + 1));
  }
  return o.finish();
}

std::vector<std::size_t> load_ready_order(const std::string& path, const Model& m) {
  return parse_ready_order(read_text_file(path, "ready order"), path, m);
}

}  // namespace collbench::workload

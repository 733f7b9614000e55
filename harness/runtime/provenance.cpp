#include "harness/runtime/provenance.hpp"

#include <hwloc.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "harness/runtime/control.hpp"
#include "harness/runtime/topology.hpp"

namespace collbench {

std::string int_ranges_text(std::vector<int> cpus) {
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string s;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    s += (s.empty() ? "" : ",") + std::to_string(cpus[i]) + (j > i ? "-" + std::to_string(cpus[j]) : "");
    i = j + 1;
  }
  return s;
}

std::string cpu_model_of(std::string_view text) {
  // x86: "model name"; arm64: no model name, but "CPU implementer"/"CPU part" (left to hwloc's
  // CPUModel attribute); POWER: "cpu". The first match wins (every core repeats it).
  for (const char* key : {"model name", "Processor", "cpu model", "cpu"}) {
    std::size_t at = 0;
    while (at < text.size()) {
      const std::size_t end = std::min(text.find('\n', at), text.size());
      const std::string_view line = text.substr(at, end - at);
      at = end + 1;
      const std::size_t colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      std::string_view k = line.substr(0, colon);
      while (!k.empty() && (k.back() == ' ' || k.back() == '\t')) k.remove_suffix(1);
      if (k != key) continue;
      std::string_view v = line.substr(colon + 1);
      while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
      while (!v.empty() && (v.back() == ' ' || v.back() == '\r')) v.remove_suffix(1);
      if (!v.empty()) return std::string(v);
    }
  }
  return "";
}

std::optional<std::array<double, 3>> loadavg_of(std::string_view text) {
  const std::string s(text);  // strtod needs a terminated string
  std::array<double, 3> out{};
  const char* at = s.c_str();
  for (double& v : out) {
    char* end = nullptr;
    v = std::strtod(at, &end);
    if (end == at || !std::isfinite(v) || v < 0) return std::nullopt;  // no number, inf, NaN or negative
    at = end;
  }
  return out;
}

namespace {

// hwloc's topology for the lifetime of one call.
class HwlocTopology {
 public:
  HwlocTopology() {
    if (hwloc_topology_init(&t_) != 0) return;
    ok_ = hwloc_topology_load(t_) == 0;
  }
  ~HwlocTopology() {
    if (t_) hwloc_topology_destroy(t_);
  }
  HwlocTopology(const HwlocTopology&) = delete;
  HwlocTopology& operator=(const HwlocTopology&) = delete;
  bool ok() const { return ok_; }
  hwloc_topology_t get() const { return t_; }

 private:
  hwloc_topology_t t_ = nullptr;
  bool ok_ = false;
};

int count(hwloc_topology_t t, hwloc_obj_type_t type) { return std::max(0, hwloc_get_nbobjs_by_type(t, type)); }

std::vector<CacheSummary> caches_of(hwloc_topology_t t) {
  struct Kind {
    hwloc_obj_type_t type;
    int level;
  };
  static constexpr Kind kKinds[] = {{HWLOC_OBJ_L1CACHE, 1},  {HWLOC_OBJ_L1ICACHE, 1}, {HWLOC_OBJ_L2CACHE, 2},
                                    {HWLOC_OBJ_L2ICACHE, 2}, {HWLOC_OBJ_L3CACHE, 3},  {HWLOC_OBJ_L3ICACHE, 3},
                                    {HWLOC_OBJ_L4CACHE, 4},  {HWLOC_OBJ_L5CACHE, 5}};
  std::vector<CacheSummary> out;
  for (const Kind& k : kKinds) {
    const int n = count(t, k.type);
    // Instances of one level may differ (big.LITTLE): one entry per distinct size.
    std::map<std::pair<std::string, std::uint64_t>, int> sizes;
    for (int i = 0; i < n; ++i) {
      const hwloc_obj_t o = hwloc_get_obj_by_type(t, k.type, static_cast<unsigned>(i));
      if (!o || !o->attr) continue;
      const auto& c = o->attr->cache;
      const char* type = c.type == HWLOC_OBJ_CACHE_DATA ? "data"
                         : c.type == HWLOC_OBJ_CACHE_INSTRUCTION ? "instruction"
                                                                 : "unified";
      ++sizes[{type, c.size}];
    }
    for (const auto& [key, instances] : sizes) out.push_back({k.level, key.first, key.second, instances});
  }
  return out;
}

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<int> affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

// The OS numbers of the NUMA nodes whose CPUs intersect `cpus`.
std::string numa_of(hwloc_topology_t t, const std::vector<int>& cpus) {
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  for (int c : cpus) hwloc_bitmap_set(set, static_cast<unsigned>(c));
  std::vector<int> nodes;
  for (int i = 0, n = count(t, HWLOC_OBJ_NUMANODE); i < n; ++i) {
    const hwloc_obj_t o = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    if (o && o->cpuset && hwloc_bitmap_intersects(o->cpuset, set)) nodes.push_back(static_cast<int>(o->os_index));
  }
  hwloc_bitmap_free(set);
  return int_ranges_text(nodes);
}

nlohmann::json to_json(const NodeHardware& h, const RankBinding& b) {
  nlohmann::json caches = nlohmann::json::array();
  for (const auto& c : h.caches)
    caches.push_back({{"level", c.level}, {"type", c.type}, {"size_bytes", c.size_bytes}, {"count", c.count}});
  return {{"host", h.host},         {"cpu_model", h.cpu_model}, {"packages", h.packages}, {"numa_nodes", h.numa_nodes},
          {"cores", h.cores},       {"pus", h.pus},             {"caches", caches},       {"hwloc", h.hwloc},
          {"error", h.error},       {"cpus", b.cpus},           {"numa", b.numa}};
}

void from_json(const nlohmann::json& j, NodeHardware& h, RankBinding& b) {
  h.host = j.at("host").get<std::string>();
  h.cpu_model = j.at("cpu_model").get<std::string>();
  h.packages = j.at("packages").get<int>();
  h.numa_nodes = j.at("numa_nodes").get<int>();
  h.cores = j.at("cores").get<int>();
  h.pus = j.at("pus").get<int>();
  for (const auto& c : j.at("caches"))
    h.caches.push_back({c.at("level").get<int>(), c.at("type").get<std::string>(),
                        c.at("size_bytes").get<std::uint64_t>(), c.at("count").get<int>()});
  h.hwloc = j.at("hwloc").get<std::string>();
  h.error = j.at("error").get<std::string>();
  b.cpus = j.at("cpus").get<std::string>();
  b.numa = j.at("numa").get<std::string>();
}

}  // namespace

std::optional<std::array<double, 3>> local_loadavg() { return loadavg_of(read_file("/proc/loadavg")); }

int online_cpus() { return static_cast<int>(std::max(0L, sysconf(_SC_NPROCESSORS_ONLN))); }

void local_provenance(NodeHardware& hw, RankBinding& binding) {
  hw.cpu_model = cpu_model_of(read_file("/proc/cpuinfo"));
  const std::vector<int> cpus = affinity_cpus();
  binding.cpus = int_ranges_text(cpus);
  const HwlocTopology t;
  if (!t.ok()) {
    hw.error = "hwloc could not load the topology";
    return;
  }
  hw.hwloc = HWLOC_VERSION;  // the release collbench was built with (the runtime's API version is coarser)
  hw.packages = count(t.get(), HWLOC_OBJ_PACKAGE);
  hw.numa_nodes = count(t.get(), HWLOC_OBJ_NUMANODE);
  hw.cores = count(t.get(), HWLOC_OBJ_CORE);
  hw.pus = count(t.get(), HWLOC_OBJ_PU);
  hw.caches = caches_of(t.get());
  if (hw.cpu_model.empty())  // hwloc's own reading (e.g. arm64's CPUModel info attribute)
    if (const hwloc_obj_t pkg = hwloc_get_obj_by_type(t.get(), HWLOC_OBJ_PACKAGE, 0))
      if (const char* m = hwloc_obj_get_info_by_name(pkg, "CPUModel")) hw.cpu_model = m;
  binding.numa = numa_of(t.get(), cpus);
}

Provenance gather_provenance(Control& control, const Topology& topo) {
  NodeHardware hw;
  RankBinding binding;
  local_provenance(hw, binding);
  hw.host = topo.host_of_rank.at(static_cast<std::size_t>(control.rank()));
  const std::vector<std::string> all = control.all_gather(to_json(hw, binding).dump());
  Provenance p;
  p.nodes.resize(static_cast<std::size_t>(topo.nodes));
  std::vector<bool> seen(p.nodes.size(), false);
  for (int r = 0; r < static_cast<int>(all.size()); ++r) {
    NodeHardware h;
    RankBinding b;
    from_json(nlohmann::json::parse(all[static_cast<std::size_t>(r)]), h, b);
    p.binding_of_rank.push_back(b);
    const auto node = static_cast<std::size_t>(topo.node_of_rank.at(static_cast<std::size_t>(r)));
    if (!seen[node]) {  // ranks in order: the node's lowest rank speaks for it
      p.nodes[node] = std::move(h);
      seen[node] = true;
    }
  }
  return p;
}

}  // namespace collbench

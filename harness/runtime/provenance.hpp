#pragma once
// Provenance of a run (run record "cpu_model", "binding", "hardware"): what each rank ran on,
// so "why did this run differ" has an answer in the file. The CPU model from /proc/cpuinfo,
// each rank's core binding (sched_getaffinity) and the NUMA nodes it covers, and per node a
// topology summary from hwloc (packages, NUMA nodes, cores, PUs, caches).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collbench {

class Control;
struct Topology;

struct CacheSummary {
  int level = 0;             // 1, 2, 3 ...
  std::string type;          // "data", "instruction" or "unified"
  std::uint64_t size_bytes = 0;  // of one instance
  int count = 0;             // instances on the node
  friend bool operator==(const CacheSummary&, const CacheSummary&) = default;
};

// One node's hardware, as its lowest rank sees it.
struct NodeHardware {
  std::string host;
  std::string cpu_model;  // /proc/cpuinfo "model name" (or "Processor"/"cpu" on other ISAs); "" unknown
  int packages = 0, numa_nodes = 0, cores = 0, pus = 0;
  std::vector<CacheSummary> caches;  // by level, then type
  std::string hwloc;                 // hwloc's release (built with); "" when it failed
  std::string error;                 // why hwloc gave nothing ("" when it worked)
};

// Where one rank may run: its CPU affinity and the NUMA nodes those CPUs belong to.
struct RankBinding {
  std::string cpus;  // OS CPU numbers as a list, e.g. "0-3,8"
  std::string numa;  // OS NUMA node numbers those CPUs cover, e.g. "0" ("" unknown)
};

struct Provenance {
  std::vector<RankBinding> binding_of_rank;
  std::vector<NodeHardware> nodes;  // node order (Topology::node_of_rank)
};

// Pure helpers (unit-tested).
std::string int_ranges_text(std::vector<int> cpus);  // CPUs or ranks: {0,1,2,3,8} -> "0-3,8"; sorted, repeats dropped
std::string cpu_model_of(std::string_view proc_cpuinfo);
// /proc/loadavg's 1-, 5- and 15-minute load averages ("0.52 0.61 0.40 1/123 4567"); nullopt when
// the text does not start with three numbers.
std::optional<std::array<double, 3>> loadavg_of(std::string_view proc_loadavg);

// The load on this process's node (run and end records' "loadavg"): the kernel's run-queue
// averages, nullopt when /proc/loadavg cannot be read; and the CPUs online (sysconf), what the
// load is compared with (a load above them means timed ranks waited for a CPU).
std::optional<std::array<double, 3>> local_loadavg();
int online_cpus();

// This process's facts (hwloc, /proc/cpuinfo, sched_getaffinity); never throws: what cannot
// be read stays empty and NodeHardware::error says why.
void local_provenance(NodeHardware& hw, RankBinding& binding);

// Collective over `control`: every rank's binding and each node's hardware (from the node's
// lowest rank), on every rank.
Provenance gather_provenance(Control& control, const Topology& topo);

}  // namespace collbench

#include "harness/memcheck.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>


namespace collbench {

std::uint64_t available_host_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
}

std::uint64_t point_memory_need(Op op, std::uint64_t chunk_count, DType dtype, int world_size) {
  const std::uint64_t es = dtype_size(dtype);
  return 4 * es * (send_elems(op, chunk_count, world_size) + recv_elems(op, chunk_count, world_size));
}

std::optional<std::string> memory_shortfall(std::uint64_t need, int ranks_on_node, std::uint64_t available) {
  const unsigned __int128 total = static_cast<unsigned __int128>(need) * static_cast<unsigned>(ranks_on_node);
  if (available == 0 || total <= available) return std::nullopt;
  std::ostringstream m;
  m << "not enough memory: " << ranks_on_node << " ranks on a node need " << need / (1 << 20) << " MiB each ("
    << static_cast<std::uint64_t>(total >> 20) << " MiB) but the node has " << available / (1 << 20)
    << " MiB available";
  return m.str();
}

}  // namespace collbench

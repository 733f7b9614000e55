#include "harness/measure/bandwidth.hpp"

namespace collbench {

double algbw_GBps(std::uint64_t bytes, double time_us) {
  return time_us > 0 ? static_cast<double>(bytes) / time_us / 1e3 : 0.0;  // bytes/us = 1e6 B/s
}

}  // namespace collbench

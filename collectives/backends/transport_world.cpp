#include "collectives/backends/transport_world.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

namespace collbench {
namespace {

constexpr int kCollectiveTag = 32000;  // the harness's own tags (control.hpp) stay below

template <typename T>
T combine(T a, T b, World::Reduce op) {
  switch (op) {
    case World::Reduce::sum: return a + b;
    case World::Reduce::max: return std::max(a, b);
    case World::Reduce::min: return std::min(a, b);
  }
  return a;
}

}  // namespace

template <typename T>
void TransportWorld::reduce_all(std::span<T> values, Reduce op) {
  if (values.empty()) return;
  std::vector<T> all(values.size() * static_cast<std::size_t>(size()));
  allgather(std::as_bytes(values), std::as_writable_bytes(std::span<T>(all)));
  for (std::size_t i = 0; i < values.size(); ++i) {
    T v = all[i];  // rank 0's, then the others' in rank order: the same result on every rank
    for (int r = 1; r < size(); ++r) v = combine(v, all[static_cast<std::size_t>(r) * values.size() + i], op);
    values[i] = v;
  }
}

void TransportWorld::allreduce(std::span<double> values, Reduce op) { reduce_all(values, op); }
void TransportWorld::allreduce(std::span<std::int64_t> values, Reduce op) { reduce_all(values, op); }

void TransportWorld::broadcast(std::span<std::byte> bytes, int root) {
  if (rank() == root) {
    std::vector<Request> sends;
    for (int r = 0; r < size(); ++r)
      if (r != root) sends.push_back(t_.isend(bytes.data(), bytes.size(), r, kCollectiveTag));
    t_.wait_all(sends);
  } else {
    t_.recv(bytes.data(), bytes.size(), root, kCollectiveTag);
  }
}

void TransportWorld::allgather(std::span<const std::byte> mine, std::span<std::byte> all) {
  const std::size_t n = mine.size();
  std::memcpy(all.data() + static_cast<std::size_t>(rank()) * n, mine.data(), n);
  std::vector<Request> reqs;
  for (int r = 0; r < size(); ++r) {
    if (r == rank()) continue;
    reqs.push_back(t_.irecv(all.data() + static_cast<std::size_t>(r) * n, n, r, kCollectiveTag + 1));
    reqs.push_back(t_.isend(mine.data(), n, r, kCollectiveTag + 1));
  }
  t_.wait_all(reqs);
}

void TransportWorld::send(std::span<const std::byte> bytes, int peer, int tag) { t_.send(bytes.data(), bytes.size(), peer, tag); }
void TransportWorld::recv(std::span<std::byte> bytes, int peer, int tag) { t_.recv(bytes.data(), bytes.size(), peer, tag); }

void TransportWorld::notify(int peer, int tag) { t_.send(nullptr, 0, peer, tag); }

void TransportWorld::await_notice(int peer, int tag, std::chrono::microseconds pause) {
  // A Transport has no test(): the thread transport's wait sleeps on a condition variable,
  // which is what the pause protects (no spinning waiter).
  (void)pause;
  t_.recv(nullptr, 0, peer, tag);
}

std::string TransportWorld::host_name() const {
  std::array<char, 256> h{};
  if (gethostname(h.data(), h.size() - 1) != 0) return "unknown";
  return h.data();
}

int TransportWorld::node_leader() {
  constexpr std::size_t kLen = 128;
  std::array<char, kLen> me{};
  std::string id = host_name();
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string b;
  if (std::getline(boot, b)) id += "|" + b;
  id.copy(me.data(), kLen - 1);
  std::vector<char> all(kLen * static_cast<std::size_t>(size()));
  allgather(std::as_bytes(std::span<const char>(me)), std::as_writable_bytes(std::span<char>(all)));
  for (int r = 0; r < size(); ++r)
    if (std::strncmp(all.data() + static_cast<std::size_t>(r) * kLen, me.data(), kLen) == 0) return r;
  return rank();
}

const char* TransportWorld::describe(Call c) const {
  switch (c) {
    case Call::barrier: return "in the harness's barrier (control; some rank never arrived)";
    case Call::allreduce: return "in the harness's allreduce (control; some rank never arrived)";
    case Call::broadcast: return "in the harness's broadcast (control; some rank never arrived)";
    case Call::allgather: return "in the harness's allgather (control; some rank never arrived)";
    case Call::topology: return "in the harness's node discovery (control; some rank never arrived)";
    case Call::send: return "in the harness's send (control)";
    case Call::recv: return "in the harness's receive (control)";
    case Call::notice: return "in the harness's wait for a notice (control)";
  }
  return "in the harness's control plane";
}

}  // namespace collbench

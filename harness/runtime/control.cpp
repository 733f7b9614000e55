#include "harness/runtime/control.hpp"

#include <climits>

#include "harness/runtime/control_call.hpp"

namespace collbench {

Control::Control(World& world, std::shared_ptr<CallScope> scope) : world_(world), scope_(std::move(scope)) {
  clock_.emplace(world_, scope_.get());
}

void Control::barrier() {
  const ControlCall call(scope_.get(), rank(), world_.describe(World::Call::barrier));
  world_.barrier();
}

void Control::max_in_place(std::span<double> v) {
  if (v.empty()) return;
  const ControlCall call(scope_.get(), rank(), world_.describe(World::Call::allreduce));
  world_.allreduce(v, World::Reduce::max);
}

void Control::sum_in_place(std::span<double> v) {
  if (v.empty()) return;
  const ControlCall call(scope_.get(), rank(), world_.describe(World::Call::allreduce));
  world_.allreduce(v, World::Reduce::sum);
}

double Control::broadcast(double v) {
  const ControlCall call(scope_.get(), rank(), world_.describe(World::Call::broadcast));
  world_.broadcast(std::as_writable_bytes(std::span(&v, 1)), 0);
  return v;
}

std::uint64_t Control::sum(std::uint64_t v) {
  std::int64_t x = static_cast<std::int64_t>(v);
  const ControlCall call(scope_.get(), rank(), world_.describe(World::Call::allreduce));
  world_.allreduce(std::span(&x, 1), World::Reduce::sum);
  return static_cast<std::uint64_t>(x);
}

bool Control::any(bool v) {
  std::int64_t x = v ? 1 : 0;
  const ControlCall call(scope_.get(), rank(), world_.describe(World::Call::allreduce));
  world_.allreduce(std::span(&x, 1), World::Reduce::max);
  return x != 0;
}

int Control::broadcast(int v) {
  const ControlCall call(scope_.get(), rank(), world_.describe(World::Call::broadcast));
  world_.broadcast(std::as_writable_bytes(std::span(&v, 1)), 0);
  return v;
}

std::string Control::broadcast(const std::string& s) {
  const ControlCall call(scope_.get(), rank(), world_.describe(World::Call::broadcast));
  std::int64_t n = static_cast<std::int64_t>(s.size());
  world_.broadcast(std::as_writable_bytes(std::span(&n, 1)), 0);
  std::string out = rank() == 0 ? s : std::string(static_cast<std::size_t>(n), '\0');
  world_.broadcast(std::as_writable_bytes(std::span(out.data(), out.size())), 0);
  return out;
}

std::vector<std::string> Control::all_gather(const std::string& s) {
  const ControlCall call(scope_.get(), rank(), world_.describe(World::Call::allgather));
  // Lengths first, then every string padded to the longest: one fixed-size allgather.
  const std::int64_t mine = static_cast<std::int64_t>(s.size());
  std::vector<std::int64_t> lens(static_cast<std::size_t>(size()));
  world_.allgather(std::as_bytes(std::span(&mine, 1)), std::as_writable_bytes(std::span(lens)));
  std::size_t longest = 0;
  for (auto n : lens) longest = std::max(longest, static_cast<std::size_t>(n));
  std::string padded = s;
  padded.resize(longest, '\0');
  std::string all(longest * static_cast<std::size_t>(size()), '\0');
  world_.allgather(std::as_bytes(std::span(padded.data(), padded.size())), std::as_writable_bytes(std::span(all.data(), all.size())));
  std::vector<std::string> out;
  for (int r = 0; r < size(); ++r) out.push_back(all.substr(static_cast<std::size_t>(r) * longest, static_cast<std::size_t>(lens[r])));
  return out;
}

std::vector<double> Control::all_gather(std::span<const double> mine) {
  std::vector<double> all(mine.size() * static_cast<std::size_t>(size()));
  if (mine.empty()) return all;
  const ControlCall call(scope_.get(), rank(), world_.describe(World::Call::allgather));
  world_.allgather(std::as_bytes(mine), std::as_writable_bytes(std::span(all)));
  return all;
}

std::optional<std::string> Control::agree_error(const std::optional<std::string>& mine) {
  const ControlCall call(scope_.get(), rank(), world_.describe(World::Call::allreduce));
  std::int64_t first = mine ? rank() : INT_MAX;
  world_.allreduce(std::span(&first, 1), World::Reduce::min);
  if (first == INT_MAX) return std::nullopt;
  std::string msg = mine.value_or("");
  std::int64_t n = static_cast<std::int64_t>(msg.size());
  world_.broadcast(std::as_writable_bytes(std::span(&n, 1)), static_cast<int>(first));
  msg.resize(static_cast<std::size_t>(n));
  world_.broadcast(std::as_writable_bytes(std::span(msg.data(), msg.size())), static_cast<int>(first));
  return msg;
}

void Control::notify_all_but(int dst, int tag) {
  const ControlCall call(scope_.get(), rank(), world_.describe(World::Call::send));
  for (int r = 0; r < size(); ++r)
    if (r != rank() && r != dst) world_.notify(r, tag);
}

// Nothing bounds this wait: it lasts the pair's whole measurement, and a pair rank that stops
// is named by its own watchdog.
void Control::await_notice(int src, int tag, std::chrono::microseconds pause) { world_.await_notice(src, tag, pause); }

}  // namespace collbench

// Zero-copy allreduce in one node's peer memory (Li, Hoefler, Hu, Snir 2014; NCCL's
// intra-node kernels): no messages. Each rank r reduces slice r of the message straight from
// every rank's input into a result every peer can read, raises its flag, and copies the other
// slices from their owners' results. Inputs are the user's buffers when they are registered
// (allocated in peer memory, --buffers registered), else a staging copy in peer memory.
// Memory traffic per rank for M bytes on n ranks (bench/README.md has the bound):
//   registered: reduce reads M, writes M/n; copy reads and writes (n-1)M/n  ->  (3n-1)M/n + ...
//   staged: + copy-in of (n-1)M/n, and the own slice copied out of peer memory.
// Below schedules::peer::kSmallBytes every rank reduces the whole message itself: one flag
// round. Flags: transport/peer_memory.hpp.
#include <vector>

#include "collectives/patterns/chunks.hpp"
#include "collectives/registry.hpp"
#include "collectives/schedules/peer.hpp"

namespace collbench {
namespace {

constexpr std::uint64_t kInputsReady = 1, kSliceReduced = 2;

// One call over the whole message (registered) or one round of at most kStageBytes (staged).
void round(Transport& t, PeerMemory& pm, const CollArgs& a, bool reg) {
  const int n = t.size(), r = t.rank();
  const std::size_t bytes = a.bytes(a.count);
  MemorySpace& m = t.memory();
  const bool small = bytes < schedules::peer::kSmallBytes;
  // Staged: the input copy; peers read every slice but this rank's own, whose place in the
  // stage holds the reduced slice instead (nobody else reads or writes it while reducing).
  std::byte* stage = reg ? nullptr : static_cast<std::byte*>(pm.scratch("allreduce/shm", bytes));
  const std::uint64_t base = pm.begin_call();
  const void* in = a.send;
  if (!reg) {
    // Peers read every slice but their own from here (the small path: all of it).
    if (small) {
      m.copy(stage, a.send, bytes);
    } else {
      const patterns::Range mine = patterns::chunk(a.count, n, r);
      m.copy(stage, a.send, a.bytes(mine.offset));
      m.copy(stage + a.bytes(mine.end()), elem_ptr(a.send, mine.end(), a.dtype), bytes - a.bytes(mine.end()));
    }
    in = stage;
  }
  pm.raise(base + kInputsReady);
  std::vector<const void*> inputs(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) {
    if (k != r) pm.wait(k, base + kInputsReady);
    inputs[static_cast<std::size_t>(k)] = k == r ? in : pm.peer(in, k);
  }
  if (small) {
    // Own input first: in place, recv is send and must be read before it is written.
    if (!reg) inputs[static_cast<std::size_t>(r)] = a.send;
    std::swap(inputs[0], inputs[static_cast<std::size_t>(r)]);
    schedules::peer::reduce_inputs(m, a, a.recv, inputs, a.count);
    pm.end_call(base, reg);
    return;
  }
  // Slice r, reduced where peers can read it: the registered recv, else its place in the stage.
  const patterns::Range mine = patterns::chunk(a.count, n, r);
  std::byte* result = reg ? static_cast<std::byte*>(a.recv) : stage;
  inputs[static_cast<std::size_t>(r)] = a.send;  // the own slice is read from the user's buffer
  std::swap(inputs[0], inputs[static_cast<std::size_t>(r)]);
  for (auto& p : inputs) p = elem_ptr(p, mine.offset, a.dtype);
  schedules::peer::reduce_inputs(m, a, result + a.bytes(mine.offset), inputs, mine.count);
  pm.raise(base + kSliceReduced);
  if (!reg) m.copy(elem_ptr(a.recv, mine.offset, a.dtype), result + a.bytes(mine.offset), a.bytes(mine.count));
  for (int k = 1; k < n; ++k) {  // staggered: rank r starts with r + 1, so owners are read evenly
    const int q = (r + k) % n;
    const patterns::Range s = patterns::chunk(a.count, n, q);
    pm.wait(q, base + kSliceReduced);
    m.copy(elem_ptr(a.recv, s.offset, a.dtype), pm.peer(result + a.bytes(s.offset), q), a.bytes(s.count));
  }
  // Registered: peers read this rank's send and recv, which the caller owns once this returns.
  pm.end_call(base, reg);
}

void run(Transport& t, const CollArgs& a) {
  const std::size_t bytes = a.bytes(a.count);
  if (t.size() == 1) {
    t.memory().copy(a.recv, a.send, bytes);
    return;
  }
  PeerMemory& pm = schedules::peer::memory_for(t, "allreduce/shm");
  // In place, the small path writes recv = send while peers still read it: stage it instead.
  const bool small = bytes < schedules::peer::kSmallBytes;
  if (schedules::peer::registered(pm, a, bytes, bytes) && !(small && a.send == a.recv)) return round(t, pm, a, true);
  schedules::peer::in_rounds(a, [&](const CollArgs& part) { round(t, pm, part, false); });
}

// Bytes one rank loads + stores. Sliced: reduce its slice from n inputs (M read, M/n written),
// copy the n-1 other slices (2(n-1)M/n); staged adds the copy-in of the n-1 slices peers read
// and the own slice's copy out (2M). Small path: n inputs read, M written (+ copy-in 2M).
double traffic(int n, const CollArgs& a, bool reg) {
  const double m = static_cast<double>(a.bytes(a.count)), k = n;
  const double base = a.bytes(a.count) < schedules::peer::kSmallBytes ? (k + 1) * m : m * (3 * k - 1) / k;
  return reg ? base : base + 2 * m;
}

COLLBENCH_REGISTER({Op::allreduce, "shm", "any",
                    "zero-copy in node peer memory: each rank reduces its slice straight from all inputs, flags not "
                    "messages",
                    "ranks on one node, host memory; registered buffers (--buffers registered) skip the staging copy",
                    &run, nullptr, &traffic});

}  // namespace
}  // namespace collbench

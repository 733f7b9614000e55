#pragma once
// What the zero-copy (peer memory) algorithms share: finding the transport's peer memory or
// refusing with the reason, where each rank's input lives for peers to read (the user's
// buffer when it is registered — allocated in peer memory, as nccl-tests -R does — else a
// staging copy in a scratch block), and the segmented n-way reduction straight from peers'
// memory. Not an algorithm itself: it registers nothing. Flags: transport/peer_memory.hpp.
#include <cstddef>
#include <span>

#include "collectives/collective.hpp"
#include "collectives/transport/transport.hpp"

namespace collbench::schedules::peer {

// Below this many bytes, every rank reduces (or gathers) the whole message from all peers
// itself: one flag round instead of two; the n-fold reads are cheaper than a second round.
inline constexpr std::size_t kSmallBytes = 16 << 10;

// Elements reduced per segment of an n-way reduction: out stays in L1/L2 across the n-1
// passes over the peers' inputs.
inline constexpr std::size_t kReduceSegmentBytes = 32 << 10;

// The transport's peer memory for `algo` (op/algo, for the reason), or NotSupported when its
// ranks do not share a node or the buffers are not host memory. The same on every rank.
PeerMemory& memory_for(Transport& t, std::string_view algo);

// Whether every pointer (with its byte length) lies in peer memory: the registered path.
// Every rank must agree (the harness registers all ranks' buffers or none).
bool registered(const PeerMemory& pm, std::span<const std::pair<const void*, std::size_t>> bufs);

// out[0, count) = inputs[0] (op) inputs[1] (op) ... over `inputs`, in segments of
// kReduceSegmentBytes (or CollArgs::segment_bytes); out may alias inputs[0].
void reduce_inputs(MemorySpace& m, const CollArgs& a, void* out, std::span<const void* const> inputs,
                   std::size_t count);

}  // namespace collbench::schedules::peer

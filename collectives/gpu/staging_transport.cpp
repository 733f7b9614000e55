#include "collectives/gpu/staging_transport.hpp"

#include <bit>

namespace collbench::gpu {

StagingTransport::StagingTransport(Transport& inner, MemorySpace& device, MemorySpace& staging,
                                   std::shared_ptr<DeviceIpc> ipc)
    : DeviceTransport(inner, device, std::move(ipc)), staging_(staging) {}

StagingTransport::StagingTransport(Transport& inner, MemorySpace& device, std::unique_ptr<MemorySpace> owned_staging,
                                   std::shared_ptr<DeviceIpc> ipc)
    : DeviceTransport(inner, device, std::move(ipc)),
      owned_staging_(std::move(owned_staging)),
      staging_(*owned_staging_) {}

// Sub-transports allocate from staging_, which may be owned here: they go first.
StagingTransport::~StagingTransport() { release_splits(); }

std::unique_ptr<Transport> StagingTransport::wrap(Transport& inner_sub) {
  return std::make_unique<StagingTransport>(inner_sub, device(), staging_, ipc());
}

int StagingTransport::acquire(std::size_t bytes) {
  // Best fit among free buffers; sizes are powers of two (>= 4 KiB) so that chunks differing
  // by a few elements share buffers.
  int best = -1, small = -1;
  for (int i = 0; i < static_cast<int>(staged_.size()); ++i) {
    const Staged& s = staged_[i];
    if (s.in_use) continue;
    if (s.buf.size() >= bytes) {
      if (best < 0 || s.buf.size() < staged_[best].buf.size()) best = i;
    } else {
      small = i;
    }
  }
  if (best < 0) {
    // Grow a free buffer that is too small rather than adding one: the pool stays at
    // (messages in flight) × (largest message).
    const std::size_t size = std::bit_ceil(std::max<std::size_t>(bytes, 4096));
    if (small < 0) {
      small = static_cast<int>(staged_.size());
      staged_.emplace_back();
    }
    staged_[small].buf = Buffer();  // free the old one first: pinned memory is precious
    staged_[small].buf = Buffer(staging_, size);
    ++allocations_;
    best = small;
  }
  staged_[best].in_use = true;
  return best;
}

int StagingTransport::new_slot() {
  if (free_slots_.empty()) {
    slots_.emplace_back();
    return static_cast<int>(slots_.size()) - 1;
  }
  const int i = free_slots_.back();
  free_slots_.pop_back();
  return i;
}

void StagingTransport::release(int i) {
  Slot& s = slots_[i];
  if (s.staged >= 0) staged_[s.staged].in_use = false;
  s = Slot{};
  free_slots_.push_back(i);
}

StagingTransport::Slot& StagingTransport::slot_of(const Request& r) {
  const std::uintptr_t i = r.handle - 1;
  if (r.handle == 0 || i >= slots_.size() || !slots_[i].in_use)
    throw Error("staging transport: wait on a request it did not start", error_context(&r));
  return slots_[i];
}

Request StagingTransport::isend(const void* buf, std::size_t bytes, int peer, int tag) {
  check_peer(peer, "isend");
  const int i = new_slot();
  Slot& s = slots_[i];
  s.in_use = true;
  try {
    void* host = nullptr;
    if (bytes) {
      s.staged = acquire(bytes);
      host = staged_[s.staged].buf.data();
      device().download(host, buf, bytes);  // waits for the device work that produced `buf`
    }
    s.inner = inner().isend(host, bytes, peer, tag);
  } catch (...) {
    release(i);
    throw;
  }
  return {static_cast<std::uintptr_t>(i) + 1, peer, tag, bytes, true, true};
}

Request StagingTransport::irecv(void* buf, std::size_t bytes, int peer, int tag) {
  check_peer(peer, "irecv");
  const int i = new_slot();
  Slot& s = slots_[i];
  s.in_use = true;
  s.device = buf;
  try {
    void* host = nullptr;
    if (bytes) {
      s.staged = acquire(bytes);
      host = staged_[s.staged].buf.data();
    }
    s.inner = inner().irecv(host, bytes, peer, tag);
  } catch (...) {
    release(i);
    throw;
  }
  return {static_cast<std::uintptr_t>(i) + 1, peer, tag, bytes, false, true};
}

void StagingTransport::wait(Request& r) { wait_all(std::span<Request>(&r, 1)); }

void StagingTransport::wait_all(std::span<Request> rs) {
  batch_.clear();
  batch_slots_.clear();
  for (Request& r : rs) {
    if (!r.active) continue;
    Slot& s = slot_of(r);
    batch_.push_back(s.inner);
    batch_slots_.push_back(static_cast<int>(r.handle - 1));
  }
  // The inner transport applies the timeout and names the peer on failure; slots of a failed
  // wait stay in use (the transport is not usable after a failure anyway).
  inner().wait_all(batch_);
  for (int i : batch_slots_) {
    Slot& s = slots_[i];
    if (s.device && s.staged >= 0) device().upload(s.device, staged_[s.staged].buf.data(), s.inner.bytes);
    release(i);
  }
  for (Request& r : rs) r.active = false;
}

}  // namespace collbench::gpu

#include "collectives/transport/peer_memory.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <hwloc.h>

#include "collectives/transport/transport.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace collbench {
namespace {

constexpr std::size_t kAlign = 64;
// Per rank: line 0 holds the flag and the inline slots, the lines after it the two messages of
// kMaxWords 16-byte words. Nothing else shares any of these lines.
constexpr std::size_t kWordsOffset = 64, kWordSize = 16;
constexpr std::size_t kMessageBytes = PeerMemory::kMaxWords * kWordSize;
constexpr std::size_t kFlagBytes = kWordsOffset + 2 * kMessageBytes;
static_assert(sizeof(std::uint64_t) + 2 * PeerMemory::kInlineBytes <= kWordsOffset, "inline slots outside line 0");

bool cpu_has_atomic16() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx");
#else
  return false;
#endif
}
// The smallest L1d, L2 and L3 of this machine, from hwloc; 0 where hwloc finds none (no LLC:
// schedules::peer::claims() says no). The machine's, not this core's: every rank of a node
// gets the same, so all decide alike (a hybrid CPU's cores differ).
std::size_t smallest_cache(hwloc_topology_t t, hwloc_obj_type_t type) {
  std::size_t bytes = 0;
  const int n = hwloc_get_nbobjs_by_type(t, type);
  for (int i = 0; i < n; ++i)
    if (hwloc_obj_t c = hwloc_get_obj_by_type(t, type, static_cast<unsigned>(i)))
      if (c->attr && c->attr->cache.size && (bytes == 0 || c->attr->cache.size < bytes)) bytes = c->attr->cache.size;
  return bytes;
}

PeerMemory::Caches read_caches() {
  hwloc_topology_t t = nullptr;
  if (hwloc_topology_init(&t) != 0) return {};
  PeerMemory::Caches c;
  if (hwloc_topology_load(t) == 0) {
    c.l1 = smallest_cache(t, HWLOC_OBJ_L1CACHE);  // data (or unified): instruction caches are L1ICACHE
    c.l2 = smallest_cache(t, HWLOC_OBJ_L2CACHE);
    const std::size_t l3 = smallest_cache(t, HWLOC_OBJ_L3CACHE);
    c.llc = l3 ? l3 : c.l2;
  }
  hwloc_topology_destroy(t);
  return c;
}

// Once per process: loading hwloc's topology takes milliseconds, and a process makes a peer
// memory per transport (a thread world one per rank). A fact of the machine, never written again.
PeerMemory::Caches machine_caches() {
  static const PeerMemory::Caches caches = read_caches();
  return caches;
}

// A wait polls in three phases. Quick polls, without a pause (on recent x86 a pause delays
// noticing the flag by up to ~40 ns) and before the deadline starts (it reads the clock): a
// peer on its own core raises a small call's flag within these. Then polls with a pause, ~36 us
// at this machine's 18 ns pause: longer than a peer on its own core takes to finish a slice.
// Then a yield per poll. With more ranks than cores a spinning rank holds the core the peer it
// waits for needs: it yields after a few quick polls instead.
constexpr int kQuickPolls = 1024;
constexpr long kSpinPolls = 2000;
constexpr int kOversubscribedQuickPolls = 16;

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

}  // namespace

PeerMemory::PeerMemory(Transport& t)
    : t_(t),
      rank_(t.rank()),
      size_(t.size()),
      oversubscribed_(static_cast<unsigned>(size_) > std::max(1u, std::thread::hardware_concurrency())),
      words_(cpu_has_atomic16()),
      caches_(machine_caches()) {}

PeerMemory::~PeerMemory() = default;

void PeerMemory::release() noexcept {
  // Newest first, as allocated; scratch blocks are among them.
  while (!blocks_.empty()) {
    unmap(blocks_.back().m);
    blocks_.pop_back();
  }
  scratch_.clear();
  flags_.clear();
}

void* PeerMemory::allocate(std::size_t bytes) {
  const std::size_t rounded = std::max(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
  // A segment may start anywhere (Open MPI's shared windows: 8 bytes past a page), so each is
  // mapped kAlign longer and used from its first aligned byte: flags own their cache lines.
  Mapping m = map(rounded + kAlign);
  if (static_cast<int>(m.base.size()) != size_)
    throw Error("peer memory: the mapping has " + std::to_string(m.base.size()) + " segments for " +
                    std::to_string(size_) + " ranks",
                t_.error_context());
  std::vector<std::byte*> at;
  for (std::byte* b : m.base) at.push_back(b + (kAlign - reinterpret_cast<std::uintptr_t>(b) % kAlign) % kAlign);
  blocks_.push_back({std::move(m), rounded, std::move(at)});
  return blocks_.back().at[static_cast<std::size_t>(rank_)];
}

void PeerMemory::deallocate(void* p) {
  const auto it = std::find_if(blocks_.begin(), blocks_.end(),
                               [&](const Block& b) { return b.at[static_cast<std::size_t>(rank_)] == p; });
  if (it == blocks_.end()) throw Error("peer memory: deallocate of a pointer it did not allocate", t_.error_context());
  unmap(it->m);
  blocks_.erase(it);
}

const PeerMemory::Block* PeerMemory::block_of(const void* p, std::size_t bytes) const {
  const auto* q = static_cast<const std::byte*>(p);
  for (const Block& b : blocks_) {
    const std::byte* base = b.at[static_cast<std::size_t>(rank_)];
    if (q >= base && q <= base + b.bytes && bytes <= static_cast<std::size_t>(base + b.bytes - q)) return &b;
  }
  return nullptr;
}

bool PeerMemory::owns(const void* p, std::size_t bytes) const { return p && block_of(p, bytes); }

void* PeerMemory::peer(const void* local, int r) const {
  const Block* b = block_of(local, 0);
  if (!b || r < 0 || r >= size_)
    throw Error("peer memory: rank " + std::to_string(r) + "'s address of a pointer outside peer memory",
                t_.error_context());
  const std::byte* base = b->at[static_cast<std::size_t>(rank_)];
  return b->at[static_cast<std::size_t>(r)] + (static_cast<const std::byte*>(local) - base);
}

void* PeerMemory::scratch(std::string_view name, std::size_t bytes) {
  auto it = std::find_if(scratch_.begin(), scratch_.end(), [&](const Scratch& s) { return s.name == name; });
  if (it != scratch_.end() && it->bytes >= bytes) return it->p;
  // Grow: every rank gets here in the same call (same name, same bytes), so the collective
  // free and allocation match. Peers may still read the old block from the previous call.
  if (unsettled_) wait_all(unsettled_);
  if (it != scratch_.end()) {
    deallocate(it->p);
    scratch_.erase(it);
  }
  const std::size_t grown = std::max(bytes, std::size_t{4096});
  scratch_.push_back({std::string(name), allocate(grown), grown});
  return scratch_.back().p;
}

std::uint64_t PeerMemory::begin_call() {
  if (flags_.empty()) flags_ = make_flags();
  if (unsettled_) {
    wait_all(unsettled_);
    unsettled_ = 0;
  }
  return ++calls_ * kStepsPerCall;
}

std::vector<std::atomic<std::uint64_t>*> PeerMemory::flags_in(PeerMemory& host) {
  static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "flags in shared memory must be lock-free");
  void* mine = host.allocate(kFlagBytes);
  std::memset(mine, 0, kFlagBytes);  // the words' values too
  new (mine) std::atomic<std::uint64_t>(0);
  std::vector<std::atomic<std::uint64_t>*> flags;
  for (int r = 0; r < size_; ++r) flags.push_back(static_cast<std::atomic<std::uint64_t>*>(host.peer(mine, r)));
  t_.barrier();  // every rank's flag initialised before any peer reads it
  return flags;
}

void PeerMemory::raise(std::uint64_t value) {
  publish();
  flag(rank_).store(value, std::memory_order_release);
}

template <class Load>
void PeerMemory::poll(int peer, std::uint64_t value, Load&& load) {
  const int quick = oversubscribed_ ? kOversubscribedQuickPolls : kQuickPolls;
  for (int i = 0; i < quick; ++i)
    if (load() >= value) return;
  const long spin = oversubscribed_ ? 0 : kSpinPolls;
  Deadline deadline(t_.scope(), Deadline::kClockEvery, &t_, "waiting for a peer's flag in peer memory");
  for (long polls = 0;; ++polls) {  // long: an hour-long --timeout of yields overflows an int
    if (load() >= value) return;
    if (polls < spin)
      cpu_relax();
    else
      std::this_thread::yield();
    if (deadline.expired()) {
      Request r;
      r.peer = peer;
      const std::uint64_t seen = load();
      throw TimeoutError(timeout_message(deadline.timeout(), -1, false,
                                         "waiting for peer " + std::to_string(peer) + " to raise its flag to step " +
                                             std::to_string(value % kStepsPerCall) + " of call " +
                                             std::to_string(value / kStepsPerCall) + " (it is at step " +
                                             std::to_string(seen % kStepsPerCall) + " of call " +
                                             std::to_string(seen / kStepsPerCall) + ")"),
                         t_.error_context(&r));
    }
  }
}

void PeerMemory::wait(int peer, std::uint64_t value) {
  std::atomic<std::uint64_t>& f = flag(peer);
  poll(peer, value, [&f] { return f.load(std::memory_order_acquire); });
}

std::byte* PeerMemory::word(int r, std::uint64_t value) const {
  return reinterpret_cast<std::byte*>(&flag(r)) + kWordsOffset + alternate(value) * kMessageBytes;
}

#if defined(__x86_64__)
// volatile: each poll is a real 16-byte load (movdqa) per word, and each post one 16-byte store.
void PeerMemory::post_word(std::uint64_t value, const void* data, std::size_t bytes) {
  if (!words_ || bytes > kMaxWordBytes)
    throw Error("peer memory: post_word without 16-byte atomics or over " + std::to_string(kMaxWordBytes) + " bytes");
  const std::size_t n = words_for(bytes);
  alignas(16) std::uint64_t w[2 * kMaxWords];  // only the n words posted: no 256-byte clear a call
  for (std::size_t i = 0; i < n; ++i) {
    w[2 * i] = value;
    w[2 * i + 1] = 0;
  }
  for (std::size_t i = 0; i < bytes; i += kWordBytes)  // data may be null for 0 bytes
    std::memcpy(&w[2 * (i / kWordBytes) + 1], static_cast<const std::byte*>(data) + i, std::min(kWordBytes, bytes - i));
  publish();
  std::atomic_thread_fence(std::memory_order_release);  // this rank's earlier writes first
  auto* out = reinterpret_cast<volatile __m128i*>(word(rank_, value));
  for (std::size_t i = 0; i < n; ++i) out[i] = _mm_load_si128(reinterpret_cast<const __m128i*>(&w[2 * i]));
}

void PeerMemory::wait_word(int r, std::uint64_t value, void* data, std::size_t bytes) {
  const std::size_t n = words_for(bytes);
  const auto* p = reinterpret_cast<const volatile __m128i*>(word(r, value));
  alignas(16) std::uint64_t w[2 * kMaxWords];
  // Every word loaded each poll (independent loads: their lines travel at once); the message is
  // there when the oldest word's value is.
  poll(r, value, [&] {
    std::uint64_t oldest = ~std::uint64_t{0};
    for (std::size_t i = 0; i < n; ++i) {
      _mm_store_si128(reinterpret_cast<__m128i*>(&w[2 * i]), p[i]);
      oldest = std::min(oldest, w[2 * i]);
    }
    return oldest;
  });
  std::atomic_thread_fence(std::memory_order_acquire);
  for (std::size_t i = 0; i < n; ++i)
    std::memcpy(static_cast<std::byte*>(data) + i * kWordBytes, &w[2 * i + 1], kWordBytes);
}
#else
void PeerMemory::post_word(std::uint64_t, const void*, std::size_t) {
  throw Error("peer memory: post_word needs 16-byte atomics (x86 with AVX)");
}
void PeerMemory::wait_word(int, std::uint64_t, void*, std::size_t) {
  throw Error("peer memory: wait_word needs 16-byte atomics (x86 with AVX)");
}
#endif

void PeerMemory::wait_all(std::uint64_t value) {
  for (int k = 1; k < size_; ++k) wait((rank_ + k) % size_, value);
}

void PeerMemory::end_call(std::uint64_t base, bool settle) {
  raise(base + kDone);
  if (settle) {
    wait_all(base + kDone);
    unsettled_ = 0;
  } else {
    unsettled_ = base + kDone;
  }
}

void PeerMemorySpace::deallocate(void* p) noexcept {
  try {
    pm_.deallocate(p);
  } catch (const std::exception& e) {  // a pointer it never allocated: a bug, not a run-time condition
    std::fprintf(stderr, "collbench: %s\n", e.what());
    std::abort();
  }
}

}  // namespace collbench

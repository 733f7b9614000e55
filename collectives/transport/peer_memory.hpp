#pragma once
// Peer memory: host memory every rank of a transport can load from and store to, when the
// ranks share a node (MPI-3 shared windows for MPI, plain memory for threads). It is a
// symmetric heap, as in OpenSHMEM or NVSHMEM: every allocation is collective and made with the
// same size on every rank, so a block sits at the same offset in every rank's segment and
// peer(p, r) translates an address of this rank's block into rank r's. Algorithms use it to
// read peers' buffers directly (zero-copy) and synchronise through flags, without messages.
//
// Flags: each rank owns one monotone 64-bit counter in peer memory. A call takes a fresh
// sequence base (every rank counts the same calls), raises its counter to base + step with a
// release store, and waits for peers' counters with acquire loads, spinning briefly and then
// yielding (at once with more ranks than cores, so 4 ranks on 2 cores still progress); a wait
// past the scope's timeout throws TimeoutError naming the peer that never raised its flag.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/core/memory.hpp"

namespace collbench {

class Transport;

class PeerMemory {
 public:
  explicit PeerMemory(Transport& t);
  virtual ~PeerMemory();
  PeerMemory(const PeerMemory&) = delete;
  PeerMemory& operator=(const PeerMemory&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Where the blocks live: host memory, or device memory shared through IPC handles
  // (device_peer_memory.hpp). Flags are always in host memory: the host polls them.
  virtual MemoryKind kind() const { return MemoryKind::host; }

  // Collective, with the same `bytes` on every rank: a 64-byte aligned block at the same
  // offset of every rank's segment (one shared window per block).
  void* allocate(std::size_t bytes);
  // Collective: frees a block from allocate(), after every rank has stopped reading it.
  void deallocate(void* p);
  // Rank r's address of the byte at `local` in this rank's block; `local` must be inside one.
  void* peer(const void* local, int r) const;
  template <class T>
  T* peer(T* local, int r) const {
    return static_cast<T*>(peer(static_cast<const void*>(local), r));
  }
  // Whether [p, p + bytes) lies inside one of this rank's blocks.
  bool owns(const void* p, std::size_t bytes) const;
  // A named scratch block of at least `bytes`, grown collectively (every rank asks with the
  // same bytes in the same calls). Kept until the peer memory goes.
  void* scratch(std::string_view name, std::size_t bytes);

  // The machine's smallest L1 data cache, L2 and last-level cache (hwloc's L3, else its L2; 0
  // when unknown), the same on every rank of a node: schedules::peer::claims() decides by the
  // LLC, stage_bytes() by the L2, segment_bytes() by the L1.
  std::size_t l1_bytes() const { return caches_.l1; }
  std::size_t l2_bytes() const { return caches_.l2; }
  std::size_t llc_bytes() const { return caches_.llc; }
  struct Caches {
    std::size_t l1 = 0, l2 = 0, llc = 0;
  };
  // Whether a reader's claim of the lines it read pays on this machine (schedules::peer::claims):
  // measured once per peer memory by its first zero-copy call (schedules::peer::measure_claims),
  // the same on every rank; unset until then. `measured` false: not measured (one rank, device
  // memory, more ranks than cores) or set by a test, and `pays` is what was set.
  struct ClaimProbe {
    bool measured = false, pays = false;
    std::size_t bytes = 0;                // per round
    double shared_ns = 0, claimed_ns = 0;  // median whole round: rewrite, then the reader's copy (and claim)
  };
  const std::optional<ClaimProbe>& claim_probe() const { return claim_probe_; }
  void set_claim_probe(const ClaimProbe& p) { claim_probe_ = p; }
  // From what size the kernel's single copy of a peer's user buffer (transport/kernel_copy.hpp)
  // beats staging it, on this machine: measured once per peer memory by its first zero-copy call
  // (schedules::peer::measure_kernel_copy), rank 0's verdict on every rank; unset until then.
  // `from_bytes` 0: never (not available, not measured, or staging was faster at the largest
  // size probed). `measured` false: not measured (one rank, device memory, more ranks than
  // cores) or set by a test.
  struct KernelCopyProbe {
    bool measured = false, available = false;
    std::size_t from_bytes = 0;
    std::vector<std::size_t> bytes{};              // the sizes probed, ascending
    std::vector<double> staged_ns{}, kernel_ns{};  // median whole round at each
    bool operator==(const KernelCopyProbe&) const = default;
  };
  const std::optional<KernelCopyProbe>& kernel_copy_probe() const { return kernel_copy_probe_; }
  void set_kernel_copy_probe(const KernelCopyProbe& p) { kernel_copy_probe_ = p; }
  // From what size a call's final copy into the caller's recv is faster by streaming stores
  // (core/stream_copy.hpp) than by memcpy, on this machine: measured once per peer memory by its
  // first zero-copy call (schedules::peer::measure_streaming), rank 0's verdict on every rank;
  // unset until then. `from_bytes` 0: never (not measured, or streaming did not beat memcpy by
  // schedules::peer::kStreamProbeMargin at the largest size probed). `measured` false: not
  // measured (one rank, device memory, more ranks than cores) or set by a test.
  struct StreamProbe {
    bool measured = false;
    std::size_t from_bytes = 0;
    std::vector<std::size_t> bytes{};                // the sizes probed, ascending
    std::vector<double> plain_ns{}, streaming_ns{};  // median copy at each
    bool operator==(const StreamProbe&) const = default;
  };
  const std::optional<StreamProbe>& stream_probe() const { return stream_probe_; }
  void set_stream_probe(const StreamProbe& p) { stream_probe_ = p; }
  bool oversubscribed() const { return oversubscribed_; }

  // --- flags ---
  // Starts a call: waits until every peer has finished the previous call that left its
  // buffers unsettled (see end_call), then returns the call's sequence base.
  std::uint64_t begin_call();
  void raise(std::uint64_t value);  // this rank's flag := value (release)
  // Until rank `peer`'s flag reaches `value`; throws TimeoutError naming it after the timeout.
  void wait(int peer, std::uint64_t value);
  void wait_all(std::uint64_t value);  // every other rank
  // Ends a call begun at `base`: raises the flag to base + kDone. settle: also waits for every
  // peer to get there (peers read this rank's user buffers, which the caller may overwrite
  // once the call returns); otherwise the next begin_call waits (only peer memory was read).
  void end_call(std::uint64_t base, bool settle);
  // Double buffering, one flag round per call: a call whose peers read only this rank's
  // alternate(base) half of a scratch block, and in which this rank waited for every peer's
  // flag, ends without waiting. The half is written again two calls later, and by then every
  // peer has raised a flag in the call between (or the next begin_call waited for it), which
  // it does only after it finished reading.
  void end_alternating_call(std::uint64_t) {}
  static std::size_t alternate(std::uint64_t base) { return (base / kStepsPerCall) & 1; }
  // A few bytes that ride in rank r's flag line, as NCCL's LL protocol carries data with its
  // flag: a waiter that sees the flag finds them in the line it just loaded, one cache miss
  // instead of two. Rank r's slot for the call at `base`, alternating as above (valid after
  // begin_call; host memory always, whatever kind() is).
  static constexpr std::size_t kInlineBytes = 24;
  std::byte* inline_slot(int r, std::uint64_t base) const {
    return reinterpret_cast<std::byte*>(&flag(r)) + sizeof(std::uint64_t) + alternate(base) * kInlineBytes;
  }
  // Up to kWordBytes travel with their flag value in ONE 16-byte store, NCCL's LL protocol on a
  // 16-byte unit: the waiter's load that sees the value holds the data. With the inline slot
  // above, the payload store and the flag store are two stores to a line the peer polls, and
  // the line can move twice (+60-80 ns per call here). Needs single-copy-atomic 16-byte vector
  // loads and stores, which x86 CPUs with AVX guarantee (Intel SDM vol. 3A "Guaranteed Atomic
  // Operations", AMD APM vol. 2 "Access Atomicity"): has_words(). Up to kMaxWords words per
  // message (kMaxWordBytes), each with the flag value: the waiter polls them all at once, so a
  // message of several lines costs one line's trip, where a flag and then a stage cost two in a
  // row. Two messages per rank, alternating by call as the inline slots. A call that posts words
  // waits for every peer's and ends with end_alternating_call; it raises no flag.
  static constexpr std::size_t kWordBytes = 8, kMaxWords = 16, kMaxWordBytes = kWordBytes * kMaxWords;
  bool has_words() const { return words_; }
  // Posts `bytes` (at most kMaxWordBytes; 0: one empty word) of `data` in ceil(bytes / 8) words.
  void post_word(std::uint64_t value, const void* data, std::size_t bytes);
  // Until every word of rank r's message of `bytes` for the call of `value` reaches it; its
  // bytes (whole words) copied to `data`, a buffer of `bytes` rounded up to whole words.
  void wait_word(int r, std::uint64_t value, void* data, std::size_t bytes = kWordBytes);
  static constexpr std::size_t words_for(std::size_t bytes) {
    return bytes ? (bytes + kWordBytes - 1) / kWordBytes : 1;
  }
  static constexpr std::uint64_t kDone = 15;          // steps of a call are 1..kDone
  static constexpr std::uint64_t kStepsPerCall = 16;  // sequence bases are multiples of this

 protected:
  // One collective shared allocation: every rank's segment base, mapped in this process, in
  // rank order, and a handle the implementation frees it by.
  struct Mapping {
    std::vector<std::byte*> base;
    std::uintptr_t handle = 0;
  };
  virtual Mapping map(std::size_t bytes) = 0;   // collective
  virtual void unmap(Mapping& m) noexcept = 0;  // collective
  // Every rank's flag, zeroed, in host memory all ranks can poll: collective, called once.
  // By default one kFlagBytes block of this peer memory; flags_in(other) puts them elsewhere.
  virtual std::vector<std::atomic<std::uint64_t>*> make_flags() { return flags_in(*this); }
  std::vector<std::atomic<std::uint64_t>*> flags_in(PeerMemory& host);
  // Called before every raise: makes this rank's writes to its blocks visible to a peer that
  // sees the flag. Host memory: nothing (the release store does it); device memory waits for
  // the work it queued.
  virtual void publish() {}
  Transport& transport() const { return t_; }
  // Unmaps every block; implementations call it first in their destructor (map/unmap are
  // theirs).
  void release() noexcept;

 private:
  struct Block {
    Mapping m;
    std::size_t bytes;
    std::vector<std::byte*> at;  // every rank's first kAlign-aligned byte of its segment
  };
  const Block* block_of(const void* p, std::size_t bytes) const;
  // Polls load() (rank `peer`'s current flag value) until it reaches `value`: the waits' one loop.
  template <class Load>
  void poll(int peer, std::uint64_t value, Load&& load);
  std::byte* word(int r, std::uint64_t value) const;
  std::atomic<std::uint64_t>& flag(int r) const { return *flags_[static_cast<std::size_t>(r)]; }

  Transport& t_;
  int rank_, size_;
  std::vector<Block> blocks_;
  struct Scratch {
    std::string name;
    void* p;
    std::size_t bytes;
  };
  std::vector<Scratch> scratch_;
  // Every rank's flag (a kFlagBytes block each), translated once: waits and raises are on the
  // small-message path.
  std::vector<std::atomic<std::uint64_t>*> flags_;
  // More ranks than the node has cores: waits yield almost at once (peer_memory.cpp).
  bool oversubscribed_;
  bool words_;
  Caches caches_;
  std::optional<ClaimProbe> claim_probe_;
  std::optional<KernelCopyProbe> kernel_copy_probe_;
  std::optional<StreamProbe> stream_probe_;
  std::uint64_t calls_ = 0;
  std::uint64_t unsettled_ = 0;  // the done value of a previous call not yet waited for; 0: none
};

// Registered buffers (--buffers registered, nccl-tests -R): host memory whose allocations
// are peer memory blocks, so zero-copy algorithms read them in place. Allocation and
// deallocation are collective: every rank allocates the same sizes in the same order.
// Everything but allocation goes to `ops`, the transport's memory of the same kind (host
// memory, or the device memory whose stream orders the copies and kernels).
class PeerMemorySpace final : public MemorySpace {
 public:
  PeerMemorySpace(PeerMemory& pm, MemorySpace& ops) : pm_(pm), ops_(ops) {}
  MemoryKind kind() const override { return pm_.kind(); }
  void* allocate(std::size_t bytes) override { return pm_.allocate(bytes); }
  void deallocate(void* p) noexcept override;
  void copy(void* dst, const void* src, std::size_t bytes) override { ops_.copy(dst, src, bytes); }
  void reduce(const ReduceOp& op, void* out, const void* a, const void* b, std::size_t count) override {
    ops_.reduce(op, out, a, b, count);
  }
  void upload(void* dst, const void* src, std::size_t bytes) override { ops_.upload(dst, src, bytes); }
  void download(void* dst, const void* src, std::size_t bytes) override { ops_.download(dst, src, bytes); }
  void synchronize() override { ops_.synchronize(); }

 private:
  PeerMemory& pm_;
  MemorySpace& ops_;
};

}  // namespace collbench

#pragma once
// The rendezvous that lets collbench start without MPI (torchrun, srun, its own spawner): every
// rank knows its rank, the world size and one endpoint host:port from the launcher; rank 0 (or
// the spawner) serves a tiny TCP rendezvous where each rank sends a JOIN with an opaque blob
// (its Gloo pair addresses) and, once all ranks joined, gets back the table of every blob.
// It is collbench's only network listener, so every byte received is validated before use.
//
// Wire format (version 1), every message: "CBRV", u8 version, u8 type, 2 zero bytes, u32
// payload length, payload; integers big-endian.
//   JOIN   (rank -> server)  u32 rank, u32 size, u16 job length, job, u32 blob length, blob
//   TABLE  (server -> rank)  u32 count, then per rank u32 length, bytes
//   REFUSE, FAIL (server -> rank)  u16 length, UTF-8 reason
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectives/core/error.hpp"

namespace collbench::rendezvous {

struct Endpoint {
  std::string host;
  int port = 0;
  std::string text() const;  // "host:port", "[v6]:port"
};

struct Join {  // what one rank says when it joins
  int rank = 0;
  int size = 0;
  std::string job;              // the job's identity: ranks of another job are refused
  std::vector<std::byte> blob;  // opaque, <= kMaxBlob
};

// Gloo TCP pair addresses are ~136 B per peer: 1 MiB holds a full mesh of ~7700 ranks.
inline constexpr std::size_t kMaxBlob = 1 << 20;
inline constexpr std::size_t kMaxJob = 256;
inline constexpr int kMaxSize = 1 << 16;
using Clock = std::chrono::steady_clock;
using Log = std::function<void(const std::string& line)>;  // one line per event, for stderr
using Table = std::vector<std::vector<std::byte>>;          // index = rank

// Refused by the server (rank claimed twice, wrong world size, another job, bad input of our
// own): the caller exits 2 with what().
class Refused : public UsageError {
 public:
  using UsageError::UsageError;
};
// Ranks missing at the deadline, or the server never answered: the caller exits 3 with what().
class Timeout : public Error {
 public:
  using Error::Error;
};

namespace detail {

// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    reset(std::exchange(o.fd_, -1));
    return *this;
  }
  ~Fd() { reset(); }
  void reset(int fd = -1);
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// The peer broke the protocol; what() says how (one line).
class Malformed : public Error {
 public:
  using Error::Error;
};

enum class Type : std::uint8_t { join = 1, table = 2, refuse = 3, fail = 4 };
inline constexpr std::size_t kHeaderSize = 12;
inline constexpr std::size_t kMaxReason = 1024;
inline constexpr std::size_t kMaxJoinPayload = 4 + 4 + 2 + kMaxJob + 4 + kMaxBlob;

struct Header {
  Type type;
  std::uint32_t length;  // of the payload
};
// The largest payload a message of `type` may have in a world of `size` ranks.
std::uint64_t max_payload(Type type, int size);
// Checks magic, version, reserved bytes, type and the length against max_payload; throws Malformed.
Header decode_header(std::span<const std::byte> header, int size);

// Encoders return whole messages (header included); decoders take the payload and throw Malformed.
std::vector<std::byte> encode_join(const Join& join);
Join decode_join(std::span<const std::byte> payload);
std::vector<std::byte> encode_table(const Table& table);
Table decode_table(std::span<const std::byte> payload, int size);
std::vector<std::byte> encode_reason(Type type, std::string_view reason);  // cut to kMaxReason bytes
std::string decode_reason(std::span<const std::byte> payload);

// What is wrong with a Join (empty: nothing): size, rank, job length and characters, blob length.
std::string check_join(const Join& join);
// "rank 3 of 4", "ranks 2, 3 of 4", "ranks 0-9, 12 of 64"; long lists are cut.
std::string rank_list(const std::vector<int>& ranks, int size);
// How many connections may wait to join at once; more are closed as they arrive.
inline int max_pending(int size) { return 4 * size + 16; }

}  // namespace detail

class Server {
 public:
  // Binds host:port (host "" or "0.0.0.0": all interfaces; port 0: any free port) and listens.
  // Any bind error throws UsageError: one line naming host:port and the OS error.
  Server(const std::string& host, int port);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  int port() const { return port_; }  // the bound port
  Endpoint endpoint() const { return {host_, port_}; }

  // Accepts connections until all `size` ranks of `job` joined (`own`: the serving process's own
  // join, counted without a connection), sends every rank the table, closes the listener and
  // every connection, and returns the table. At `deadline`: sends FAIL naming the missing ranks
  // to every joined rank, closes everything and throws Timeout with the same line. Once only.
  Table serve(int size, const std::string& job, const std::optional<Join>& own, Clock::time_point deadline,
              const Log& log);

 private:
  detail::Fd listener_;
  std::string host_;
  int port_ = 0;
};

// A rank's side: connects to `server` (retrying every ~50 ms while nothing listens, until
// `deadline`), sends `me`, waits for the verdict until deadline + ~2 s (so the server's own FAIL
// arrives first) and returns the table. REFUSE -> Refused; FAIL, no answer or the server
// closing without a verdict -> Timeout; a reply that breaks the protocol -> detail::Malformed.
Table join(const Endpoint& server, const Join& me, Clock::time_point deadline);

}  // namespace collbench::rendezvous

#pragma once
// Typed errors that say where they happened: op, algo, rank, peer, tag, bytes. The harness
// prints `what()` as the one line a user sees, so every message is complete on its own.
#include <cstddef>
#include <stdexcept>
#include <string>

namespace collbench {

// What is being measured: the harness sets it once per point/phase on the call scope
// (collectives/transport/call_scope.hpp) and every error a transport raises copies it.
struct CallInfo {
  std::string op;
  std::string algo;
  std::size_t point_bytes = 0;  // size of the measured point
  long iteration = -1;          // -1: not inside a measured iteration
  std::string phase;            // "warmup", "timed", "verify", ...
};

// What a rank was doing when something went wrong: the call (from the scope) plus the
// request (peer/tag/bytes). In a sub-transport, rank and peer are sub ranks; `split` names the
// partition and world_rank/world_peer are the same ranks in the transport it was split from.
struct ErrorContext {
  CallInfo call;
  int rank = -1;
  int peer = -1;
  int tag = -1;
  std::size_t bytes = 0;  // bytes of the message involved (0 when none)
  std::string split;      // empty unless raised in a sub-transport
  int world_rank = -1;
  int world_peer = -1;
  std::string describe() const;  // "op=allreduce algo=ring rank=1 peer=2 tag=3 ..."
};

class Error : public std::runtime_error {
 public:
  Error(std::string what, ErrorContext ctx = {})
      : std::runtime_error(with_context(what, ctx)), ctx_(std::move(ctx)), message_(std::move(what)) {}
  const ErrorContext& context() const { return ctx_; }
  const std::string& message() const { return message_; }  // without the context suffix

 private:
  static std::string with_context(const std::string& what, const ErrorContext& ctx);
  ErrorContext ctx_;
  std::string message_;
};

// An algorithm refuses a case up front (e.g. a world size it cannot handle): recorded as a
// skipped point with this reason, never a failure.
class NotSupported : public Error {
 public:
  using Error::Error;
};

// A wait exceeded the transport's timeout: names the peer it was waiting for.
class TimeoutError : public Error {
 public:
  using Error::Error;
};

// The backend (MPI/NCCL/CUDA) returned an error code, or a peer died.
class TransportError : public Error {
 public:
  using Error::Error;
};

// The results file could not be written (disk full, I/O error): names the file and the OS
// error. The records written before it stay whole; the run stops at the next point boundary.
class ResultsWriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad command line, config file or other user input: one line; collbench exits with
// ExitStatus::usage (2, harness/exit_status.hpp).
// Control characters quoted from the input (a NUL, a newline in a YAML scalar) are escaped
// as \xNN, so the message is always one complete line (found by tests/fuzz/fuzz_config).
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& what) : std::runtime_error(printable(what)) {}
  explicit UsageError(const char* what) : UsageError(std::string(what)) {}
  static std::string printable(const std::string& s);
};

}  // namespace collbench

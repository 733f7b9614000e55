#include "collectives/launch/rendezvous.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <memory>
#include <sstream>
#include <system_error>
#include <thread>

namespace collbench::rendezvous {

using namespace std::chrono_literals;
using detail::Fd;
using detail::kHeaderSize;
using detail::Malformed;
using detail::Type;

namespace {

constexpr char kMagic[4] = {'C', 'B', 'R', 'V'};
constexpr std::uint8_t kVersion = 1;
constexpr auto kRetry = 50ms;          // between connection attempts while nothing listens
constexpr auto kGrace = 2s;            // a rank waits this long past the deadline for the server's FAIL
constexpr std::size_t kChunk = 4096;    // a receive buffer grows only as its bytes arrive
constexpr const char* kTypeName[] = {"?", "JOIN", "TABLE", "REFUSE", "FAIL"};

std::string os_error(int err) { return std::error_code(err, std::generic_category()).message(); }

std::string seconds(Clock::duration d) {
  const double s = std::chrono::duration<double>(d).count();
  if (s >= 10) return std::to_string(std::lround(s));
  std::ostringstream out;  // tenths: the caller's deadline began a moment before ours
  out << std::round(std::max(s, 0.0) * 10) / 10;
  return out.str();
}

// ---- wire ----

struct Writer {
  std::vector<std::byte> out;
  explicit Writer(Type t) { bytes(kMagic, 4), u8(kVersion), u8(std::uint8_t(t)), u16(0), u32(0); }  // length: finish()
  void u8(std::uint8_t v) { out.push_back(std::byte{v}); }
  void u16(std::uint16_t v) { u8(v >> 8), u8(v & 0xff); }
  void u32(std::uint32_t v) { u16(v >> 16), u16(v & 0xffff); }
  void bytes(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    out.insert(out.end(), b, b + n);
  }
  std::vector<std::byte> finish() {
    const std::size_t n = out.size() - kHeaderSize;
    if (n > UINT32_MAX) throw Error("a rendezvous message of " + std::to_string(n) + " bytes is over the protocol's 4 GiB");
    for (int i = 0; i < 4; ++i) out[8 + i] = std::byte(n >> (24 - 8 * i) & 0xff);
    return std::move(out);
  }
};

// Reads fields off a payload; running past its end is a Malformed message.
struct Reader {
  std::span<const std::byte> in;
  const char* what;
  std::size_t at = 0;
  std::span<const std::byte> take(std::size_t n) {
    if (n > in.size() - at)
      throw Malformed(std::string(what) + " is truncated: " + std::to_string(in.size()) + " bytes, its fields need more");
    return in.subspan(std::exchange(at, at + n), n);
  }
  std::uint32_t uint(std::size_t n) {
    std::uint32_t v = 0;
    for (std::byte b : take(n)) v = v << 8 | std::to_integer<std::uint32_t>(b);
    return v;
  }
  void end() const {
    if (at != in.size())
      throw Malformed(std::string(what) + " has " + std::to_string(in.size() - at) + " bytes after its last field");
  }
};

// ---- sockets ----

using AddrList = std::unique_ptr<addrinfo, void (*)(addrinfo*)>;
AddrList resolve(const std::string& host, int port, bool passive, int& err) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  addrinfo* res = nullptr;
  err = ::getaddrinfo(passive && host.empty() ? nullptr : host.c_str(), std::to_string(port).c_str(), &hints, &res);
  return AddrList(err == 0 ? res : nullptr, ::freeaddrinfo);
}

std::string address(const sockaddr_storage& ss, socklen_t len) {
  char host[NI_MAXHOST], port[NI_MAXSERV];
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&ss), len, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "an unknown address";
  return Endpoint{host, std::atoi(port)}.text();
}

// poll() until something is ready or `until`; 0 at the deadline. EINTR restarts with the time left.
int poll_until(std::vector<pollfd>& fds, Clock::time_point until) {
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now()).count();
    const int n = ::poll(fds.data(), fds.size(), static_cast<int>(std::clamp<long long>(left, 0, INT_MAX)));
    if (n > 0 || (n == 0 && Clock::now() >= until)) return n;
    if (n < 0 && errno != EINTR) throw Error("poll() failed in the rendezvous: " + os_error(errno));
  }
}

bool wait_for(int fd, short events, Clock::time_point until) {
  std::vector<pollfd> one{{fd, events, 0}};
  return poll_until(one, until) > 0;
}

bool again() { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR; }

// Receives toward `want` bytes, growing `in` only as bytes arrive (at most doubling it), so a
// length field alone allocates nothing. Returns what recv() returned.
ssize_t receive(int fd, std::vector<std::byte>& in, std::size_t& have, std::size_t want) {
  if (in.size() == have) in.resize(std::min(want, have + std::max(kChunk, have)));
  const ssize_t r = ::recv(fd, in.data() + have, in.size() - have, 0);
  if (r > 0) have += static_cast<std::size_t>(r);
  return r;
}

// Sends a short message on a connection nothing was sent on yet: an empty socket buffer takes it
// whole, so one non-blocking try suffices. A peer already gone is no error here.
void send_now(int fd, const std::vector<std::byte>& m) { (void)::send(fd, m.data(), m.size(), MSG_NOSIGNAL | MSG_DONTWAIT); }

// ---- the server's bookkeeping for one serve() ----

struct Conn {
  Conn(Fd f, std::string a) : fd(std::move(f)), addr(std::move(a)) {}
  Fd fd;
  std::string addr;
  std::vector<std::byte> in;
  std::size_t have = 0, want = kHeaderSize;
  bool header = false;  // decoded: `want` is the whole JOIN
  int rank = -1;        // >= 0 once joined
  std::size_t sent = 0;  // bytes of the table
};

struct Session {
  int size;
  const std::string& job;
  std::string at;  // the server's endpoint, for messages
  const Log& log;
  std::vector<Conn> conns;
  std::vector<std::string> from;  // who joined as each rank; empty: missing
  Table blobs;
  int joined = 0;
  bool told_fd_limit = false;

  void say(const std::string& line) const {
    if (log) log(UsageError::printable(line));
  }
  void drop(Conn& c, const std::string& why) {
    say("dropped a connection from " + c.addr + ": " + why);
    c.fd.reset();
  }
  void refuse(Conn& c, const std::string& reason) {
    say("refused a connection from " + c.addr + ": " + reason);
    send_now(c.fd.get(), detail::encode_reason(Type::refuse, reason));
    c.fd.reset();
  }
  void leave(Conn& c, const std::string& why) {  // a joined rank is missing again
    say("rank " + std::to_string(c.rank) + " (" + c.addr + ") " + why + "; it counts as missing until it joins again");
    from[c.rank].clear();
    blobs[c.rank].clear();
    --joined;
    c.fd.reset();
  }

  void accept_all(int listener, Clock::time_point& retry_accept) {
    int pending = static_cast<int>(std::count_if(conns.begin(), conns.end(), [](const Conn& c) { return c.rank < 0; }));
    for (int n = 0; n < 64; ++n) {  // bounded, so a flood cannot hold us past the deadline
      sockaddr_storage ss{};
      socklen_t len = sizeof ss;
      Fd fd(::accept4(listener, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC));
      if (!fd) {
        const int err = errno;
        if (err == EINTR || err == ECONNABORTED) continue;
        if (err == EAGAIN || err == EWOULDBLOCK) return;
        if (err != EMFILE && err != ENFILE && err != ENOBUFS && err != ENOMEM)
          throw Error("the rendezvous at " + at + " cannot accept connections: " + os_error(err));
        // Out of descriptors: the listener stays readable, so look again only in 100 ms.
        if (!std::exchange(told_fd_limit, true))
          say("cannot accept more connections for now (" + os_error(err) + "); raise `ulimit -n` for " +
              std::to_string(size) + " ranks");
        retry_accept = Clock::now() + 100ms;
        return;
      }
      Conn c{std::move(fd), address(ss, len)};
      if (pending >= detail::max_pending(size)) {
        say("closed a connection from " + c.addr + " at once: " + std::to_string(pending) +
            " connections already wait to join, the most allowed for " + std::to_string(size) + " ranks");
        continue;
      }
      ++pending;
      conns.push_back(std::move(c));
    }
  }

  void readable(Conn& c) {
    if (c.rank >= 0) {  // a joined rank sends nothing more: it left, or broke the protocol
      std::byte b;
      const ssize_t r = ::recv(c.fd.get(), &b, 1, 0);
      if (r < 0 && again()) return;
      return leave(c, r > 0 ? "sent bytes after its JOIN and was dropped" : "disconnected before the table");
    }
    const ssize_t r = receive(c.fd.get(), c.in, c.have, c.want);
    if (r < 0 && again()) return;
    if (r <= 0) return drop(c, r == 0 ? "closed after " + std::to_string(c.have) + " bytes, before a whole JOIN" : os_error(errno));
    try {
      if (!c.header && c.have == kHeaderSize) {
        const auto h = detail::decode_header(c.in, size);
        if (h.type != Type::join) throw Malformed(std::string("a ") + kTypeName[int(h.type)] + " where a JOIN belongs");
        c.header = true;
        c.want += h.length;  // bounded by decode_header
      }
      if (c.header && c.have == c.want) joins(c, detail::decode_join(std::span(c.in).subspan(kHeaderSize)));
    } catch (const Malformed& e) {
      drop(c, e.what());
    }
  }

  void joins(Conn& c, Join j) {
    const std::string who = "rank " + std::to_string(j.rank);
    if (j.job != job) return refuse(c, who + " of job '" + j.job + "' tried to join the rendezvous of job '" + job + "' at " + at);
    if (j.size != size)
      return refuse(c, who + " says the world has " + std::to_string(j.size) + " ranks but the rendezvous at " + at +
                           " is for " + std::to_string(size));
    if (!from[j.rank].empty())
      return refuse(c, who + " already joined from " + from[j.rank] +
                           "; a second process claims it (two launches sharing one rendezvous endpoint?)");
    c.rank = j.rank;
    c.in = {};
    from[j.rank] = c.addr;
    blobs[j.rank] = std::move(j.blob);
    ++joined;
  }

  // Sends `table` to every joined connection until `until`; returns the ranks that did not take it.
  std::vector<int> send_table(const std::vector<std::byte>& table, Clock::time_point until) {
    std::vector<int> failed;
    for (;;) {
      std::erase_if(conns, [](const Conn& c) { return !c.fd; });
      if (conns.empty()) return failed;
      std::vector<pollfd> fds;
      for (const Conn& c : conns) fds.push_back({c.fd.get(), POLLOUT, 0});
      if (poll_until(fds, until) == 0) {
        std::vector<int> slow;
        for (const Conn& c : conns) slow.push_back(c.rank);
        std::sort(slow.begin(), slow.end());
        say(detail::rank_list(slow, size) + " did not read the table by " + seconds(kGrace) + " s past the deadline");
        failed.insert(failed.end(), slow.begin(), slow.end());
        return failed;
      }
      for (std::size_t i = 0; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        Conn& c = conns[i];
        const ssize_t w = ::send(c.fd.get(), table.data() + c.sent, table.size() - c.sent, MSG_NOSIGNAL);
        if (w < 0 && again()) continue;
        if (w < 0) {
          say("rank " + std::to_string(c.rank) + " (" + c.addr + ") lost the table: " + os_error(errno));
          failed.push_back(c.rank);
          c.fd.reset();
        } else if ((c.sent += static_cast<std::size_t>(w)) == table.size()) {
          c.fd.reset();
        }
      }
    }
  }
};

}  // namespace

std::string Endpoint::text() const {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

namespace detail {

void Fd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);  // never retried on EINTR: Linux has closed it already
  fd_ = fd;
}

std::uint64_t max_payload(Type type, int size) {
  switch (type) {
    case Type::join: return kMaxJoinPayload;
    case Type::table: return std::uint64_t(std::clamp(size, 0, kMaxSize)) * (4 + kMaxBlob) + 4;
    default: return 2 + kMaxReason;
  }
}

Header decode_header(std::span<const std::byte> h, int size) {
  if (h.size() != kHeaderSize) throw Malformed("a header of " + std::to_string(h.size()) + " bytes");
  if (std::memcmp(h.data(), kMagic, 4) != 0) throw Malformed("bad magic (not a collbench rendezvous message)");
  const auto u8 = [&](int i) { return std::to_integer<unsigned>(h[i]); };
  if (u8(4) != kVersion)
    throw Malformed("protocol version " + std::to_string(u8(4)) + ", this collbench speaks " + std::to_string(kVersion));
  if (u8(6) || u8(7)) throw Malformed("reserved header bytes are not zero");
  if (u8(5) < 1 || u8(5) > 4) throw Malformed("unknown message type " + std::to_string(u8(5)));
  const Header out{Type(u8(5)), std::uint32_t(u8(8) << 24 | u8(9) << 16 | u8(10) << 8 | u8(11))};
  if (out.length > max_payload(out.type, size))
    throw Malformed(std::string("a ") + kTypeName[int(out.type)] + " of " + std::to_string(out.length) +
                    " bytes, over its bound of " + std::to_string(max_payload(out.type, size)));
  return out;
}

std::string check_join(const Join& j) {
  if (j.size < 1 || j.size > kMaxSize) return "world size " + std::to_string(j.size) + " is outside 1.." + std::to_string(kMaxSize);
  if (j.rank < 0 || j.rank >= j.size)
    return "rank " + std::to_string(j.rank) + " is outside 0.." + std::to_string(j.size - 1);
  if (j.job.size() > kMaxJob) return "the job id is " + std::to_string(j.job.size()) + " bytes, over " + std::to_string(kMaxJob);
  if (!std::all_of(j.job.begin(), j.job.end(), [](char ch) { return ch >= 0x20 && ch < 0x7f; }))
    return "the job id '" + j.job + "' is not printable ASCII";
  if (j.blob.size() > kMaxBlob) return "the blob is " + std::to_string(j.blob.size()) + " bytes, over " + std::to_string(kMaxBlob);
  return {};
}

std::vector<std::byte> encode_join(const Join& j) {
  Writer w(Type::join);
  w.u32(j.rank), w.u32(j.size), w.u16(j.job.size()), w.bytes(j.job.data(), j.job.size());
  w.u32(j.blob.size()), w.bytes(j.blob.data(), j.blob.size());
  return w.finish();
}

Join decode_join(std::span<const std::byte> payload) {
  Reader r{payload, "JOIN"};
  const std::uint32_t rank = r.uint(4), size = r.uint(4);
  if (size < 1 || size > std::uint32_t(kMaxSize) || rank >= size)
    throw Malformed("JOIN of rank " + std::to_string(rank) + " in a world of " + std::to_string(size));
  Join j{int(rank), int(size), {}, {}};
  const auto job = r.take(r.uint(2));
  j.job.assign(reinterpret_cast<const char*>(job.data()), job.size());
  const std::uint32_t blob = r.uint(4);
  if (blob > kMaxBlob) throw Malformed("JOIN with a blob of " + std::to_string(blob) + " bytes");
  const auto bytes = r.take(blob);
  j.blob.assign(bytes.begin(), bytes.end());
  r.end();
  if (auto bad = check_join(j); !bad.empty()) throw Malformed("JOIN: " + bad);
  return j;
}

std::vector<std::byte> encode_table(const Table& table) {
  Writer w(Type::table);
  w.u32(table.size());
  for (const auto& blob : table) w.u32(blob.size()), w.bytes(blob.data(), blob.size());
  return w.finish();
}

Table decode_table(std::span<const std::byte> payload, int size) {
  Reader r{payload, "TABLE"};
  if (const std::uint32_t n = r.uint(4); n != std::uint32_t(size))
    throw Malformed("TABLE of " + std::to_string(n) + " ranks for a world of " + std::to_string(size));
  Table out(size);
  for (auto& blob : out) {
    const std::uint32_t n = r.uint(4);
    if (n > kMaxBlob) throw Malformed("TABLE with a blob of " + std::to_string(n) + " bytes");
    const auto bytes = r.take(n);
    blob.assign(bytes.begin(), bytes.end());
  }
  r.end();
  return out;
}

std::vector<std::byte> encode_reason(Type type, std::string_view reason) {
  reason = reason.substr(0, kMaxReason);
  Writer w(type);
  w.u16(reason.size()), w.bytes(reason.data(), reason.size());
  return w.finish();
}

std::string decode_reason(std::span<const std::byte> payload) {
  Reader r{payload, "reason"};
  const std::uint32_t n = r.uint(2);
  if (n > kMaxReason) throw Malformed("a reason of " + std::to_string(n) + " bytes");
  const auto text = r.take(n);
  r.end();
  return {reinterpret_cast<const char*>(text.data()), text.size()};
}

std::string rank_list(const std::vector<int>& ranks, int size) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  int items = 0;
  for (std::size_t i = 0; i < ranks.size(); ++items) {
    if (items == 16) {
      out += ", ... (" + std::to_string(ranks.size()) + " ranks)";
      break;
    }
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (items) out += ", ";
    out += std::to_string(ranks[i]);
    if (j - i >= 2) out += "-" + std::to_string(ranks[j]), i = j;  // runs of 3 or more as a range
    ++i;
  }
  return out + " of " + std::to_string(size);
}

}  // namespace detail

Server::Server(const std::string& host, int port) : host_(host.empty() ? "0.0.0.0" : host) {
  const std::string where = Endpoint{host_, port}.text();
  if (port < 0 || port > 65535) throw UsageError("rendezvous port " + std::to_string(port) + " is outside 0..65535");
  int err = 0;
  const AddrList addrs = resolve(host, port, true, err);
  if (!addrs) throw UsageError("cannot resolve the rendezvous host '" + host + "': " + ::gai_strerror(err));
  std::string why;
  for (const addrinfo* a = addrs.get(); a && !listener_; a = a->ai_next) {
    Fd fd(::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
    const int one = 1;
    if (fd && ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
        ::bind(fd.get(), a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd.get(), SOMAXCONN) == 0)
      listener_ = std::move(fd);
    else if (why.empty())
      why = os_error(errno);
  }
  if (!listener_)
    throw UsageError("cannot listen for the rendezvous on " + where + ": " + why + "; choose another port (0: any free one)");
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  ::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&ss), &len);
  port_ = ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6&>(ss).sin6_port
                                         : reinterpret_cast<sockaddr_in&>(ss).sin_port);
}

Server::~Server() = default;

Table Server::serve(int size, const std::string& job, const std::optional<Join>& own, Clock::time_point deadline,
                    const Log& log) {
  const auto start = Clock::now();
  if (!listener_) throw Error("the rendezvous at " + endpoint().text() + " was served already: its listener is closed");
  if (auto bad = detail::check_join({0, size, job, {}}); !bad.empty()) throw Refused("cannot serve the rendezvous: " + bad);
  Session s{size, job, endpoint().text(), log, {}, std::vector<std::string>(size), Table(size)};
  if (own) {
    if (auto bad = detail::check_join(*own); !bad.empty()) throw Refused("cannot join the own rendezvous: " + bad);
    if (own->size != size || own->job != job)
      throw Refused("the serving rank's own join (" + std::to_string(own->size) + " ranks, job '" + own->job +
                    "') does not match its rendezvous (" + std::to_string(size) + " ranks, job '" + job + "')");
    s.from[own->rank] = "the serving process";
    s.blobs[own->rank] = own->blob;
    s.joined = 1;
  }
  Clock::time_point retry_accept{};
  while (s.joined < size) {
    const auto now = Clock::now();
    if (now >= deadline) {
      std::vector<int> missing;
      for (int r = 0; r < size; ++r)
        if (s.from[r].empty()) missing.push_back(r);
      const std::string reason = detail::rank_list(missing, size) + " never joined the rendezvous at " + s.at +
                                 " within " + seconds(deadline - start) + " s";
      for (const Conn& c : s.conns)
        if (c.rank >= 0) send_now(c.fd.get(), detail::encode_reason(Type::fail, reason));
      s.conns.clear();
      listener_.reset();
      throw Timeout(reason);
    }
    const bool listening = now >= retry_accept;
    std::vector<pollfd> fds{{listening ? listener_.get() : -1, POLLIN, 0}};  // poll skips a negative fd
    for (const Conn& c : s.conns) fds.push_back({c.fd.get(), POLLIN, 0});
    poll_until(fds, listening ? deadline : std::min(deadline, retry_accept));
    for (std::size_t i = 1; i < fds.size(); ++i)
      if (fds[i].revents) s.readable(s.conns[i - 1]);
    std::erase_if(s.conns, [](const Conn& c) { return !c.fd; });
    if (fds[0].revents) s.accept_all(listener_.get(), retry_accept);
  }
  // Every rank joined: the listener goes, and so does anyone still mid-JOIN (it cannot stall us).
  listener_.reset();
  for (Conn& c : s.conns)
    if (c.rank < 0) s.drop(c, "no whole JOIN by the time every rank had joined");
  auto failed = s.send_table(detail::encode_table(s.blobs), std::max(deadline, Clock::now()) + kGrace);
  s.conns.clear();
  std::sort(failed.begin(), failed.end());
  if (!failed.empty())
    throw Timeout(detail::rank_list(failed, size) + " did not take the table from the rendezvous at " + s.at);
  return std::move(s.blobs);
}

Table join(const Endpoint& server, const Join& me, Clock::time_point deadline) {
  if (auto bad = detail::check_join(me); !bad.empty()) throw Refused("cannot join the rendezvous at " + server.text() + ": " + bad);
  const auto start = Clock::now();
  const std::string at = "rank 0's rendezvous at " + server.text();

  // Resolve once (retrying a temporary failure), then connect until something listens.
  int gai = 0;
  AddrList addrs = resolve(server.host, server.port, false, gai);
  for (; !addrs && gai == EAI_AGAIN && Clock::now() < deadline; addrs = resolve(server.host, server.port, false, gai))
    std::this_thread::sleep_for(kRetry);
  if (!addrs && gai != EAI_AGAIN) throw Refused("cannot resolve the rendezvous host '" + server.host + "': " + ::gai_strerror(gai));
  std::string last = addrs ? "nothing tried" : ::gai_strerror(gai);
  Fd fd;
  while (!fd) {
    for (const addrinfo* a = addrs.get(); a && !fd && Clock::now() < deadline; a = a->ai_next) {
      Fd s(::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
      int err = !s ? errno : ::connect(s.get(), a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
      if (s && (err == EINPROGRESS || err == EINTR)) {  // either way the connection goes on in the background
        socklen_t len = sizeof err;
        if (!wait_for(s.get(), POLLOUT, deadline)) err = ETIMEDOUT;
        else if (::getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      }
      if (err == 0) fd = std::move(s);
      else last = os_error(err);
    }
    if (fd) break;
    if (Clock::now() >= deadline)
      throw Timeout(at + " never answered within " + seconds(deadline - start) + " s (last: " + last +
                    "); is rank 0 running, and does that address reach it from here?");
    std::this_thread::sleep_for(std::min<Clock::duration>(kRetry, deadline - Clock::now()));
  }

  // Send the JOIN, then read one verdict until the grace past the deadline.
  const auto until = deadline + kGrace;
  const auto message = detail::encode_join(me);
  for (std::size_t sent = 0; sent < message.size();) {
    const ssize_t w = ::send(fd.get(), message.data() + sent, message.size() - sent, MSG_NOSIGNAL);
    if (w >= 0) sent += static_cast<std::size_t>(w);
    else if (!again()) break;  // a REFUSE may be waiting: read it
    else if (!wait_for(fd.get(), POLLOUT, until)) break;
  }
  std::vector<std::byte> in;
  std::size_t have = 0;
  const auto fill = [&](std::size_t want) {
    while (have < want) {
      const ssize_t r = receive(fd.get(), in, have, want);
      if (r == 0) throw Timeout(at + " closed the connection without a verdict (did rank 0 exit, or turn this connection away?)");
      if (r < 0 && !again()) throw Timeout(at + " lost the connection without a verdict: " + os_error(errno));
      if (r < 0 && !wait_for(fd.get(), POLLIN, until))
        throw Timeout(at + " sent no verdict within " + seconds(until - start) + " s");
    }
  };
  try {
    fill(kHeaderSize);
    const auto h = detail::decode_header(in, me.size);
    if (h.type == Type::join) throw Malformed("a JOIN where a verdict belongs");
    fill(kHeaderSize + h.length);
    const auto payload = std::span(in).subspan(kHeaderSize);
    if (h.type == Type::refuse) throw Refused(detail::decode_reason(payload));
    if (h.type == Type::fail) throw Timeout(UsageError::printable(detail::decode_reason(payload)));
    Table table = detail::decode_table(payload, me.size);
    if (table[me.rank] != me.blob) throw Malformed("its table's entry for rank " + std::to_string(me.rank) + " is not what this rank sent");
    return table;
  } catch (const Malformed& e) {
    throw Malformed(at + " sent a malformed reply: " + e.what() + " (is something else listening there?)");
  }
}

}  // namespace collbench::rendezvous

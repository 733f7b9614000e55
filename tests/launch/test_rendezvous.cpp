// The rendezvous (collectives/launch/rendezvous.hpp): the wire format's encoders and
// decoders, then a server and its ranks as threads of this process over loopback TCP, with raw
// sockets playing garbage, silent and half-message peers and broken servers.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstring>
#include <future>
#include <mutex>
#include <random>
#include <thread>

#include "collectives/launch/rendezvous.hpp"

namespace collbench::rendezvous {
namespace {

using namespace std::chrono_literals;
using detail::Fd;
using detail::Malformed;
using detail::Type;

const std::string kJob = "job-1";

Clock::time_point in(double s) { return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); }
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::vector<std::byte> bytes(std::string_view s) {
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  return {p, p + s.size()};
}

// Rank r's blob: distinct per rank, of varying length, empty for rank 2.
std::vector<std::byte> blob_of(int r) {
  std::string s;
  for (int i = 0; r != 2 && i <= r; ++i) s += "pair-addresses-of-rank-" + std::to_string(r) + ";";
  return bytes(s);
}
Join rank(int r, int size, const std::string& job = kJob) { return {r, size, job, blob_of(r)}; }
Table expected(int size) {
  Table t;
  for (int r = 0; r < size; ++r) t.push_back(blob_of(r));
  return t;
}

// Log lines, thread-safe, with a wait for the n-th line containing some text.
struct Logs {
  std::mutex m;
  std::condition_variable cv;
  std::vector<std::string> lines;
  Log log() {
    return [this](const std::string& line) {
      std::lock_guard lock(m);
      lines.push_back(line);
      cv.notify_all();
    };
  }
  std::size_t count_locked(std::string_view text) const {
    return std::count_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
  }
  bool wait(std::string_view text, std::size_t n = 1) {
    std::unique_lock lock(m);
    return cv.wait_for(lock, 3s, [&] { return count_locked(text) >= n; });
  }
  std::size_t count(std::string_view text) {
    std::lock_guard lock(m);
    return count_locked(text);
  }
  std::string last() {
    std::lock_guard lock(m);
    return lines.empty() ? "" : lines.back();
  }
  std::string all() {
    std::lock_guard lock(m);
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
  }
};

Fd raw_connect(int port) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << std::strerror(errno);
  return fd;
}
void send_all(int fd, const std::vector<std::byte>& m) {
  ASSERT_EQ(::send(fd, m.data(), m.size(), MSG_NOSIGNAL), ssize_t(m.size())) << std::strerror(errno);
}
// Whether the peer closed `fd` within `wait` (EOF or reset; anything it sent first is skipped).
bool closed_by_peer(int fd, std::chrono::milliseconds wait) {
  const auto until = Clock::now() + wait;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    if (::poll(&p, 1, std::max<long>(left, 0)) <= 0) return false;
    char buf[4096];
    const ssize_t r = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (r == 0 || (r < 0 && errno == ECONNRESET)) return true;
  }
}
// A port nothing listens on (bound, read, released).
int free_port() {
  Fd fd(::socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  EXPECT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

std::future<Table> join_async(int port, Join me, Clock::time_point deadline) {
  return std::async(std::launch::async, [=] { return join({"127.0.0.1", port}, me, deadline); });
}
std::future<Table> serve_async(Server& server, int size, std::optional<Join> own, Clock::time_point deadline, Logs& logs) {
  return std::async(std::launch::async, [&server, size, own, deadline, log = logs.log()] {
    return server.serve(size, kJob, own, deadline, log);
  });
}

// Runs `f`, expecting an exception of type E; returns its what().
template <class E, class F>
std::string thrown(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "unexpected exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "no exception";
  return {};
}
#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)
#define EXPECT_ONE_LINE(text) EXPECT_EQ(std::string(text).find('\n'), std::string::npos) << (text)

// ---- wire format ----

std::vector<std::byte> payload_of(const std::vector<std::byte>& message) { return {message.begin() + detail::kHeaderSize, message.end()}; }

// A JOIN payload with every field chosen freely (big-endian), to build the ones encode_join won't.
std::vector<std::byte> raw_join(std::uint32_t rank, std::uint32_t size, std::string_view job, std::uint32_t blob_len,
                                std::size_t blob_bytes, std::uint16_t job_len_field = 0xffff) {
  std::vector<std::byte> p;
  const auto put = [&](std::uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) p.push_back(std::byte(v >> (8 * i) & 0xff));
  };
  put(rank, 4), put(size, 4), put(job_len_field == 0xffff ? job.size() : job_len_field, 2);
  for (char c : job) p.push_back(std::byte(c));
  put(blob_len, 4);
  p.resize(p.size() + blob_bytes, std::byte{7});
  return p;
}

TEST(RendezvousWire, JoinRoundTrips) {
  for (const Join& j : {rank(0, 1), rank(2, 3, ""), Join{4, 5, std::string(kMaxJob, 'x'), std::vector<std::byte>(kMaxBlob, std::byte{1})},
                        Join{kMaxSize - 1, kMaxSize, "torchrun:abc/0", {}}}) {
    const auto m = detail::encode_join(j);
    const auto h = detail::decode_header(std::span(m).first(detail::kHeaderSize), j.size);
    EXPECT_EQ(h.type, Type::join);
    ASSERT_EQ(h.length, m.size() - detail::kHeaderSize);
    const Join back = detail::decode_join(payload_of(m));
    EXPECT_EQ(back.rank, j.rank);
    EXPECT_EQ(back.size, j.size);
    EXPECT_EQ(back.job, j.job);
    EXPECT_EQ(back.blob, j.blob);
  }
  // The header, byte by byte: magic, version 1, type, zeros, big-endian length.
  const auto m = detail::encode_join(Join{1, 2, "j", bytes("ab")});
  const std::vector<std::byte> head{std::byte{'C'}, std::byte{'B'}, std::byte{'R'}, std::byte{'V'}, std::byte{1}, std::byte{1},
                                    std::byte{0},   std::byte{0},   std::byte{0},   std::byte{0},   std::byte{0}, std::byte{17}};
  EXPECT_EQ(std::vector(m.begin(), m.begin() + 12), head);
}

TEST(RendezvousWire, HeaderRejectsWhatIsNotOurs) {
  const auto good = detail::encode_join(rank(1, 2));
  const auto bad = [&](int at, std::uint8_t value) {
    auto m = good;
    m[at] = std::byte{value};
    return thrown<Malformed>([&] { detail::decode_header(std::span(m).first(12), 2); });
  };
  EXPECT_HAS(bad(0, 'X'), "bad magic");
  EXPECT_HAS(bad(4, 2), "protocol version 2");
  EXPECT_HAS(bad(5, 0), "unknown message type 0");
  EXPECT_HAS(bad(5, 9), "unknown message type 9");
  EXPECT_HAS(bad(6, 1), "reserved");
  EXPECT_HAS(bad(8, 0xff), "over its bound");  // a 4 GiB JOIN
  EXPECT_HAS(thrown<Malformed>([&] { detail::decode_header(std::span(good).first(11), 2); }), "11 bytes");
  // Each type's bound: a TABLE's grows with the world, a reason's is 1 KiB.
  const auto header = [](Type t, std::uint32_t len) {
    std::vector<std::byte> h = bytes("CBRV");
    for (int v : {1, int(t), 0, 0}) h.push_back(std::byte(v));
    for (int i = 3; i >= 0; --i) h.push_back(std::byte(len >> (8 * i) & 0xff));
    return h;
  };
  const std::uint32_t table4 = 4 * (4 + kMaxBlob) + 4;
  EXPECT_EQ(detail::decode_header(header(Type::table, table4), 4).length, table4);
  EXPECT_HAS(thrown<Malformed>([&] { detail::decode_header(header(Type::table, table4 + 1), 4); }), "over its bound");
  EXPECT_NO_THROW(detail::decode_header(header(Type::fail, 2 + detail::kMaxReason), 4));
  EXPECT_THROW(detail::decode_header(header(Type::refuse, 3 + detail::kMaxReason), 4), Malformed);
  EXPECT_NO_THROW(detail::decode_header(header(Type::join, detail::kMaxJoinPayload), 4));
  EXPECT_THROW(detail::decode_header(header(Type::join, detail::kMaxJoinPayload + 1), 4), Malformed);
}

TEST(RendezvousWire, JoinRejectsEveryTruncationAndTrailingBytes) {
  const auto p = payload_of(detail::encode_join(rank(3, 5)));
  for (std::size_t n = 0; n < p.size(); ++n)
    EXPECT_HAS(thrown<Malformed>([&] { detail::decode_join(std::span(p).first(n)); }), "truncated");
  auto longer = p;
  longer.push_back(std::byte{0});
  EXPECT_HAS(thrown<Malformed>([&] { detail::decode_join(longer); }), "1 bytes after its last field");
}

TEST(RendezvousWire, JoinValidatesEveryField) {
  EXPECT_NO_THROW(detail::decode_join(raw_join(1, 2, "j", 3, 3)));
  EXPECT_HAS(thrown<Malformed>([] { detail::decode_join(raw_join(2, 2, "j", 0, 0)); }), "rank 2 in a world of 2");
  EXPECT_HAS(thrown<Malformed>([] { detail::decode_join(raw_join(0xffffffff, 2, "j", 0, 0)); }), "world of 2");
  EXPECT_HAS(thrown<Malformed>([] { detail::decode_join(raw_join(0, 0, "j", 0, 0)); }), "world of 0");
  EXPECT_THROW(detail::decode_join(raw_join(0, kMaxSize + 1, "j", 0, 0)), Malformed);
  EXPECT_HAS(thrown<Malformed>([] { detail::decode_join(raw_join(0, 1, std::string(kMaxJob + 1, 'x'), 0, 0)); }), "257 bytes");
  EXPECT_HAS(thrown<Malformed>([] { detail::decode_join(raw_join(0, 1, "a\nb", 0, 0)); }), "not printable");
  EXPECT_HAS(thrown<Malformed>([] { detail::decode_join(raw_join(0, 1, "a\xc3\xa9", 0, 0)); }), "not printable");
  EXPECT_HAS(thrown<Malformed>([] { detail::decode_join(raw_join(0, 1, "j", kMaxBlob + 1, kMaxBlob + 1)); }), std::to_string(kMaxBlob + 1));
  // Lengths that disagree with the payload: a job or blob longer or shorter than said.
  EXPECT_HAS(thrown<Malformed>([] { detail::decode_join(raw_join(0, 1, "job", 0, 0, 200)); }), "truncated");
  EXPECT_HAS(thrown<Malformed>([] { detail::decode_join(raw_join(0, 1, "job", 10, 5)); }), "truncated");
  EXPECT_HAS(thrown<Malformed>([] { detail::decode_join(raw_join(0, 1, "job", 5, 10)); }), "after its last field");
}

TEST(RendezvousWire, TableAndReasonsRoundTripAndAreBounded) {
  const Table t = expected(4);
  const auto m = detail::encode_table(t);
  EXPECT_EQ(detail::decode_header(std::span(m).first(12), 4).type, Type::table);
  EXPECT_EQ(detail::decode_table(payload_of(m), 4), t);
  EXPECT_HAS(thrown<Malformed>([&] { detail::decode_table(payload_of(m), 5); }), "TABLE of 4 ranks for a world of 5");
  const auto p = payload_of(m);
  for (std::size_t n = 0; n < p.size(); ++n) EXPECT_THROW(detail::decode_table(std::span(p).first(n), 4), Malformed);
  // A blob length over kMaxBlob is refused before its bytes are looked for.
  std::vector<std::byte> huge{std::byte{0}, std::byte{0}, std::byte{0}, std::byte{1}, std::byte{0}, std::byte{0x10}, std::byte{0}, std::byte{1}};  // 1 rank, kMaxBlob + 1 bytes
  EXPECT_HAS(thrown<Malformed>([&] { detail::decode_table(huge, 1); }), std::to_string(kMaxBlob + 1));

  const auto r = detail::encode_reason(Type::fail, "rank 3 of 4 never joined");
  EXPECT_EQ(detail::decode_header(std::span(r).first(12), 4).type, Type::fail);
  EXPECT_EQ(detail::decode_reason(payload_of(r)), "rank 3 of 4 never joined");
  const auto cut = detail::encode_reason(Type::refuse, std::string(5000, 'r'));
  EXPECT_EQ(detail::decode_reason(payload_of(cut)).size(), detail::kMaxReason);
  std::vector<std::byte> over{std::byte{0x04}, std::byte{0x01}};
  over.resize(2 + 1025, std::byte{'r'});
  EXPECT_HAS(thrown<Malformed>([&] { detail::decode_reason(over); }), "1025 bytes");
  EXPECT_THROW(detail::decode_reason(std::vector<std::byte>{std::byte{0}, std::byte{5}, std::byte{'a'}}), Malformed);
}

// Random damage to valid messages: every outcome is a valid decode or Malformed, never a crash,
// another exception, or a decode that breaks the bounds.
TEST(RendezvousWire, FuzzedMessagesDecodeOrAreMalformed) {
  std::mt19937 rng(34);
  const std::vector<std::vector<std::byte>> seeds{detail::encode_join(rank(3, 5)), detail::encode_table(expected(3)),
                                                  detail::encode_reason(Type::refuse, "no")};
  int decoded = 0;
  for (int i = 0; i < 20000; ++i) {
    auto m = seeds[i % seeds.size()];
    for (int k = 1 + rng() % 4; k > 0; --k) {
      const std::size_t at = rng() % m.size();
      switch (rng() % 3) {
        case 0: m[at] = std::byte(rng()); break;
        case 1: m.resize(at + 1); break;
        default: m.insert(m.begin() + at, std::byte(rng())); break;
      }
    }
    try {
      if (m.size() < detail::kHeaderSize) throw Malformed("short");
      const auto h = detail::decode_header(std::span(m).first(detail::kHeaderSize), 3);
      const auto p = std::span(m).subspan(detail::kHeaderSize);
      if (h.length != p.size()) throw Malformed("length");
      if (h.type == Type::join) {
        const Join j = detail::decode_join(p);
        EXPECT_EQ(detail::check_join(j), "");
      } else if (h.type == Type::table) {
        for (const auto& b : detail::decode_table(p, 3)) EXPECT_LE(b.size(), kMaxBlob);
      } else {
        EXPECT_LE(detail::decode_reason(p).size(), detail::kMaxReason);
      }
      ++decoded;
    } catch (const Malformed&) {
    }
  }
  EXPECT_GT(decoded, 0);  // some damage leaves a valid message (e.g. a changed blob byte)
}

TEST(RendezvousWire, RankListsAndEndpoints) {
  EXPECT_EQ(detail::rank_list({3}, 4), "rank 3 of 4");
  EXPECT_EQ(detail::rank_list({2, 3}, 4), "ranks 2, 3 of 4");
  EXPECT_EQ(detail::rank_list({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12}, 64), "ranks 0-9, 12 of 64");
  std::vector<int> odd;
  for (int r = 1; r < 100; r += 2) odd.push_back(r);
  const std::string cut = detail::rank_list(odd, 100);
  EXPECT_HAS(cut, "ranks 1, 3, 5");
  EXPECT_HAS(cut, ", ... (50 ranks) of 100");
  EXPECT_LT(cut.size(), 120u);
  EXPECT_EQ((Endpoint{"node1", 29500}.text()), "node1:29500");
  EXPECT_EQ((Endpoint{"::1", 29500}.text()), "[::1]:29500");
}

// ---- server and ranks ----

TEST(RendezvousServer, EveryRankGetsEveryBlob) {
  for (int size = 1; size <= 5; ++size) {
    for (bool own : {false, true}) {
      SCOPED_TRACE("size " + std::to_string(size) + (own ? " with own join" : ""));
      Server server("127.0.0.1", 0);
      std::vector<std::future<Table>> ranks;
      for (int r = own ? 1 : 0; r < size; ++r) ranks.push_back(join_async(server.port(), rank(r, size), in(5)));
      Logs logs;
      const Table table = server.serve(size, kJob, own ? std::optional(rank(0, size)) : std::nullopt, in(5), logs.log());
      EXPECT_EQ(table, expected(size));
      for (auto& f : ranks) EXPECT_EQ(f.get(), expected(size));
      EXPECT_EQ(logs.all(), "");
      EXPECT_THROW(server.serve(size, kJob, std::nullopt, in(1), logs.log()), Error);  // once only
    }
  }
}

TEST(RendezvousServer, RanksStartedBeforeTheServerRetryUntilItListens) {
  const int port = free_port();
  std::vector<std::future<Table>> ranks;
  for (int r = 1; r < 3; ++r) ranks.push_back(join_async(port, rank(r, 3), in(5)));
  std::this_thread::sleep_for(200ms);  // several refused connection attempts
  Server server("127.0.0.1", port);
  EXPECT_EQ(server.serve(3, kJob, rank(0, 3), in(5), {}), expected(3));
  for (auto& f : ranks) EXPECT_EQ(f.get(), expected(3));
}

TEST(RendezvousServer, HostNamesAndIpv6) {
  {
    Server server("localhost", 0);
    auto r1 = std::async(std::launch::async, [&] { return join({"localhost", server.port()}, rank(1, 2), in(5)); });
    EXPECT_EQ(server.serve(2, kJob, rank(0, 2), in(5), {}), expected(2));
    EXPECT_EQ(r1.get(), expected(2));
  }
  std::optional<Server> v6;
  try {
    v6.emplace("::1", 0);
  } catch (const UsageError& e) {
    GTEST_SKIP() << "no IPv6 loopback here: " << e.what();
  }
  auto r1 = std::async(std::launch::async, [&] { return join({"::1", v6->port()}, rank(1, 2), in(5)); });
  EXPECT_EQ(v6->serve(2, kJob, rank(0, 2), in(5), {}), expected(2));
  EXPECT_EQ(r1.get(), expected(2));
}

TEST(RendezvousServer, GarbageConnectionsAreDroppedAtOnce) {
  Server server("127.0.0.1", 0);
  Logs logs;
  auto serving = serve_async(server, 2, rank(0, 2), in(5), logs);
  const auto good = detail::encode_join(rank(1, 2));
  const auto patched = [&](int at, std::uint8_t v) {
    auto m = good;
    m[at] = std::byte{v};
    return m;
  };
  auto longer = good;  // the header says one byte more than the fields use
  longer[11] = std::byte(std::to_integer<int>(longer[11]) + 1);
  longer.push_back(std::byte{0});
  auto table = detail::encode_table(expected(2));
  const std::vector<std::pair<std::vector<std::byte>, std::string>> cases{
      {bytes("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), "bad magic"},
      {patched(4, 2), "protocol version 2"},
      {patched(5, 7), "unknown message type 7"},
      {table, "a TABLE where a JOIN belongs"},
      {patched(8, 0x7f), "over its bound"},
      {longer, "after its last field"},
      {detail::encode_reason(Type::fail, "x"), "a FAIL where a JOIN belongs"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].second);
    Fd fd = raw_connect(server.port());
    send_all(fd.get(), cases[i].first);
    EXPECT_TRUE(closed_by_peer(fd.get(), 3000ms));
    ASSERT_TRUE(logs.wait("dropped a connection from 127.0.0.1:", i + 1)) << logs.all();
    EXPECT_HAS(logs.last(), cases[i].second);
  }
  EXPECT_EQ(join({"127.0.0.1", server.port()}, rank(1, 2), in(5)), expected(2));
  EXPECT_EQ(serving.get(), expected(2));
}

TEST(RendezvousServer, SilentAndHalfMessagePeersDoNotHoldItUp) {
  Server server("127.0.0.1", 0);
  Logs logs;
  auto serving = serve_async(server, 3, rank(0, 3), in(5), logs);
  const auto good = detail::encode_join(rank(1, 3));
  std::vector<Fd> quiet;
  quiet.push_back(raw_connect(server.port()));  // says nothing
  quiet.push_back(raw_connect(server.port()));  // half a header
  send_all(quiet.back().get(), {good.begin(), good.begin() + 6});
  quiet.push_back(raw_connect(server.port()));  // the header and half the payload
  send_all(quiet.back().get(), {good.begin(), good.begin() + good.size() / 2});
  // A garbage peer after them: once it is dropped, the server has accepted the quiet ones.
  Fd garbage = raw_connect(server.port());
  send_all(garbage.get(), bytes("garbage-garbage"));
  ASSERT_TRUE(logs.wait("bad magic")) << logs.all();

  const auto start = Clock::now();
  auto r1 = join_async(server.port(), rank(1, 3), in(5));
  auto r2 = join_async(server.port(), rank(2, 3), in(5));
  EXPECT_EQ(serving.get(), expected(3));
  EXPECT_LT(since(start), 1.0);  // the deadline is 5 s away: it waited on nobody
  EXPECT_EQ(r1.get(), expected(3));
  EXPECT_EQ(r2.get(), expected(3));
  for (auto& fd : quiet) EXPECT_TRUE(closed_by_peer(fd.get(), 1000ms));
  EXPECT_EQ(logs.count("no whole JOIN by the time every rank had joined"), 3u) << logs.all();
}

TEST(RendezvousServer, ConnectionsBeyondTheCapAreClosedAtOnce) {
  Server server("127.0.0.1", 0);
  Logs logs;
  auto serving = serve_async(server, 2, rank(0, 2), in(5), logs);
  const int cap = detail::max_pending(2);
  std::vector<Fd> fds;
  for (int i = 0; i < cap + 3; ++i) fds.push_back(raw_connect(server.port()));
  ASSERT_TRUE(logs.wait("at once: " + std::to_string(cap) + " connections already wait to join", 3)) << logs.all();
  std::this_thread::sleep_for(50ms);  // let the FINs arrive
  int closed = 0;
  for (auto& fd : fds) closed += closed_by_peer(fd.get(), 0ms);
  EXPECT_EQ(closed, 3);
  // A slot freed by a peer leaving lets the last rank in.
  for (auto& fd : fds)
    if (!closed_by_peer(fd.get(), 0ms)) {
      fd.reset();
      break;
    }
  ASSERT_TRUE(logs.wait("closed after 0 bytes")) << logs.all();
  EXPECT_EQ(join({"127.0.0.1", server.port()}, rank(1, 2), in(5)), expected(2));
  EXPECT_EQ(serving.get(), expected(2));
  EXPECT_EQ(logs.count("no whole JOIN"), std::size_t(cap - 1));
}

TEST(RendezvousServer, ASecondClaimOfARankIsRefused) {
  Server server("127.0.0.1", 0);
  Logs logs;
  auto serving = serve_async(server, 3, rank(0, 3), in(5), logs);
  Join a = rank(1, 3), b = rank(1, 3);
  b.blob = bytes("the impostor's blob");
  std::future<Table> claims[2] = {join_async(server.port(), a, in(5)), join_async(server.port(), b, in(5))};
  // Whichever claim the server reads second is refused at once; rank 2 comes only after that.
  int loser = -1;
  for (auto until = in(5); loser < 0 && Clock::now() < until; std::this_thread::sleep_for(5ms))
    for (int i = 0; i < 2; ++i)
      if (claims[i].wait_for(0s) == std::future_status::ready) loser = i;
  ASSERT_GE(loser, 0);
  const std::string why = thrown<Refused>([&] { claims[loser].get(); });
  EXPECT_HAS(why, "rank 1 already joined from 127.0.0.1:");
  EXPECT_HAS(why, "a second process claims it (two launches sharing one rendezvous endpoint?)");
  EXPECT_ONE_LINE(why);
  auto r2 = join_async(server.port(), rank(2, 3), in(5));
  const Table table = serving.get();
  const Join& winner = loser == 0 ? b : a;
  EXPECT_EQ(table[1], winner.blob);
  EXPECT_EQ(claims[1 - loser].get(), table);
  EXPECT_EQ(r2.get(), table);
  EXPECT_EQ(logs.count("refused a connection from 127.0.0.1:"), 1u);
}

TEST(RendezvousServer, AnotherWorldSizeOrJobIsRefusedAndItKeepsWaiting) {
  Server server("127.0.0.1", 0);
  Logs logs;
  auto serving = serve_async(server, 2, rank(0, 2), in(5), logs);
  const std::string size = thrown<Refused>([&] { join({"127.0.0.1", server.port()}, rank(1, 7), in(5)); });
  EXPECT_HAS(size, "rank 1 says the world has 7 ranks but the rendezvous at 127.0.0.1:" + std::to_string(server.port()) + " is for 2");
  const std::string job = thrown<Refused>([&] { join({"127.0.0.1", server.port()}, rank(1, 2, "job-0"), in(5)); });
  EXPECT_HAS(job, "rank 1 of job 'job-0' tried to join the rendezvous of job 'job-1'");
  EXPECT_EQ(join({"127.0.0.1", server.port()}, rank(1, 2), in(5)), expected(2));
  EXPECT_EQ(serving.get(), expected(2));
  EXPECT_EQ(logs.count("refused a connection"), 2u) << logs.all();
}

TEST(RendezvousServer, MissingRanksTimeOutOnEverySide) {
  for (int present : {3, 2}) {
    SCOPED_TRACE(present);
    Server server("127.0.0.1", 0);
    const auto deadline = in(0.5);
    std::vector<std::future<Table>> ranks;
    for (int r = 1; r < present; ++r) ranks.push_back(join_async(server.port(), rank(r, 4), deadline));
    const auto start = Clock::now();
    const std::string why = thrown<Timeout>([&] { server.serve(4, kJob, rank(0, 4), deadline, {}); });
    EXPECT_LT(since(start), 1.0);
    const std::string at = " never joined the rendezvous at 127.0.0.1:" + std::to_string(server.port()) + " within 0.5 s";
    EXPECT_EQ(why, (present == 3 ? "rank 3 of 4" : "ranks 2, 3 of 4") + at);
    for (auto& f : ranks) EXPECT_EQ(thrown<Timeout>([&] { f.get(); }), why);  // the server's own line
    EXPECT_LT(since(start), 1.0);
  }
}

TEST(RendezvousServer, ARankThatLeavesBeforeTheTableIsMissingAgain) {
  Server server("127.0.0.1", 0);
  Logs logs;
  auto serving = serve_async(server, 3, rank(0, 3), in(5), logs);
  {
    Fd gone = raw_connect(server.port());
    auto j = rank(1, 3);
    j.blob = bytes("a blob that left");
    send_all(gone.get(), detail::encode_join(j));
  }
  ASSERT_TRUE(logs.wait("disconnected before the table; it counts as missing until it joins again")) << logs.all();
  EXPECT_HAS(logs.all(), "rank 1 (127.0.0.1:");
  auto r1 = join_async(server.port(), rank(1, 3), in(5));
  auto r2 = join_async(server.port(), rank(2, 3), in(5));
  EXPECT_EQ(serving.get(), expected(3));
  EXPECT_EQ(r1.get(), expected(3));
  EXPECT_EQ(r2.get(), expected(3));
}

TEST(RendezvousServer, APortInUseIsOneClearLine) {
  Server first("127.0.0.1", 0);
  const std::string why = thrown<UsageError>([&] { Server second("127.0.0.1", first.port()); });
  EXPECT_HAS(why, "127.0.0.1:" + std::to_string(first.port()));
  EXPECT_HAS(why, "Address already in use");
  EXPECT_HAS(why, "choose another port");
  EXPECT_ONE_LINE(why);
  EXPECT_HAS(thrown<UsageError>([] { Server s("127.0.0.1", 70000); }), "70000");
}

TEST(RendezvousServer, BadInputOfItsOwnIsRefused) {
  Server server("127.0.0.1", 0);
  EXPECT_HAS(thrown<Refused>([&] { server.serve(0, kJob, std::nullopt, in(1), {}); }), "world size 0");
  EXPECT_HAS(thrown<Refused>([&] { server.serve(2, "bad\njob", std::nullopt, in(1), {}); }), "not printable");
  EXPECT_HAS(thrown<Refused>([&] { server.serve(2, kJob, rank(0, 3), in(1), {}); }), "does not match");
  EXPECT_HAS(thrown<Refused>([&] { join({"127.0.0.1", server.port()}, rank(3, 3), in(1)); }), "rank 3 is outside 0..2");
  Join fat = rank(0, 2);
  fat.blob.resize(kMaxBlob + 1);
  EXPECT_HAS(thrown<Refused>([&] { join({"127.0.0.1", server.port()}, fat, in(1)); }), std::to_string(kMaxBlob + 1) + " bytes");
}

// ---- a rank against no server or a broken one ----

TEST(RendezvousClient, NoServerTimesOutAtTheDeadline) {
  const int port = free_port();
  const auto start = Clock::now();
  const std::string why = thrown<Timeout>([&] { join({"127.0.0.1", port}, rank(1, 2), in(0.3)); });
  EXPECT_GE(since(start), 0.29);
  EXPECT_LT(since(start), 0.6);
  EXPECT_HAS(why, "rank 0's rendezvous at 127.0.0.1:" + std::to_string(port) + " never answered within 0.3 s");
  EXPECT_HAS(why, "Connection refused");
  EXPECT_THROW(join({"no-such-host.invalid", port}, rank(1, 2), in(0.3)), Refused);
}

// A fake rank 0: accepts one connection, reads one whole message (unless told not to), then
// answers `reply` and closes, or (no reply) holds the connection until the rank gives up.
struct FakeServer {
  Fd listener{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  int port = 0;
  std::thread thread;
  explicit FakeServer(std::optional<std::vector<std::byte>> reply, bool read = true) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    EXPECT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(listener.get(), 4), 0);
    ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
    thread = std::thread([this, reply = std::move(reply), read] {
      Fd c(::accept(listener.get(), nullptr, nullptr));
      if (!read) return;  // closed with the JOIN unread: the rank may see a reset
      std::vector<std::byte> head(12);
      ASSERT_EQ(::recv(c.get(), head.data(), 12, MSG_WAITALL), 12);
      std::vector<std::byte> body(detail::decode_header(head, 2).length);
      ASSERT_EQ(::recv(c.get(), body.data(), body.size(), MSG_WAITALL), ssize_t(body.size()));
      if (reply) send_all(c.get(), *reply);
      else closed_by_peer(c.get(), 5000ms);  // hold it open until the rank hangs up
    });
  }
  ~FakeServer() { thread.join(); }
  Endpoint at() const { return {"127.0.0.1", port}; }
};

TEST(RendezvousClient, AServerThatClosesWithoutAVerdict) {
  FakeServer fake(std::vector<std::byte>{});
  const auto start = Clock::now();
  const std::string why = thrown<Timeout>([&] { join(fake.at(), rank(1, 2), in(3)); });
  EXPECT_LT(since(start), 1.0);  // at once, not at the deadline
  EXPECT_HAS(why, "rank 0's rendezvous at " + fake.at().text() + " closed the connection without a verdict");
  FakeServer rude(std::vector<std::byte>{}, false);
  const std::string reset = thrown<Timeout>([&] { join(rude.at(), rank(1, 2), in(3)); });
  EXPECT_HAS(reset, "rank 0's rendezvous at " + rude.at().text());
  EXPECT_HAS(reset, "without a verdict");
  EXPECT_LT(since(start), 1.0);
}

TEST(RendezvousClient, AServerThatNeverAnswersTimesOutAfterTheGrace) {
  FakeServer fake(std::nullopt);
  const auto start = Clock::now();
  const std::string why = thrown<Timeout>([&] { join(fake.at(), rank(1, 2), in(0.1)); });
  EXPECT_GE(since(start), 2.0);  // the grace, for the server's own FAIL
  EXPECT_LT(since(start), 2.6);
  EXPECT_HAS(why, fake.at().text() + " sent no verdict within 2.1 s");
}

TEST(RendezvousClient, VerdictsAndGarbageFromTheServer) {
  {  // REFUSE: the server's reason, made one line
    FakeServer fake(detail::encode_reason(Type::refuse, "rank 1 already joined\nfrom elsewhere"));
    const std::string why = thrown<Refused>([&] { join(fake.at(), rank(1, 2), in(3)); });
    EXPECT_EQ(why, "rank 1 already joined\\x0afrom elsewhere");
  }
  {  // FAIL: the server's reason
    FakeServer fake(detail::encode_reason(Type::fail, "rank 3 of 4 never joined"));
    EXPECT_EQ(thrown<Timeout>([&] { join(fake.at(), rank(1, 2), in(3)); }), "rank 3 of 4 never joined");
  }
  const auto table_header = [](std::uint32_t len) {
    std::vector<std::byte> h = bytes("CBRV");
    for (int v : {1, 2, 0, 0}) h.push_back(std::byte(v));
    for (int i = 3; i >= 0; --i) h.push_back(std::byte(len >> (8 * i) & 0xff));
    return h;
  };
  auto wrong_entry = expected(2);
  wrong_entry[1] = bytes("not mine");
  const std::vector<std::pair<std::vector<std::byte>, std::string>> cases{
      {bytes("HTTP/1.1 400 Bad Request\r\n\r\n"), "bad magic"},
      {table_header(0xfffffff0), "over its bound"},  // refused before allocating 4 GiB
      {detail::encode_table(expected(3)), "TABLE of 3 ranks for a world of 2"},
      {detail::encode_join(rank(0, 2)), "a JOIN where a verdict belongs"},
      {detail::encode_table(wrong_entry), "entry for rank 1 is not what this rank sent"},
  };
  for (const auto& [reply, part] : cases) {
    SCOPED_TRACE(part);
    FakeServer fake(reply);
    const std::string why = thrown<Malformed>([&] { join(fake.at(), rank(1, 2), in(3)); });
    EXPECT_HAS(why, "rank 0's rendezvous at " + fake.at().text() + " sent a malformed reply: ");
    EXPECT_HAS(why, part);
    EXPECT_ONE_LINE(why);
  }
  {  // a header promising more than arrives, then the close: no verdict
    FakeServer fake(table_header(1000));
    EXPECT_HAS(thrown<Timeout>([&] { join(fake.at(), rank(1, 2), in(3)); }), "closed the connection without a verdict");
  }
}

}  // namespace
}  // namespace collbench::rendezvous

#include "collectives/backends/gloo/gloo_mesh.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>

#include <gloo/common/error.h>
#include <gloo/context.h>
#include <gloo/transport/context.h>
#include <gloo/transport/device.h>
#include <gloo/transport/tcp/attr.h>
#include <gloo/transport/tcp/device.h>

#include "collectives/core/error.hpp"

namespace collbench::gloo_mesh {
namespace {

// gloo::Context keeps its device and transport context protected: a context connected by
// our own exchange sets them, as gloo::rendezvous::Context::connectFullMesh does.
class MeshContext final : public gloo::Context {
 public:
  MeshContext(int rank, int size, const std::shared_ptr<gloo::transport::Device>& device, const Exchange& exchange,
              std::chrono::milliseconds timeout)
      : gloo::Context(rank, size) {
    setTimeout(timeout);
    auto tc = device->createContext(rank, size);
    tc->setTimeout(timeout);
    std::vector<char> mine;  // the address of this rank's pair to each peer, in peer order
    for (int i = 0; i < size; ++i) {
      if (i == rank) continue;
      const auto bytes = tc->createPair(i)->address().bytes();
      mine.insert(mine.end(), bytes.begin(), bytes.end());
    }
    const auto all = exchange(mine);
    if (static_cast<int>(all.size()) != size) throw Error("gloo mesh: the exchange returned " + std::to_string(all.size()) + " ranks' addresses, not " + std::to_string(size));
    for (int i = 0; i < size; ++i) {
      if (i == rank) continue;
      const auto& theirs = all[static_cast<std::size_t>(i)];
      if (size < 2 || theirs.size() % static_cast<std::size_t>(size - 1) != 0)
        throw Error("gloo mesh: rank " + std::to_string(i) + " sent " + std::to_string(theirs.size()) + " address bytes for " + std::to_string(size - 1) + " peers");
      const std::size_t each = theirs.size() / static_cast<std::size_t>(size - 1);
      const std::size_t at = static_cast<std::size_t>(rank < i ? rank : rank - 1) * each;  // peers skip themselves
      tc->getPair(i)->connect(std::vector<char>(theirs.begin() + static_cast<std::ptrdiff_t>(at),
                                                theirs.begin() + static_cast<std::ptrdiff_t>(at + each)));
    }
    device_ = device;
    transportContext_ = std::move(tc);
  }
};

std::string numeric_host(const sockaddr* sa, socklen_t len) {
  char host[NI_MAXHOST] = {};
  if (getnameinfo(sa, len, host, sizeof host, nullptr, 0, NI_NUMERICHOST) != 0) return "";
  return host;
}

bool loopback(const sockaddr* sa) {
  if (sa->sa_family == AF_INET) return (ntohl(reinterpret_cast<const sockaddr_in*>(sa)->sin_addr.s_addr) >> 24) == 127;
  if (sa->sa_family == AF_INET6) {
    const auto* a = &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(a) != 0;
  }
  return false;
}

// The host name's first address, when it is not a loopback one.
std::string hostname_address() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(name, nullptr, &hints, &res) != 0) return "";
  std::string out;
  for (addrinfo* p = res; p && out.empty(); p = p->ai_next)
    if (!loopback(p->ai_addr)) out = numeric_host(p->ai_addr, p->ai_addrlen);
  freeaddrinfo(res);
  return out;
}

std::string first_interface_address() {
  ifaddrs* ifs = nullptr;
  if (getifaddrs(&ifs) != 0) return "";
  std::string out;
  for (ifaddrs* p = ifs; p && out.empty(); p = p->ifa_next)
    if (p->ifa_addr && p->ifa_addr->sa_family == AF_INET && (p->ifa_flags & IFF_UP) && !(p->ifa_flags & IFF_LOOPBACK))
      out = numeric_host(p->ifa_addr, sizeof(sockaddr_in));
  freeifaddrs(ifs);
  return out;
}

}  // namespace

std::shared_ptr<gloo::Context> connect(int rank, int size, const std::shared_ptr<gloo::transport::Device>& device,
                                       const Exchange& exchange, std::chrono::milliseconds timeout) {
  try {
    return std::make_shared<MeshContext>(rank, size, device, exchange, timeout);
  } catch (const gloo::Exception& e) {
    throw TransportError(std::string("connecting Gloo's TCP pairs: ") + e.what());
  }
}

std::string route_source(const std::string& host) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  if (host.empty() || getaddrinfo(host.c_str(), "9", &hints, &res) != 0) return "";
  std::string out;
  for (addrinfo* p = res; p && out.empty(); p = p->ai_next) {
    const int fd = socket(p->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    if (::connect(fd, p->ai_addr, p->ai_addrlen) == 0 && getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0)
      out = numeric_host(reinterpret_cast<sockaddr*>(&local), len);
    close(fd);
  }
  freeaddrinfo(res);
  return out;
}

void ignore_sigpipe() { std::signal(SIGPIPE, SIG_IGN); }

DeviceChoice make_device(const std::string& toward, const char* socket_ifname) {
  ignore_sigpipe();
  gloo::transport::tcp::attr attr;
  DeviceChoice c;
  if (socket_ifname && *socket_ifname) {
    std::string ifname(socket_ifname);
    ifname = ifname.substr(0, ifname.find(','));  // PyTorch accepts a list; one device here
    attr.iface = ifname;
    c.why = "GLOO_SOCKET_IFNAME=" + ifname;
  } else if (std::string a = route_source(toward); !a.empty()) {
    attr.hostname = a;
    c.why = "route to " + toward;
  } else if (std::string h = hostname_address(); !h.empty()) {
    attr.hostname = h;
    c.why = "host name";
  } else if (std::string f = first_interface_address(); !f.empty()) {
    attr.hostname = f;
    c.why = "first interface";
  } else {
    attr.hostname = "127.0.0.1";
    c.why = "loopback (no other interface)";
  }
  try {
    c.device = gloo::transport::tcp::CreateDevice(attr);
  } catch (const gloo::Exception& e) {
    throw UsageError("Gloo cannot listen on " + (attr.iface.empty() ? attr.hostname : "interface " + attr.iface) + " (" +
                     c.why + "): " + e.what() + "; accepted: GLOO_SOCKET_IFNAME=<an interface of this host>");
  }
  c.address = attr.iface.empty() ? attr.hostname : attr.iface;
  return c;
}

}  // namespace collbench::gloo_mesh

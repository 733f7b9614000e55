#pragma once
// Gloo contexts made from any exchange of bytes among their ranks, not from a Gloo Store:
// every rank creates one TCP pair per peer, the ranks swap the pairs' addresses once (over the
// harness's World, the launch rendezvous, or a parent Gloo transport), and each pair connects.
// What gloo::rendezvous::Context::connectFullMesh does, without a key-value server that would
// have to outlive the job (the rendezvous listens only until every rank has joined).
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gloo {
class Context;
namespace transport {
class Device;
}
}  // namespace gloo

namespace collbench::gloo_mesh {

// Gloo's TCP pairs write without MSG_NOSIGNAL: a peer that died would end this process with
// SIGPIPE instead of an error naming that peer. Python (hence PyTorch) ignores SIGPIPE at
// startup; collbench does the same before it makes its first Gloo device (make_device).
void ignore_sigpipe();

// Every rank's bytes (index = rank in the group) from this rank's `mine`. Collective.
using Exchange = std::function<std::vector<std::vector<char>>(const std::vector<char>& mine)>;

// A context over `size` ranks, this one `rank`, connected through `device`; every wait in it
// (connecting included) gives up after `timeout`. Collective over the exchange's ranks.
std::shared_ptr<gloo::Context> connect(int rank, int size, const std::shared_ptr<gloo::transport::Device>& device,
                                       const Exchange& exchange, std::chrono::milliseconds timeout);

// Where this rank's Gloo sockets listen, chosen as PyTorch's ProcessGroupGloo lets users choose,
// then so that ranks on other hosts can reach it (host names resolve to 127.0.0.1 on many
// machines, these included):
//   GLOO_SOCKET_IFNAME=eth0        that interface (the first, if a list is given)
//   else `toward` (a host name)    the local address of the route to it (the rendezvous host)
//   else                           the host name's address when it is not a loopback one, then
//                                  the first up, non-loopback IPv4 interface, then 127.0.0.1
// `why` says which rule chose it, for the run record.
struct DeviceChoice {
  std::shared_ptr<gloo::transport::Device> device;
  std::string address;  // the listening address, e.g. "10.77.0.2"
  std::string why;      // "GLOO_SOCKET_IFNAME=eth0", "route to n1", ...
};
DeviceChoice make_device(const std::string& toward, const char* socket_ifname);

// The local IPv4/IPv6 address the kernel would use to reach `host` ("" if it cannot resolve or
// route it). No packet is sent (a UDP connect only selects the route).
std::string route_source(const std::string& host);

}  // namespace collbench::gloo_mesh

#include "collectives/transport/forwarding_transport.hpp"

namespace collbench {

std::unique_ptr<Transport> ForwardingTransport::make_split(std::string_view name, int color, int key) {
  Transport* sub = inner_.split(name, color, key);
  return sub ? wrap(*sub) : nullptr;
}

std::unique_ptr<Transport> ForwardingTransport::wrap(Transport& inner_sub) {
  return std::make_unique<ForwardingTransport>(inner_sub);
}

}  // namespace collbench

#include "collectives/backends/backend.hpp"

#include <algorithm>
#include <set>

#include "collectives/core/error.hpp"

namespace collbench {

Backends& Backends::mutable_instance() {
  static Backends instance;  // filled during static initialisation, read-only afterwards
  return instance;
}

const Backends& Backends::get() { return mutable_instance(); }

void Backends::add(BackendInfo b) {
  auto& v = mutable_instance().backends_;
  const auto at = std::lower_bound(v.begin(), v.end(), b.name, [](const BackendInfo& x, const std::string& n) { return x.name < n; });
  if (at != v.end() && at->name == b.name) throw Error("backend '" + b.name + "' registered twice");
  v.insert(at, std::move(b));
}

void Backends::add(BootstrapInfo b) {
  auto& v = mutable_instance().bootstraps_;
  for (const auto& x : v)
    if (x.name == b.name) throw Error("bootstrap '" + b.name + "' registered twice");
  v.push_back(std::move(b));
}

const BackendInfo* Backends::find(std::string_view name) const {
  for (const auto& b : backends_)
    if (b.name == name) return &b;
  return nullptr;
}

const BootstrapInfo* Backends::find_bootstrap(std::string_view name) const {
  for (const auto& b : bootstraps_)
    if (b.name == name) return &b;
  return nullptr;
}

std::string Backends::names() const {
  std::string s;
  for (const auto& b : backends_) s += (s.empty() ? "" : ", ") + b.name;
  return s;
}

std::vector<std::string> Backends::version_keys() const {
  std::set<std::string> keys(kDeviceVersionKeys.begin(), kDeviceVersionKeys.end());
  keys.insert(kLauncherVersionKey);
  for (const auto& b : backends_) keys.insert(b.version_keys.begin(), b.version_keys.end());
  std::vector<std::string> out{"collbench"};
  out.insert(out.end(), keys.begin(), keys.end());
  return out;
}

const BackendInfo& Backends::check(std::string_view backend, std::string_view device) const {
  const BackendInfo* b = find(backend);
  if (!b) throw UsageError("unknown --backend '" + std::string(backend) + "'; accepted: " + names());
  if (std::find(b->devices.begin(), b->devices.end(), device) == b->devices.end()) {
    std::string accepted;
    for (const auto& d : b->devices) accepted += (accepted.empty() ? "--device " : ", --device ") + d;
    if (device != "cpu" && device != "cuda")
      throw UsageError("unknown --device '" + std::string(device) + "'; accepted: cpu, cuda");
    const std::string what = b->devices.size() == 1 ? (b->devices[0] == "cuda" ? "device memory only" : "host memory only")
                                                    : "no " + std::string(device) + " memory";
    throw UsageError("--backend " + b->name + " moves " + what + "; accepted: --backend " + b->name + " " + accepted);
  }
  if (b->unavailable)
    if (std::string why = b->unavailable(device); !why.empty()) throw UsageError(why);
  for (const auto& name : b->bootstraps)
    if (!find_bootstrap(name)) throw Error("backend '" + b->name + "' needs bootstrap '" + name + "', not built");
  return *b;
}

namespace {
std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}
}  // namespace

void Backends::check_launcher(std::string_view launcher) const {
  if (launcher.empty() || find_bootstrap(launcher)) return;
  std::string all;
  for (const auto& x : bootstraps_) all += (all.empty() ? "" : ", ") + x.name;
  throw UsageError("unknown --launcher '" + std::string(launcher) + "'; accepted: " + all);
}

const BootstrapInfo& Backends::bootstrap_for(const BackendInfo& b, std::string_view launcher, const GetEnvFn& getenv_fn,
                                             std::optional<int> declared_size) const {
  const auto usable = [&](std::string_view name) {
    return std::find(b.bootstraps.begin(), b.bootstraps.end(), name) != b.bootstraps.end();
  };
  if (!launcher.empty()) {
    check_launcher(launcher);
    if (!usable(launcher))
      throw UsageError("--backend " + b.name + " cannot start its ranks with --launcher " + std::string(launcher) +
                       "; accepted: " + joined(b.bootstraps));
    return *find_bootstrap(launcher);
  }
  for (const auto& name : b.bootstraps)
    if (const BootstrapInfo* x = find_bootstrap(name); x && x->detect && x->detect(getenv_fn)) return *x;
  // Several processes started by a launcher this backend cannot use: say so now, not as N
  // worlds of one rank later.
  for (const auto& x : bootstraps_) {
    if (usable(x.name) || !x.detect || !x.detect(getenv_fn) || declared_size.value_or(1) <= 1) continue;
    std::vector<std::string> ok;
    for (const auto& o : backends_)
      if (std::find(o.bootstraps.begin(), o.bootstraps.end(), x.name) != o.bootstraps.end()) ok.push_back("--backend " + o.name);
    throw UsageError("this process is one of " + std::to_string(*declared_size) + " started by " + x.name +
                     ", but --backend " + b.name + " starts its ranks with " + joined(b.bootstraps) +
                     " (here each process would be a world of its own); accepted: start it once" +
                     (usable("mpi") ? ", mpirun -np N or srun --mpi=pmix," : "") + " or " + joined(ok) + " under " + x.name);
  }
  return *find_bootstrap(b.bootstraps.back());
}

}  // namespace collbench

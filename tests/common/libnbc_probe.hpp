#pragma once
// Whether Open MPI's libnbc progress hook is registered (collectives/backends/mpi/quiet_comm.hpp),
// asked of Open MPI itself: opal_progress_unregister(cb) succeeds only for a registered callback,
// which is then registered again at once (libnbc registers it only when its count of
// communicators using it goes 0 -> 1: a hook left removed would stall every later non-blocking
// collective). Once registered it stays for the process, so a test that expects "not registered"
// runs in an executable of its own. nullopt when this is not an Open MPI with libnbc as a loaded
// plugin (the tests then skip, saying so).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>

#include <cstring>
#include <optional>
#include <string>

namespace collbench::testing {

inline std::optional<bool> libnbc_progress_hook_registered() {
  using Callback = int (*)();
  using Change = int (*)(Callback);
  auto unregister = reinterpret_cast<Change>(dlsym(RTLD_DEFAULT, "opal_progress_unregister"));
  auto reregister = reinterpret_cast<Change>(dlsym(RTLD_DEFAULT, "opal_progress_register"));
  if (unregister == nullptr || reregister == nullptr) return std::nullopt;
  // The component is a plugin opened with RTLD_LOCAL: find its file among the loaded objects.
  std::string path;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        if (info->dlpi_name == nullptr || std::strstr(info->dlpi_name, "mca_coll_libnbc.so") == nullptr) return 0;
        *static_cast<std::string*>(out) = info->dlpi_name;
        return 1;
      },
      &path);
  if (path.empty()) return std::nullopt;
  void* plugin = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (plugin == nullptr) return std::nullopt;
  auto progress = reinterpret_cast<Callback>(dlsym(plugin, "ompi_coll_libnbc_progress"));
  std::optional<bool> registered;
  if (progress != nullptr) {
    registered = unregister(progress) == 0;  // 0: OPAL_SUCCESS
    if (*registered) reregister(progress);
  }
  dlclose(plugin);
  return registered;
}

inline const char* kNoLibnbcProbe =
    "not Open MPI with libnbc as a plugin (opal_progress_unregister / mca_coll_libnbc.so not found)";

}  // namespace collbench::testing

// In a test body: skips without the probe, fails when the hook is already there (something
// earlier in the process left it).
#define COLLBENCH_EXPECT_LIBNBC_HOOK_ABSENT_BEFORE()                                         \
  do {                                                                                       \
    const auto before = ::collbench::testing::libnbc_progress_hook_registered();             \
    if (!before) GTEST_SKIP() << ::collbench::testing::kNoLibnbcProbe;                       \
    ASSERT_FALSE(*before) << "libnbc's progress hook was registered before this test began"; \
  } while (0)

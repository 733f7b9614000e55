#include "collectives/backends/mpi/mpi_ompi_vars.hpp"

#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "collectives/core/error.hpp"

namespace collbench::ompi {
namespace {

bool mpit_ready() {
  // Once per process, never finalised: MPI_Finalize does not need it, and re-initialising per
  // use would cost ~200 ms each time (see the header).
  static const bool ready = [] {
    int provided = 0;
    return MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS;
  }();
  return ready;
}

struct CvarInfo {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_T_enum enumtype = MPI_T_ENUM_NULL;
  int bind = MPI_T_BIND_NO_OBJECT;
};

std::optional<CvarInfo> info(int index) {
  CvarInfo i;
  int verbosity = 0, scope = 0, name_len = 0, desc_len = 0;
  if (MPI_T_cvar_get_info(index, nullptr, &name_len, &verbosity, &i.type, &i.enumtype, nullptr, &desc_len, &i.bind,
                          &scope) != MPI_SUCCESS)
    return std::nullopt;
  return i;
}

// Reads an unbound variable's value into `out` (large enough for any scalar or short string).
bool read(int index, std::vector<char>& out, int& count) {
  MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
  if (MPI_T_cvar_handle_alloc(index, nullptr, &h, &count) != MPI_SUCCESS) return false;
  out.assign(static_cast<std::size_t>(std::max(count, 1)) + 16, 0);
  const bool ok = MPI_T_cvar_read(h, out.data()) == MPI_SUCCESS;
  MPI_T_cvar_handle_free(&h);
  return ok;
}

std::optional<std::string> enum_name(MPI_T_enum e, long long value) {
  int items = 0, len = 0;
  if (MPI_T_enum_get_info(e, &items, nullptr, &len) != MPI_SUCCESS) return std::nullopt;
  for (int k = 0; k < items; ++k) {
    std::array<char, 256> name{};
    int v = 0, n = static_cast<int>(name.size());
    if (MPI_T_enum_get_item(e, k, &v, name.data(), &n) == MPI_SUCCESS && v == value) return std::string(name.data());
  }
  return std::nullopt;
}

}  // namespace

std::optional<int> cvar_index(const std::string& name) {
  int index = -1;
  if (!mpit_ready() || MPI_T_cvar_get_index(name.c_str(), &index) != MPI_SUCCESS) return std::nullopt;
  return index;
}

std::optional<std::string> cvar_text(const std::string& name) {
  const auto index = cvar_index(name);
  if (!index) return std::nullopt;
  const auto i = info(*index);
  if (!i || i->bind != MPI_T_BIND_NO_OBJECT) return std::nullopt;
  std::vector<char> buf;
  int count = 0;
  if (!read(*index, buf, count)) return std::nullopt;
  if (i->type == MPI_CHAR) return std::string(buf.data());
  int size = 0;
  MPI_Type_size(i->type, &size);
  long long v = 0;
  if (size == 1) v = static_cast<unsigned char>(buf[0]);  // bool (MPI_C_BOOL), char
  else if (size == 4) { int x = 0; std::memcpy(&x, buf.data(), 4); v = x; }
  else if (size == 8) std::memcpy(&v, buf.data(), 8);
  if (i->enumtype != MPI_T_ENUM_NULL)
    if (auto n = enum_name(i->enumtype, v)) return n;
  return std::to_string(v);
}

std::optional<int> enum_value(int index, std::string_view item) {
  const auto i = info(index);
  if (!i || i->enumtype == MPI_T_ENUM_NULL) return std::nullopt;
  int items = 0, len = 0;
  if (MPI_T_enum_get_info(i->enumtype, &items, nullptr, &len) != MPI_SUCCESS) return std::nullopt;
  for (int k = 0; k < items; ++k) {
    std::array<char, 256> name{};
    int v = 0, n = static_cast<int>(name.size());
    if (MPI_T_enum_get_item(i->enumtype, k, &v, name.data(), &n) == MPI_SUCCESS && item == name.data()) return v;
  }
  return std::nullopt;
}

std::optional<std::string> cvar_description(int index) {
  int verbosity = 0, bind = 0, scope = 0, name_len = 0, desc_len = 0;
  MPI_Datatype type;
  MPI_T_enum e;
  if (!mpit_ready() || MPI_T_cvar_get_info(index, nullptr, &name_len, &verbosity, &type, &e, nullptr, &desc_len, &bind,
                                           &scope) != MPI_SUCCESS)
    return std::nullopt;
  std::string d(static_cast<std::size_t>(std::max(desc_len, 1)), '\0');
  if (MPI_T_cvar_get_info(index, nullptr, &name_len, &verbosity, &type, &e, d.data(), &desc_len, &bind, &scope) !=
      MPI_SUCCESS)
    return std::nullopt;
  d.resize(std::strlen(d.c_str()));
  return d;
}

std::optional<int> cvar_int(int index) {
  std::vector<char> buf;
  int count = 0;
  if (!read(index, buf, count)) return std::nullopt;
  int v = 0;
  std::memcpy(&v, buf.data(), sizeof v);
  return v;
}

bool cvar_write(int index, int value) {
  MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
  int count = 0;
  if (MPI_T_cvar_handle_alloc(index, nullptr, &h, &count) != MPI_SUCCESS) return false;
  const bool ok = MPI_T_cvar_write(h, &value) == MPI_SUCCESS;
  MPI_T_cvar_handle_free(&h);
  return ok;
}

static_assert(sizeof(MPI_T_cvar_handle) == sizeof(void*), "CvarHandle keeps the handle as a pointer");

CvarHandle::CvarHandle(int index) {
  MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
  int count = 0;
  if (mpit_ready() && MPI_T_cvar_handle_alloc(index, nullptr, &h, &count) == MPI_SUCCESS)
    handle_ = reinterpret_cast<void*>(h);
}

CvarHandle::~CvarHandle() {
  if (!handle_) return;
  auto h = reinterpret_cast<MPI_T_cvar_handle>(handle_);
  MPI_T_cvar_handle_free(&h);
}

bool CvarHandle::write(int value) const {
  return MPI_T_cvar_write(reinterpret_cast<MPI_T_cvar_handle>(handle_), &value) == MPI_SUCCESS;
}

ScopedCvar::ScopedCvar(int index, int value, const Transport& t) : index_(index) {
  saved_ = cvar_int(index).value_or(0);
  if (!cvar_write(index, value)) {
    std::array<char, 256> name{};
    int n = static_cast<int>(name.size()), verbosity = 0, bind = 0, scope = 0, desc = 0;
    MPI_Datatype type;
    MPI_T_enum e;
    MPI_T_cvar_get_info(index, name.data(), &n, &verbosity, &type, &e, nullptr, &desc, &bind, &scope);
    throw NotSupported(std::string("MPI_T refuses to set ") + name.data(), t.error_context());
  }
}

ScopedCvar::~ScopedCvar() { cvar_write(index_, saved_); }

template <class T>
ScopedMcaValue<T>::ScopedMcaValue(const char* framework, const char* component, const char* name, T value,
                                  const Transport& t) {
  using Find = int (*)(const char*, const char*, const char*, const char*);
  using Get = int (*)(int, const void*, void*, const char**);
  auto find = reinterpret_cast<Find>(dlsym(RTLD_DEFAULT, "mca_base_var_find"));
  auto get = reinterpret_cast<Get>(dlsym(RTLD_DEFAULT, "mca_base_var_get_value"));
  const std::string full = std::string(framework) + "_" + component + "_" + name;
  if (find == nullptr || get == nullptr)
    throw NotSupported(full + " is an Open MPI variable: this MPI has no MCA variable store", t.error_context());
  // mca_base_var_get_value hands out the variable's own storage (an int for an int, a bool for a bool).
  const int index = find("ompi", framework, component, name);
  const void* storage = nullptr;
  if (index < 0 || get(index, &storage, nullptr, nullptr) != 0 || storage == nullptr)
    throw NotSupported("this Open MPI has no " + full + " (no " + framework + "/" + component +
                           " component, or it was excluded with --mca " + framework + ")",
                       t.error_context());
  storage_ = static_cast<T*>(const_cast<void*>(storage));
  saved_ = *storage_;
  *storage_ = value;
}

template class ScopedMcaValue<int>;
template class ScopedMcaValue<bool>;

}  // namespace collbench::ompi

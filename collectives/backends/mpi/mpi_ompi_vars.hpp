#pragma once
// MPI settings read and set from inside a running job, for the library variants (Open MPI's han
// and coll/tuned algorithms, MPICH's forced algorithms) and for what library results record.
// The MPI_T functions serve both MPIs; the rest is Open MPI's:
// - MPI_T control variables, the standard interface: coll/tuned's algorithm choices
//   (coll_tuned_<op>_algorithm, _segmentsize) are writable there;
// - Open MPI's MCA variable store, for variables MPI_T marks read-only although Open MPI reads
//   them again each time a communicator is made (coll_han_priority, coll_tuned_use_dynamic_rules),
//   found with dlsym so nothing links against Open MPI's internals.
// A communicator picks its collective components, and coll/tuned copies the forced algorithm,
// when it is made: set, make the communicator, restore (the Scoped* classes).
#include <optional>
#include <string>
#include <string_view>

#include "collectives/transport/transport.hpp"

namespace collbench::ompi {

// Index of MPI_T control variable `name`; nullopt where this MPI has none. MPI_T is initialised
// once per process on first use and stays so (one MPI_T_init_thread/MPI_T_finalize pair costs
// ~200 ms in Open MPI 4.1: it registers every framework's variables).
std::optional<int> cvar_index(const std::string& name);
// A control variable's value as text: its enumerator's name where it has an enum ("ring",
// "true"), else the number or the string; nullopt where this MPI has no such variable.
std::optional<std::string> cvar_text(const std::string& name);
// The value of enumerator `item` in control variable `index`'s enum; nullopt where it has none.
std::optional<int> enum_value(int index, std::string_view item);
// The variable's MPI_T description: where MPICH keeps its enumerators (mpich_enum.hpp).
std::optional<std::string> cvar_description(int index);
// An int variable's value, and writing one: nullopt / false where MPI_T refuses.
std::optional<int> cvar_int(int index);
bool cvar_write(int index, int value);

// A handle on int variable `index`, allocated once, for a caller that writes it around every
// call (MPICH's forced algorithms): a write is then one MPI_T_cvar_write.
class CvarHandle {
 public:
  explicit CvarHandle(int index);  // NotSupported-free: valid() says whether MPI_T gave one
  ~CvarHandle();
  CvarHandle(const CvarHandle&) = delete;
  CvarHandle& operator=(const CvarHandle&) = delete;
  bool valid() const { return handle_ != nullptr; }
  bool write(int value) const;

 private:
  void* handle_ = nullptr;  // MPI_T_cvar_handle, an opaque pointer in both MPIs
};

// Writes int control variable `index` and restores its value when destroyed. NotSupported
// (naming the variable) where MPI_T refuses the write.
class ScopedCvar {
 public:
  ScopedCvar(int index, int value, const Transport& t);
  ~ScopedCvar();
  ScopedCvar(const ScopedCvar&) = delete;
  ScopedCvar& operator=(const ScopedCvar&) = delete;

 private:
  int index_;
  int saved_ = 0;
};

// Sets MCA variable framework_component_name's own storage (T: its type, int or bool) and
// restores it when destroyed; NotSupported where the MPI has no such variable (another MPI,
// or the component was excluded with --mca).
template <class T>
class ScopedMcaValue {
 public:
  ScopedMcaValue(const char* framework, const char* component, const char* name, T value, const Transport& t);
  ~ScopedMcaValue() { *storage_ = saved_; }
  ScopedMcaValue(const ScopedMcaValue&) = delete;
  ScopedMcaValue& operator=(const ScopedMcaValue&) = delete;

 private:
  T* storage_ = nullptr;
  T saved_{};
};

extern template class ScopedMcaValue<int>;
extern template class ScopedMcaValue<bool>;

}  // namespace collbench::ompi

#pragma once
// Making communicators (and shared windows) without leaving Open MPI's libnbc progress hook in
// every later MPI call.
//
// Open MPI 4.1 agrees on a new communicator's context id (MPI_Comm_dup, _split, _split_type,
// and the copy an MPI window makes) with a non-blocking MPI_Iallreduce on the parent. From then
// on libnbc's progress function runs inside every MPI progress loop for as long as the parent
// lives (MPI_COMM_WORLD: the whole process); perf of an 8-byte MPI_Allreduce loop puts 1.5-5 % of
// its cycles there, none without. MPI_Comm_create_group agrees by point-to-point instead. So the
// call is made on a throwaway copy of the parent made with MPI_Comm_create_group and freed right
// after, and the hook goes with it. With other MPIs this costs one communicator creation.
// tests/transport/test_quiet_comm.cpp proves it through Open MPI's own progress registry.
#include <mpi.h>

#include <utility>

namespace collbench::mpi {

// Runs make(copy) on a throwaway copy of `parent` (collective over `parent`); returns the first
// MPI error code, or make's.
template <class Make>
int on_quiet_copy(MPI_Comm parent, Make&& make) {
  constexpr int kCreateGroupTag = 0x636c;  // any tag: these calls never overlap on one parent
  MPI_Group group = MPI_GROUP_NULL;
  int rc = MPI_Comm_group(parent, &group);
  if (rc != MPI_SUCCESS) return rc;
  MPI_Comm copy = MPI_COMM_NULL;
  rc = MPI_Comm_create_group(parent, group, kCreateGroupTag, &copy);
  MPI_Group_free(&group);
  if (rc != MPI_SUCCESS) return rc;
  rc = std::forward<Make>(make)(copy);
  MPI_Comm_free(&copy);  // what make() created holds its own reference
  return rc;
}

inline int quiet_dup(MPI_Comm parent, MPI_Comm* out) {
  return on_quiet_copy(parent, [out](MPI_Comm c) { return MPI_Comm_dup(c, out); });
}

inline int quiet_split(MPI_Comm parent, int color, int key, MPI_Comm* out) {
  return on_quiet_copy(parent, [=](MPI_Comm c) { return MPI_Comm_split(c, color, key, out); });
}

inline int quiet_split_shared(MPI_Comm parent, int key, MPI_Comm* out) {
  return on_quiet_copy(
      parent, [=](MPI_Comm c) { return MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, key, MPI_INFO_NULL, out); });
}

}  // namespace collbench::mpi

// The MPI_ functions libcollbench-pmpi.so defines (the only symbols it exports: exports.map).
// Each collective describes its call and hands it to intercept(), which serves it or makes the
// library's call given here (PMPI_, never MPI_: an MPI_ call from this library would come back
// to it). MPI_Init/_thread and MPI_Finalize start and stop the process's Preload.
#include <mpi.h>

#include "collectives/backends/mpi/preload/preload.hpp"

#define COLLBENCH_PMPI_EXPORT extern "C" __attribute__((visibility("default")))

using collbench::Op;
using collbench::preload::Call;
using collbench::preload::intercept;

COLLBENCH_PMPI_EXPORT int MPI_Init(int* argc, char*** argv) {
  if (!collbench::preload::right_mpi()) return PMPI_Init(argc, argv);
  const int rc = PMPI_Init(argc, argv);
  int provided = MPI_THREAD_SINGLE;
  if (rc == MPI_SUCCESS) {
    PMPI_Query_thread(&provided);
    collbench::preload::start(provided);
  }
  return rc;
}

COLLBENCH_PMPI_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  if (!collbench::preload::right_mpi()) return PMPI_Init_thread(argc, argv, required, provided);
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) collbench::preload::start(*provided);
  return rc;
}

COLLBENCH_PMPI_EXPORT int MPI_Finalize() {
  collbench::preload::stop();
  return PMPI_Finalize();
}

COLLBENCH_PMPI_EXPORT int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  Call c{Op::broadcast, comm, MPI_OP_NULL, root, buf, count, type, buf, count, type};
  return intercept(c, [&] { return PMPI_Bcast(buf, count, type, root, comm); });
}

COLLBENCH_PMPI_EXPORT int MPI_Reduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                                     MPI_Comm comm) {
  Call c{Op::reduce, comm, op, root, sbuf, count, type, rbuf, count, type};
  return intercept(c, [&] { return PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm); });
}

COLLBENCH_PMPI_EXPORT int MPI_Allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op,
                                        MPI_Comm comm) {
  Call c{Op::allreduce, comm, op, 0, sbuf, count, type, rbuf, count, type};
  return intercept(c, [&] { return PMPI_Allreduce(sbuf, rbuf, count, type, op, comm); });
}

COLLBENCH_PMPI_EXPORT int MPI_Gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                                     MPI_Datatype rtype, int root, MPI_Comm comm) {
  Call c{Op::gather, comm, MPI_OP_NULL, root, sbuf, scount, stype, rbuf, rcount, rtype};
  return intercept(c, [&] { return PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm); });
}

COLLBENCH_PMPI_EXPORT int MPI_Scatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                                      MPI_Datatype rtype, int root, MPI_Comm comm) {
  Call c{Op::scatter, comm, MPI_OP_NULL, root, sbuf, scount, stype, rbuf, rcount, rtype};
  return intercept(c, [&] { return PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm); });
}

COLLBENCH_PMPI_EXPORT int MPI_Allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                                        MPI_Datatype rtype, MPI_Comm comm) {
  Call c{Op::allgather, comm, MPI_OP_NULL, 0, sbuf, scount, stype, rbuf, rcount, rtype};
  return intercept(c, [&] { return PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm); });
}

COLLBENCH_PMPI_EXPORT int MPI_Reduce_scatter_block(const void* sbuf, void* rbuf, int rcount, MPI_Datatype type,
                                                   MPI_Op op, MPI_Comm comm) {
  Call c{Op::reduce_scatter, comm, op, 0, sbuf, rcount, type, rbuf, rcount, type};
  return intercept(c, [&] { return PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, type, op, comm); });
}

COLLBENCH_PMPI_EXPORT int MPI_Alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                                       MPI_Datatype rtype, MPI_Comm comm) {
  Call c{Op::alltoall, comm, MPI_OP_NULL, 0, sbuf, scount, stype, rbuf, rcount, rtype};
  return intercept(c, [&] { return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm); });
}

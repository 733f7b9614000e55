// What a forced MPICH algorithm (library:ALGO, collectives/backends/mpi/mpi_mpich.cpp) adds to
// each timed call: three MPI_T_cvar_write to force, three to restore, on handles made once.
// No collbench code; prints ns per call for REPS repetitions of N calls (bench/README.md).
//   mpiexec.hydra -n 1 build-mpich/bench/mpich_forcing_cost [N] [REPS]
#include <mpi.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int provided = 0, count = 0;
  MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
  const char* names[3] = {"MPIR_CVAR_DEVICE_COLLECTIVES", "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM",
                          "MPIR_CVAR_COLLECTIVE_FALLBACK"};
  MPI_T_cvar_handle h[3];
  for (int i = 0; i < 3; ++i) {
    int index = -1;
    if (MPI_T_cvar_get_index(names[i], &index) != MPI_SUCCESS ||
        MPI_T_cvar_handle_alloc(index, nullptr, &h[i], &count) != MPI_SUCCESS) {
      std::fprintf(stderr, "mpich_forcing_cost: no %s (not MPICH?)\n", names[i]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  const long n = argc > 1 ? std::atol(argv[1]) : 2000000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  int forced[3] = {1, 3, 0}, saved[3];  // none, recursive_doubling, error (values are irrelevant here)
  for (int i = 0; i < 3; ++i) MPI_T_cvar_read(h[i], &saved[i]);
  for (int r = 0; r < reps; ++r) {
    const double t0 = MPI_Wtime();
    for (long k = 0; k < n; ++k) {
      for (int i = 0; i < 3; ++i) MPI_T_cvar_write(h[i], &forced[i]);
      for (int i = 0; i < 3; ++i) MPI_T_cvar_write(h[i], &saved[i]);
    }
    std::printf("set + restore: %.1f ns per call\n", (MPI_Wtime() - t0) / static_cast<double>(n) * 1e9);
  }
  for (auto& x : h) MPI_T_cvar_handle_free(&x);
  MPI_Finalize();
  return 0;
}

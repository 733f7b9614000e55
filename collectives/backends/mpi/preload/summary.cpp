#include "collectives/backends/mpi/preload/summary.hpp"

#include <mpi.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <tuple>

#include "collectives/backends/mpi/mpi_library.hpp"
#include "collectives/backends/mpi/preload/messages.hpp"
#include "collectives/backends/mpi/preload/settings.hpp"

namespace collbench::preload {

void Summary::record(Op op, std::string_view by, std::string_view why, std::uint64_t bytes, double seconds) {
  for (Row& row : rows_[op_index(op)])
    if (row.by == by && row.why == why) {
      ++row.calls;
      row.bytes += bytes;
      row.seconds += seconds;
      return;
    }
  rows_[op_index(op)].push_back({std::string(by), std::string(why), 1, bytes, seconds});
}

void Summary::report(const std::string& tuning) {
  if (on()) print(tuning);
  if (reentered_ > 0)
    say("rank " + std::to_string(world_rank()) + ": error: " + std::to_string(reentered_) +
        " MPI collective call(s) reached this library while it served one (sent to the library; a collbench bug)");
}

// Rank 0 prints every rank's rows, summed: calls, bytes and seconds over ranks.
void Summary::print(const std::string& tuning) {
  std::ostringstream mine;
  for (std::size_t o = 0; o < kOps; ++o)
    for (const Row& row : rows_[o])
      mine << o << '\t' << row.by << '\t' << row.why << '\t' << row.calls << '\t' << row.bytes << '\t' << row.seconds
           << '\n';
  const std::string text = mine.str();
  int rank = 0, size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  int len = static_cast<int>(text.size());
  std::vector<int> lens(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  PMPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int k = 0; k < size; ++k) {
    displs[static_cast<std::size_t>(k)] = total;
    total += lens[static_cast<std::size_t>(k)];
  }
  std::string all(rank == 0 ? static_cast<std::size_t>(total) : 0, '\0');
  PMPI_Gatherv(text.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank != 0) return;
  std::map<std::tuple<std::size_t, std::string, std::string>, Row> sum;
  std::istringstream in(all);
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string op, by, why, calls, bytes, seconds;
    std::getline(f, op, '\t');
    std::getline(f, by, '\t');
    std::getline(f, why, '\t');
    std::getline(f, calls, '\t');
    std::getline(f, bytes, '\t');
    std::getline(f, seconds, '\t');
    Row& row = sum[{std::stoul(op), by, why}];
    row.by = by;
    row.why = why;
    row.calls += std::stoull(calls);
    row.bytes += std::stoull(bytes);
    row.seconds += std::stod(seconds);
  }
  std::FILE* outf = where_ == "stderr" ? stderr : std::fopen(where_.c_str(), "w");
  if (!outf) {
    say(std::string(kSummaryVar) + "=" + where_ + ": cannot write (" + std::strerror(errno) + ")");
    return;
  }
  std::fprintf(outf, "# %s summary: %d rank(s), calls/bytes/seconds summed over ranks; tuning file: %s\n", kSelf, size,
               tuning.c_str());
  std::fprintf(outf, "# %-24s %-20s %10s %16s %12s  %s\n", "call", "served by", "calls", "bytes", "seconds",
               "why the library");
  for (const auto& [key, row] : sum)
    std::fprintf(outf, "  %-24s %-20s %10llu %16llu %12.6f  %s\n",
                 std::string(mpi_library::call_name(static_cast<Op>(std::get<0>(key)))).c_str(), row.by.c_str(),
                 static_cast<unsigned long long>(row.calls), static_cast<unsigned long long>(row.bytes), row.seconds,
                 row.why.empty() && row.by == "library" ? "tuning file" : row.why.c_str());
  if (outf != stderr) std::fclose(outf);
  std::fflush(stderr);
}

}  // namespace collbench::preload

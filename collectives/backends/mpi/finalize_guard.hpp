#pragma once
// Bounds a blocking call that has no timeout of its own (MPI_Finalize): a thread waits `limit`
// for the guard to be destroyed and otherwise runs `on_expiry` (which ends the process: the
// blocked call never returns). Why: MPICH 4.0.2 over UCX sometimes never returns from
// MPI_Finalize after a run across nodes has ended and written every result (a rank blocks in
// a PMI barrier while its peer's endpoint close needs it to progress; pmodels/mpich#6596,
// fixed in 4.2), which would hold a Slurm step until its time limit.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace collbench {

class FinalizeGuard {
 public:
  FinalizeGuard(std::chrono::milliseconds limit, std::function<void()> on_expiry)
      : thread_([this, limit, f = std::move(on_expiry)] {
          std::unique_lock<std::mutex> l(lock_);
          if (!done_.wait_for(l, limit, [this] { return returned_; })) f();
        }) {}
  ~FinalizeGuard() {
    {
      const std::lock_guard<std::mutex> l(lock_);
      returned_ = true;
    }
    done_.notify_one();
    thread_.join();
  }
  FinalizeGuard(const FinalizeGuard&) = delete;
  FinalizeGuard& operator=(const FinalizeGuard&) = delete;

 private:
  std::mutex lock_;
  std::condition_variable done_;
  bool returned_ = false;
  std::thread thread_;  // last: starts once the members it uses exist
};

}  // namespace collbench

#include "harness/measure/resuming.hpp"

#include "harness/measure/ddp_point.hpp"
#include "harness/measure/p2p_point.hpp"

namespace collbench {
namespace {

// Marks the points of `row` recorded earlier as placeholders; returns which are still to do.
std::vector<bool> mark_done(std::vector<PointResult>& row, const ResumeSet& done) {
  std::vector<bool> pending;
  for (auto& r : row) {
    pending.push_back(!done.done(r));
    if (pending.back()) continue;
    r.resumed = true;
    r.skipped = true;
    r.skip_reason = "already recorded (--resume)";
  }
  return pending;
}

// Puts the measured results, in order, in the places still to do.
void merge(std::vector<PointResult>& row, const std::vector<bool>& pending, std::vector<PointResult> fresh) {
  auto it = fresh.begin();
  for (std::size_t i = 0; i < row.size(); ++i)
    if (pending[i]) row[i] = std::move(*it++);
}

}  // namespace

std::vector<PointResult> measure_size_resuming(PointEnv& env, const CollectiveBlock& planned, const SizePoint& s,
                                               const ResumeSet& done) {
  // --algo auto: this size's choices, so everything below sees concrete algorithms.
  const CollectiveBlock b = env.autos ? env.autos->resolve(planned, s.bytes) : planned;
  std::vector<PointResult> row;
  for (const AlgoEntry* e : b.algos) row.push_back(base_result(env, b, *e, s));
  const std::vector<bool> pending = mark_done(row, done);
  CollectiveBlock rest = b;
  rest.algos.clear();
  for (std::size_t i = 0; i < b.algos.size(); ++i)
    if (pending[i]) rest.algos.push_back(b.algos[i]);
  if (!rest.algos.empty()) merge(row, pending, measure_size(env, rest, s));
  return row;
}

std::vector<PointResult> measure_size_resuming(PointEnv& env, const DdpBlock& b, const SizePoint&, const ResumeSet&) {
  return measure_ddp(env, b);  // not resumable: a workload record is measured again (resume.hpp)
}

std::vector<PointResult> measure_size_resuming(PointEnv& env, const P2pBlock& b, const SizePoint& s,
                                               const ResumeSet& done) {
  const std::vector<SelectedPair> pairs = p2p_pairs(env, b);
  std::vector<PointResult> row;
  for (const auto& p : pairs) row.push_back(p2p_base_result(env, b, s, p));
  const std::vector<bool> pending = mark_done(row, done);
  std::vector<SelectedPair> rest;
  for (std::size_t i = 0; i < pairs.size(); ++i)
    if (pending[i]) rest.push_back(pairs[i]);
  if (!rest.empty()) merge(row, pending, measure_p2p_pairs(env, b, s, rest));
  return row;
}

}  // namespace collbench

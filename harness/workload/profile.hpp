#pragma once
// A per-layer compute profile for the DDP overlap model (--compute-profile FILE, YAML or JSON):
//
//   forward_ms: 60
//   optimizer_ms: 10
//   backward_ms: {fc: 0.4, layer4: 21.0, layer3: 30.5, layer2: 22.1, layer1: 17.0, conv1: 4.0, bn1: 0.1}
//
// backward_ms is keyed by module (or parameter) name prefixes, as a per-module backward hook
// reports them: an entry covers the parameters whose names equal it or start with it and a dot
// ("layer4" covers "layer4.0.conv1.weight", not "layer40..."); the longest entry wins. Its time
// is split over its parameters by bytes. Every parameter must be covered and every entry must
// cover one, so a misspelt module fails up front.
#include <string>
#include <vector>

#include "harness/workload/model.hpp"

namespace collbench::workload {

struct ComputeProfile {
  double forward_ms = 0, optimizer_ms = 0;
  std::vector<double> param_backward_ms;  // per Model::params entry
  double backward_ms() const;
};

// Throws UsageError naming the file (and the line, where the YAML parser knows it).
ComputeProfile load_compute_profile(const std::string& path, const Model& m);
ComputeProfile parse_compute_profile(const std::string& text, const std::string& path, const Model& m);

}  // namespace collbench::workload

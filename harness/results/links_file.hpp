#pragma once
// --links FILE: the link rates one run calibrated, kept for the next runs of a job, so that
// every run's efficiency is judged against the same yardstick (the fastest of 30 osu_bw samples
// moved 10.0-13.1 GB/s between runs seconds apart on this VM, while the points did not).
// Rank 0 reads the file and broadcasts its text; every rank parses it, so all reuse alike.
// A rate is reused only for the same backend and device and a pair on the same hosts; the
// file trusts nothing it reads: any other content is a UsageError naming the file.
// Format (results/README.md "Links file"): {"schema": "collbench-links/1", "backend", "device",
// "rates": [{"link": "intra"|"inter", "GBps", "src", "dst", "src_host", "dst_host", "bytes",
// "samples", "spread", "run_id"}]}.
#include <optional>
#include <string>
#include <vector>

#include "harness/results/bandwidth.hpp"

namespace collbench {

inline constexpr const char* kLinksSchema = "collbench-links/1";

struct LinksFile {
  std::string backend, device;
  struct Entry {
    std::string link;  // "intra" | "inter"
    LinkRate rate;
    std::string run_id;
  };
  std::vector<Entry> rates;
};

// `text` of the file at `path` (for messages). Throws UsageError on anything but a valid file.
LinksFile parse_links_file(const std::string& text, const std::string& path);
std::string format_links_file(const LinksFile& f);

// The entry of `f` that applies to a pair of class `link` between `src_host` and `dst_host` on
// `backend`/`device`, or nothing.
std::optional<LinkRate> reusable_rate(const LinksFile& f, const std::string& backend, const std::string& device,
                                      const std::string& link, const std::string& src_host, const std::string& dst_host);

// `f` with `rate` (measured by run `run_id`) in place of any entry for the same class and hosts.
void record_rate(LinksFile& f, const std::string& link, const LinkRate& rate, const std::string& run_id);

}  // namespace collbench

#pragma once
// collbench's exit statuses, defined once. Every return and _exit in harness/ uses them;
// `collbench --help` prints its "Exit status" section from kExitStatuses (exit_status_help), and
// unit.harness (tests/harness/test_facts.cpp) checks the docs' table (docs/reliability.md,
// "Exit status") and the results schema's `end` record against this file.
#include <array>
#include <csignal>
#include <string>
#include <string_view>

namespace collbench {

enum class ExitStatus : int {
  ok = 0,
  wrong_results = 1,
  usage = 2,
  rank_failed = 3,
  write_failed = 4,
  below_expectation = 5,
};

constexpr int code(ExitStatus s) { return static_cast<int>(s); }

struct ExitStatusInfo {
  ExitStatus status;
  std::string_view name;     // as in the docs' table
  std::string_view meaning;  // one line: --help, and the start of the docs' "meaning" cell
  bool in_end_record;        // the results file's `end` record can carry it
};

// In order of value. Signals (below) come after these.
inline constexpr std::array kExitStatuses{
    ExitStatusInfo{ExitStatus::ok, "ok", "every point measured (or skipped) and verified", true},
    ExitStatusInfo{ExitStatus::wrong_results, "wrong_results", "some point had wrong results", true},
    ExitStatusInfo{ExitStatus::usage, "usage", "bad input: one line on stderr; no results file created or touched",
                   false},
    // The end record: rank 0's watchdog writes it before its _exit when rank 0 is the one that timed out.
    ExitStatusInfo{ExitStatus::rank_failed, "rank_failed",
                   "a rank failed or timed out: one line from it, then the job ends in bounded time", true},
    ExitStatusInfo{ExitStatus::write_failed, "write_failed",
                   "the --json file could not be written: one line; complete records kept, --resume continues",
                   false},
    ExitStatusInfo{ExitStatus::below_expectation, "below_expectation",
                   "some point fell short of its --expect reference (or was skipped against one); all results written",
                   true},
};

// SIGTERM and SIGINT stop the sweep at once, the point in progress dropped (runtime/signals.hpp); the process then
// exits 128 + signal, as a shell reports a process killed by it (143 SIGTERM, 130 SIGINT),
// and the `end` record says the same.
inline constexpr std::array kStopSignals{SIGTERM, SIGINT};
inline constexpr std::string_view kSignalStatusName = "signal";
inline constexpr std::string_view kSignalStatusMeaning =
    "stopped by SIGTERM / SIGINT: finished points kept with an end record; --resume completes it";
constexpr int signal_exit_status(int signo) { return 128 + signo; }

// "143 / 130": the statuses of kStopSignals, as the docs' table and --help write them.
inline std::string signal_statuses_text() {
  std::string s;
  for (int sig : kStopSignals) s += (s.empty() ? "" : " / ") + std::to_string(signal_exit_status(sig));
  return s;
}

// The "Exit status:" section of --help, one line per status.
inline std::string exit_status_help() {
  std::string s = "Exit status:\n";
  auto line = [&s](const std::string& value, std::string_view meaning) {
    s += "  " + value + std::string(value.size() < 10 ? 10 - value.size() : 1, ' ');
    s += meaning;
    s += '\n';
  };
  for (const auto& e : kExitStatuses) line(std::to_string(code(e.status)), e.meaning);
  line(signal_statuses_text(), kSignalStatusMeaning);
  return s;
}

}  // namespace collbench

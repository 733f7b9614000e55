#pragma once
// Other tools' options, as nccl-tests and OSU micro-benchmarks users type them: one table row
// per option. A row either keeps its meaning (the arguments are rewritten to collbench's:
// --minbytes -> --min-bytes, OSU's -m MIN:MAX -> -b MIN -e MAX, -x -> --warmup) or answers in
// one line naming the collbench way and why (-g: one GPU per rank ...), a UsageError (exit 2).
// Where the two tools give a letter different meanings, the row says which one collbench took.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace collbench {

enum class ForeignValue {
  none,      // a switch
  one,       // always takes the next argument (or =VALUE / -xVALUE)
  optional,  // takes the next argument unless it is missing or starts with '-'
};

struct ForeignOption {
  const char* names;   // the other tools' spellings, "-g,--ngpus"
  const char* tool;    // "nccl-tests", "OSU", "nccl-tests, OSU"
  const char* theirs;  // what it means there
  ForeignValue value;
  // The collbench arguments for the value (no value: nullopt): nullopt leaves the argument as
  // typed (collbench's own option of that letter); an empty list answers with `answer`.
  // Null: always answers.
  std::optional<std::vector<std::string>> (*rewrite)(std::optional<std::string_view> value);
  const char* answer;    // why not, and the collbench way (rows that answer); else the help's note
  const char* accepted;  // the collbench equivalent, for "; accepted: ..."
};

std::span<const ForeignOption> foreign_options();

// argv[1..] with every row's option rewritten; throws UsageError for a row that answers.
// Stops at "--". Arguments that are not options of the table are kept as they are.
std::vector<std::string> rewrite_foreign_options(std::vector<std::string> args);

// The --help-all section "Other tools' options", lines of at most `width` columns.
std::string foreign_options_help(std::size_t width);

}  // namespace collbench

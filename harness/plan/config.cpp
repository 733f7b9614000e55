#include "harness/plan/config.hpp"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "collectives/core/error.hpp"
#include "harness/plan/settings.hpp"

namespace collbench {
namespace {

// Where a node is, for messages: "FILE:LINE:COL" (1-based, like compilers).
class Where {
 public:
  explicit Where(std::string file) : file_(std::move(file)) {}
  std::string at(const YAML::Mark& m) const {
    return file_ + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
  }
  std::string at(const YAML::Node& n) const { return at(n.Mark()); }
  [[noreturn]] void fail(const YAML::Node& n, const std::string& what) const { throw UsageError(at(n) + ": " + what); }

 private:
  std::string file_;
};

std::string setting_keys() {
  std::string s;
  for (const auto& o : setting_options()) s += std::string(s.empty() ? "" : ", ") + o.name;
  return s;
}

// A scalar, or for list-valued keys a sequence of scalars joined with ','.
std::string scalar_text(const Where& w, const std::string& key, const YAML::Node& v, bool list) {
  if (v.IsScalar()) return v.Scalar();
  if (list && v.IsSequence() && v.size() > 0) {
    std::string out;
    for (const auto& item : v) {
      if (!item.IsScalar()) w.fail(item, "'" + key + "' items must be plain values; accepted: a list of names");
      out += (out.empty() ? "" : ",") + item.Scalar();
    }
    return out;
  }
  const char* kind = v.IsNull() ? "empty" : v.IsMap() ? "a mapping" : "a list";
  w.fail(v, "'" + key + "' is " + kind + "; accepted: " + (list ? "a value or a non-empty list of values" : "a single value"));
}

// Runs `parse` on the value, re-labelling its UsageError with the value's position.
template <class F>
auto at_value(const Where& w, const YAML::Node& v, F&& parse) {
  try {
    return parse();
  } catch (const UsageError& e) {
    w.fail(v, e.what());
  }
}

// Iterates a mapping, refusing duplicate keys (yaml-cpp keeps them silently).
template <class F>
void for_each_key(const Where& w, const YAML::Node& map, F&& on_key) {
  std::set<std::string> seen;
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) w.fail(kv.first, "keys must be plain names; accepted: name: value");
    const std::string key = kv.first.Scalar();
    if (!seen.insert(key).second) w.fail(kv.first, "duplicate key '" + key + "'; accepted: each key once per mapping");
    on_key(key, kv.first, kv.second);
  }
}

// -f and -i are alternatives; one mapping giving both is ambiguous.
void refuse_both_steps(const Where& w, const YAML::Node& map) {
  const bool f = map["step_factor"] || map["step-factor"], i = map["step_bytes"] || map["step-bytes"];
  if (f && i) w.fail(map, "step_factor and step_bytes cannot be combined; accepted: one of them");
}

// Applies one setting key if it is one; false when the key is not a setting.
bool apply_setting_key(const Where& w, Settings& s, const std::string& key, const YAML::Node& v) {
  const SettingOption* o = find_setting(key);
  if (!o) return false;
  const std::string text = scalar_text(w, key, v, o->list);
  at_value(w, v, [&] {
    apply_setting(s, *o, text);
    return 0;
  });
  return true;
}

void parse_defaults(const Where& w, const YAML::Node& node, SweepFile& f) {
  if (!node.IsMap()) w.fail(node, "'defaults' must be a mapping; accepted: key: value pairs");
  refuse_both_steps(w, node);
  for_each_key(w, node, [&](const std::string& key, const YAML::Node& k, const YAML::Node& v) {
    if (apply_setting_key(w, f.defaults, key, v)) return;
    if (key == "backend") f.backend = scalar_text(w, key, v, false);
    else if (key == "device") f.device = scalar_text(w, key, v, false);
    else if (key == "json") f.json = scalar_text(w, key, v, false);
    else if (key == "tuning")
      f.tuning = scalar_text(w, key, v, false);
    else if (key == "quiet") f.quiet = at_value(w, v, [&] { return parse_bool(scalar_text(w, key, v, false)); });
    else
      w.fail(k, "unknown key '" + key + "' in defaults; accepted: " + setting_keys() +
                    ", backend, device, json, tuning, quiet");
  });
  at_value(w, node, [&] {
    validate_settings(f.defaults);
    return 0;
  });
}

CaseSpec parse_case(const Where& w, const YAML::Node& node, const Settings& defaults) {
  if (!node.IsMap()) w.fail(node, "each case must be a mapping; accepted: {op: OP, algo: ALGO, ...settings}");
  refuse_both_steps(w, node);
  CaseSpec c;
  c.settings = defaults;
  c.origin = w.at(node);
  bool has_op = false;
  for_each_key(w, node, [&](const std::string& key, const YAML::Node& k, const YAML::Node& v) {
    if (key == "op") {
      at_value(w, v, [&] {
        c.ops = parse_ops(scalar_text(w, key, v, true));
        return 0;
      });
      has_op = true;
    } else if (key == "algo") {
      c.algos = at_value(w, v, [&] { return parse_algos(scalar_text(w, key, v, true)); });
    } else if (!apply_setting_key(w, c.settings, key, v)) {
      w.fail(k, "unknown key '" + key + "' in a case; accepted: op, algo, " + setting_keys());
    }
  });
  if (!has_op) w.fail(node, "a case needs 'op'; accepted: an op name, a list of them, or all");
  at_value(w, node, [&] {
    validate_settings(c.settings);
    return 0;
  });
  return c;
}

SweepFile parse_root(const Where& w, const YAML::Node& root) {
  if (!root.IsMap()) w.fail(root, "the sweep file must be a mapping; accepted: name, layouts, defaults, cases");
  SweepFile f;
  std::optional<YAML::Node> cases;
  for_each_key(w, root, [&](const std::string& key, const YAML::Node& k, const YAML::Node& v) {
    if (key == "name") f.name = scalar_text(w, key, v, false);
    else if (key == "layouts") {
      const std::string text = scalar_text(w, key, v, true);
      for (const auto& l : at_value(w, v, [&] { return split_list(text); }))
        f.layouts.push_back(at_value(w, v, [&] { return parse_layout(l); }));
    } else if (key == "defaults") parse_defaults(w, v, f);
    else if (key == "cases") cases = v;
    else w.fail(k, "unknown top-level key '" + key + "'; accepted: name, layouts, defaults, cases");
  });
  // Cases are read after defaults whatever the key order, so they inherit all of them.
  if (cases) {
    if (!cases->IsSequence()) w.fail(*cases, "'cases' must be a list; accepted: a list of {op, algo, ...}");
    for (const auto& c : *cases) f.cases.push_back(parse_case(w, c, f.defaults));
  }
  return f;
}

}  // namespace

SweepFile parse_sweep_yaml(const std::string& text, const std::string& filename) {
  const Where w(filename);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw UsageError(w.at(e.mark) + ": YAML syntax error: " + e.msg + "; accepted: a YAML mapping");
  }
  if (root.IsNull()) throw UsageError(filename + ": the sweep file is empty; accepted: name, layouts, defaults, cases");
  try {
    return parse_root(w, root);
  } catch (const YAML::Exception& e) {  // e.g. a conversion yaml-cpp refuses
    throw UsageError(w.at(e.mark) + ": " + e.msg + "; accepted: see slurm/sweeps/*.yaml");
  }
}

SweepFile load_sweep_file(const std::string& path) {
  std::error_code ec;
  std::ifstream in(path);
  if (!std::filesystem::is_regular_file(path, ec) || !in) throw UsageError("--config " + path + ": cannot read the file; accepted: a readable YAML sweep file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_sweep_yaml(ss.str(), path);
}

}  // namespace collbench

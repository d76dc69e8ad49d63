// Command-line arguments in Kaldi's style: "--name=value" or "--name" (true), anywhere among
// the positional arguments; "--" ends the options.
#pragma once

#include <tablio/core/error.hpp>

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace cli {

class arguments {
 public:
  arguments(int argc, char** argv, int first) {
    bool options_done = false;
    for (int i = first; i < argc; ++i) {
      std::string_view a = argv[i];
      if (!options_done && a == "--") {
        options_done = true;
      } else if (!options_done && a.size() > 2 && a.substr(0, 2) == "--") {
        std::size_t eq = a.find('=');
        std::string name(a.substr(2, eq == std::string_view::npos ? std::string_view::npos : eq - 2));
        options_[name] = eq == std::string_view::npos ? "true" : std::string(a.substr(eq + 1));
      } else {
        positional_.emplace_back(a);
      }
    }
  }

  const std::vector<std::string>& positional() const noexcept { return positional_; }
  bool has(const std::string& name) const { return options_.count(name) != 0; }

  std::string get(const std::string& name, const std::string& otherwise) {
    known_.insert(name);
    auto it = options_.find(name);
    return it == options_.end() ? otherwise : it->second;
  }
  bool flag(const std::string& name) {
    std::string v = get(name, "false");
    if (v == "true" || v == "1") return true;
    if (v == "false" || v == "0") return false;
    throw tablio::usage_error("--" + name + " takes true or false, not '" + v + "'");
  }
  int integer(const std::string& name, int otherwise) {
    std::string v = get(name, std::to_string(otherwise));
    try {
      std::size_t used = 0;
      int n = std::stoi(v, &used);
      if (used == v.size()) return n;
    } catch (const std::exception&) {
    }
    throw tablio::usage_error("--" + name + " takes an integer, not '" + v + "'");
  }

  // Throws for an option the command did not ask for, and for the wrong number of
  // positional arguments.
  void finish(std::size_t min_positional, std::size_t max_positional) const {
    for (const auto& [name, value] : options_)
      if (!known_.count(name)) throw tablio::usage_error("unknown option --" + name);
    if (positional_.size() < min_positional || positional_.size() > max_positional)
      throw tablio::usage_error(
          "expected " + std::to_string(min_positional) +
          (min_positional == max_positional ? "" : " to " + std::to_string(max_positional)) +
          " arguments, got " + std::to_string(positional_.size()));
  }

 private:
  std::map<std::string, std::string> options_;
  std::set<std::string> known_;
  std::vector<std::string> positional_;
};

}  // namespace cli

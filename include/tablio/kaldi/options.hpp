// Kaldi's itf/options-itf.h and util/parse-options.h over tablio: OptionsItf, which Kaldi-style
// config structs register their members on, and ParseOptions, which reads "--name=value"
// options from the command line and from config files, keeps the positional arguments, and
// prints the usage message in Kaldi's format.
//
// As Kaldi's, every ParseOptions has the standard options --config, --print-args, --help and
// --verbose; names are taken in any case and with '_' for '-'; a bool option may be given bare
// (--binary); options end at the first argument that does not start with "--", or at "--".
#pragma once

#include <tablio/core/config.hpp>
#include <tablio/kaldi/base.hpp>
#include <tablio/kaldi/logging.hpp>
#include <tablio/kaldi/text.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/stream/reader.hpp>

#include <concepts>
#include <cstdlib>
#include <iostream>
#include <map>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

TABLIO_BEGIN_NAMESPACE

namespace kaldi {

// What options are registered on: a config struct's `void Register(OptionsItf* opts)` calls
// opts->Register("name", &member, "what it does") for each of its members.
class OptionsItf {
 public:
  // Registers a bool option.
  virtual void Register(const std::string& name, bool* ptr, const std::string& doc) = 0;
  // Registers an int32 option.
  virtual void Register(const std::string& name, int32* ptr, const std::string& doc) = 0;
  // Registers a uint32 option.
  virtual void Register(const std::string& name, uint32* ptr, const std::string& doc) = 0;
  // Registers a float option.
  virtual void Register(const std::string& name, float* ptr, const std::string& doc) = 0;
  // Registers a double option.
  virtual void Register(const std::string& name, double* ptr, const std::string& doc) = 0;
  // Registers a string option.
  virtual void Register(const std::string& name, std::string* ptr, const std::string& doc) = 0;
  virtual ~OptionsItf() = default;
};

// Kaldi's command-line parser: register options, Read(argc, argv), then NumArgs() and GetArg(i)
// for the positional arguments. Errors (an unknown option, a bad value) print the usage and
// throw KaldiFatalError through KALDI_ERR.
class ParseOptions : public OptionsItf {
 public:
  // A parser for a program whose usage message is usage, with the standard options registered.
  explicit ParseOptions(const char* usage);
  // A parser that registers its options on other as "prefix.name" (Kaldi's way to give a config
  // struct's options a prefix); it reads nothing itself. When other is itself such a parser,
  // the options go to the parser behind it, as "prefix.other-prefix.name" (Kaldi's order).
  ParseOptions(const std::string& prefix, OptionsItf* other);
  ParseOptions(const ParseOptions&) = delete;
  ParseOptions& operator=(const ParseOptions&) = delete;
  ~ParseOptions() override = default;

  // Registers a bool option: --name, --name=true|false|t|f|1|0.
  void Register(const std::string& name, bool* ptr, const std::string& doc) override;
  // Registers an int32 option: --name=-3.
  void Register(const std::string& name, int32* ptr, const std::string& doc) override;
  // Registers a uint32 option: --name=3.
  void Register(const std::string& name, uint32* ptr, const std::string& doc) override;
  // Registers a float option: --name=0.5, --name=1e-3, --name=inf.
  void Register(const std::string& name, float* ptr, const std::string& doc) override;
  // Registers a double option, read as a float option is.
  void Register(const std::string& name, double* ptr, const std::string& doc) override;
  // Registers a string option: --name=value, --name= for the empty string.
  void Register(const std::string& name, std::string* ptr, const std::string& doc) override;
  // Registers an option among the standard ones (printed under "Standard options:"), on this
  // parser even when it has a prefix. T is one of the six types Register takes.
  template <class T>
  void RegisterStandard(const std::string& name, T* ptr, const std::string& doc) {
    AddOption(name, OptionPointer(ptr), doc, true);
  }
  // Removes a registered option, before Read; KALDI_ERR when there is none of that name.
  void DisableOption(const std::string& name);

  // Reads the command line: sets the program name from argv[0], reads every --config file
  // and answers --help (the usage, then exit(0)), sets the options up to the first argument not
  // starting with "--" (or a lone "--"), and keeps the rest as the positional arguments; with
  // --print-args (the default), prints the command line to stderr. Returns the index in argv
  // of the first positional argument.
  int Read(int argc, const char* const argv[]);
  // The number of positional arguments.
  int NumArgs() const;
  // The i-th positional argument, from 1; KALDI_ERR when there is none.
  std::string GetArg(int i) const;
  // The i-th positional argument, from 1; empty when there is none.
  std::string GetOptArg(int i) const;
  // Prints to stderr the usage message, the options with their descriptions and defaults, and,
  // with print_command_line, the command line Read was given.
  void PrintUsage(bool print_command_line = false) const;
  // Prints every option's current value to os, one "name = value" a line.
  void PrintConfig(std::ostream& os) const;
  // Sets the options a config file gives: one "--name=value" a line, '#' starting a comment,
  // blank lines skipped. KALDI_ERR when it cannot be read or a line is not an option.
  void ReadConfigFile(const std::string& filename);
  // str quoted for a shell when it needs to be, as --print-args prints arguments.
  static std::string Escape(const std::string& str);

 private:
  using OptionPointer = std::variant<bool*, int32*, uint32*, float*, double*, std::string*>;
  struct Option {
    std::string name;  // as registered, which the usage shows
    std::string doc;   // the description with the type and the default at registration
    bool is_standard;
    OptionPointer value;
  };

  void Forward(const std::string& name, OptionPointer ptr, const std::string& doc);
  void AddOption(const std::string& name, OptionPointer ptr, const std::string& doc, bool is_standard);
  void SplitLongArg(std::string_view arg, std::string* key, std::string* value, bool* has_equal_sign) const;
  bool SetOption(const std::string& key, const std::string& value, bool has_equal_sign);
  [[noreturn]] void BadValue(const std::string& key, const std::string& value, bool has_equal_sign,
                             const char* expected) const;
  std::string CommandLine() const;

  std::string usage_;
  std::string prefix_;
  OptionsItf* other_ = nullptr;            // where a prefixed parser registers
  std::map<std::string, Option> options_;  // by normalized name, the order the usage lists them in
  std::vector<std::string> args_;          // argv as Read got it
  std::vector<std::string> positional_;
  std::string config_;
  bool print_args_ = true;
  bool help_ = false;
  bool was_read_ = false;  // Read was called: too late to disable options
};

namespace detail {
// An option name as ParseOptions matches it: ASCII lower case, '_' made '-'.
TABLIO_IMPL std::string NormalizeOptionName(std::string_view name);
}  // namespace detail

}  // namespace kaldi

TABLIO_END_NAMESPACE

#if TABLIO_HEADER_IMPLEMENTATION
#include <iomanip>

TABLIO_BEGIN_NAMESPACE

namespace kaldi {

namespace detail {

TABLIO_IMPL std::string NormalizeOptionName(std::string_view name) {
  std::string normalized(name);
  for (char& c : normalized) {
    if (c == '_')
      c = '-';
    else if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  }
  return normalized;
}

}  // namespace detail

TABLIO_IMPL ParseOptions::ParseOptions(const char* usage) : usage_(usage ? usage : "") {
  RegisterStandard("config", &config_, "Configuration file to read (this option may be repeated)");
  RegisterStandard("print-args", &print_args_, "Print the command line arguments (to stderr)");
  RegisterStandard("help", &help_, "Print out usage message");
  RegisterStandard("verbose", &detail::verbose_level, "Verbose level (higher->more logging)");
}

TABLIO_IMPL ParseOptions::ParseOptions(const std::string& prefix, OptionsItf* other) : print_args_(false) {
  if (prefix.empty()) KALDI_ERR << "ParseOptions with a prefix: the prefix is empty";
  if (other == nullptr) KALDI_ERR << "ParseOptions with a prefix: no parser to register on";
  auto* outer = dynamic_cast<ParseOptions*>(other);
  if (outer != nullptr && outer->other_ != nullptr) {
    // Registered straight on the parser at the end of the chain, with both prefixes.
    other_ = outer->other_;
    prefix_ = prefix + "." + outer->prefix_;
  } else {
    other_ = other;
    prefix_ = prefix;
  }
}

TABLIO_IMPL void ParseOptions::Register(const std::string& name, bool* ptr, const std::string& doc) {
  Forward(name, ptr, doc);
}
TABLIO_IMPL void ParseOptions::Register(const std::string& name, int32* ptr, const std::string& doc) {
  Forward(name, ptr, doc);
}
TABLIO_IMPL void ParseOptions::Register(const std::string& name, uint32* ptr, const std::string& doc) {
  Forward(name, ptr, doc);
}
TABLIO_IMPL void ParseOptions::Register(const std::string& name, float* ptr, const std::string& doc) {
  Forward(name, ptr, doc);
}
TABLIO_IMPL void ParseOptions::Register(const std::string& name, double* ptr, const std::string& doc) {
  Forward(name, ptr, doc);
}
TABLIO_IMPL void ParseOptions::Register(const std::string& name, std::string* ptr, const std::string& doc) {
  Forward(name, ptr, doc);
}

TABLIO_IMPL void ParseOptions::Forward(const std::string& name, OptionPointer ptr, const std::string& doc) {
  if (other_ == nullptr) return AddOption(name, ptr, doc, false);
  const std::string prefixed = prefix_ + "." + name;
  std::visit([&](auto* p) { other_->Register(prefixed, p, doc); }, ptr);
}

TABLIO_IMPL void ParseOptions::AddOption(const std::string& name, OptionPointer ptr, const std::string& doc,
                                         bool is_standard) {
  if (std::visit([](auto* p) { return p == nullptr; }, ptr))
    KALDI_ERR << "ParseOptions: option --" << name << " registered with a null pointer";
  std::string key = detail::NormalizeOptionName(name);
  if (key.empty()) KALDI_ERR << "ParseOptions: an option registered with an empty name";
  if (options_.count(key)) {
    KALDI_WARN << "Registering option twice, ignoring second time: " << name;
    return;
  }
  // The description shows the default, which is the value the variable holds now.
  std::ostringstream described;
  described << doc << " (";
  std::visit(
      [&](auto* p) {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::same_as<T, bool>)
          described << "bool, default = " << (*p ? "true" : "false");
        else if constexpr (std::same_as<T, int32>)
          described << "int, default = " << *p;
        else if constexpr (std::same_as<T, uint32>)
          described << "uint, default = " << *p;
        else if constexpr (std::same_as<T, float>)
          described << "float, default = " << *p;
        else if constexpr (std::same_as<T, double>)
          described << "double, default = " << *p;
        else
          described << "string, default = \"" << *p << '"';
      },
      ptr);
  described << ')';
  options_.emplace(std::move(key), Option{name, described.str(), is_standard, ptr});
}

TABLIO_IMPL void ParseOptions::DisableOption(const std::string& name) {
  if (was_read_) KALDI_ERR << "ParseOptions::DisableOption(\"" << name << "\") after Read()";
  if (options_.erase(detail::NormalizeOptionName(name)) == 0)
    KALDI_ERR << "ParseOptions::DisableOption: no option --" << name << " to disable";
}

TABLIO_IMPL int ParseOptions::Read(int argc, const char* const argv[]) {
  was_read_ = true;
  args_.assign(argv, argv + (argc > 0 ? argc : 0));
  positional_.clear();
  if (argc > 0) {
    // Messages name the program, as Kaldi's do: many programs' stderr often share one log.
    const std::size_t slash = args_[0].find_last_of("/\\");
    SetProgramName(args_[0].c_str() + (slash == std::string::npos ? 0 : slash + 1));
  }
  std::string key, value;
  bool has_equal_sign = false;

  // First, every --config file in order, so that the command line overrides them, and --help.
  // As in Kaldi, this looks at every argument up to a lone "--", positional ones included.
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (!arg.starts_with("--")) continue;
    if (arg == "--") break;
    SplitLongArg(arg, &key, &value, &has_equal_sign);
    if (key == "config" && has_equal_sign) ReadConfigFile(value);
    if (key == "help") {
      bool help = false;
      std::string lower = detail::NormalizeOptionName(value);
      if (!has_equal_sign || lower == "true" || lower == "t" || lower == "1") help = true;
      if (help) {
        PrintUsage();
        std::exit(0);
      }
    }
  }

  // Then the options, up to the first argument that is not one.
  int i = 1;
  bool double_dash_seen = false;
  for (; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (!arg.starts_with("--")) break;
    if (arg == "--") {
      ++i;
      double_dash_seen = true;
      break;
    }
    SplitLongArg(arg, &key, &value, &has_equal_sign);
    if (!SetOption(key, value, has_equal_sign)) {
      PrintUsage(true);
      KALDI_ERR << "Invalid option " << arg;
    }
  }
  const int first_positional = i;
  // The rest are positional, but for a first lone "--" there, which ends options too.
  for (; i < argc; ++i) {
    if (!double_dash_seen && std::string_view(argv[i]) == "--")
      double_dash_seen = true;
    else
      positional_.emplace_back(argv[i]);
  }

  if (print_args_) {
    const std::string line = CommandLine() + '\n';
    std::cerr.write(line.data(), static_cast<std::streamsize>(line.size()));
    std::cerr.flush();
  }
  return first_positional;
}

TABLIO_IMPL int ParseOptions::NumArgs() const { return static_cast<int>(positional_.size()); }

TABLIO_IMPL std::string ParseOptions::GetArg(int i) const {
  if (i < 1 || i > NumArgs())
    KALDI_ERR << "ParseOptions::GetArg, invalid index " << i << " (there are " << NumArgs()
              << " positional arguments)";
  return positional_[static_cast<std::size_t>(i - 1)];
}

TABLIO_IMPL std::string ParseOptions::GetOptArg(int i) const {
  if (i < 1 || i > NumArgs()) return std::string();
  return positional_[static_cast<std::size_t>(i - 1)];
}

TABLIO_IMPL void ParseOptions::PrintUsage(bool print_command_line) const {
  std::ostringstream out;
  out << '\n' << usage_ << '\n';
  auto list = [&](bool standard) {
    for (const auto& [key, option] : options_)
      if (option.is_standard == standard)
        out << "  --" << std::setw(25) << std::left << option.name << " : " << option.doc << '\n';
  };
  bool program_options = false;
  for (const auto& entry : options_) program_options = program_options || !entry.second.is_standard;
  if (program_options) {
    out << "Options:\n";
    list(false);
    out << '\n';
  }
  out << "Standard options:\n";
  list(true);
  out << '\n';
  if (print_command_line) out << "Command line was: " << CommandLine() << '\n';
  const std::string text = out.str();
  std::cerr.write(text.data(), static_cast<std::streamsize>(text.size()));
  std::cerr.flush();
}

TABLIO_IMPL void ParseOptions::PrintConfig(std::ostream& os) const {
  os << "\n[[ Configuration of UI-Registered options ]]\n";
  for (const auto& entry : options_) {
    os << entry.second.name << " = ";
    std::visit(
        [&](auto* p) {
          using T = std::remove_pointer_t<decltype(p)>;
          if constexpr (std::same_as<T, bool>)
            os << (*p ? "true" : "false");
          else if constexpr (std::same_as<T, std::string>)
            os << '\'' << *p << '\'';
          else
            os << *p;
        },
        entry.second.value);
    os << '\n';
  }
  os << '\n';
}

TABLIO_IMPL void ParseOptions::ReadConfigFile(const std::string& filename) {
  // A plain file, as Kaldi's: not standard input, a pipe or a remote object.
  if (classify_rxfilename(filename) != input_kind::file) KALDI_ERR << "Cannot open config file: " << filename;
  std::vector<std::string> lines;
  try {
    reader in = open_input(filename);
    std::string line;
    while (in.read_line(line)) lines.push_back(line);
    in.close();
  } catch (const tablio::error& e) {
    KALDI_ERR << "Cannot open config file: " << filename << ": " << e.what();
  }

  std::string key, value;
  bool has_equal_sign = false;
  for (std::size_t n = 0; n < lines.size(); ++n) {
    std::string line = lines[n];
    if (const std::size_t hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    Trim(&line);
    if (line.empty()) continue;
    if (!line.starts_with("--"))
      KALDI_ERR << "Reading config file " << filename << ": line " << n + 1
                << " is not an option of the form "
                << "--name=value: \"" << line << "\" (a config file for shell scripts, without the '--', "
                << "is not one for Kaldi's programs)";
    // A --config line sets the option's string and is not followed, as in Kaldi.
    SplitLongArg(line, &key, &value, &has_equal_sign);
    if (!SetOption(key, value, has_equal_sign)) {
      PrintUsage(true);
      KALDI_ERR << "Invalid option " << line << " in config file " << filename;
    }
  }
}

TABLIO_IMPL std::string ParseOptions::Escape(const std::string& str) { return detail::EscapeForShell(str); }

TABLIO_IMPL void ParseOptions::SplitLongArg(std::string_view arg, std::string* key, std::string* value,
                                            bool* has_equal_sign) const {
  const std::size_t equal = arg.find('=');
  if (equal == 2) {
    PrintUsage(true);
    KALDI_ERR << "Invalid option (no key): " << arg;
  }
  *has_equal_sign = equal != std::string_view::npos;
  *key = detail::NormalizeOptionName(arg.substr(2, *has_equal_sign ? equal - 2 : std::string_view::npos));
  *value = *has_equal_sign ? std::string(arg.substr(equal + 1)) : std::string();
  Trim(value);
}

TABLIO_IMPL bool ParseOptions::SetOption(const std::string& key, const std::string& value,
                                         bool has_equal_sign) {
  const auto found = options_.find(key);
  if (found == options_.end()) return false;
  std::visit(
      [&](auto* p) {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::same_as<T, bool>) {
          // --name alone is --name=true; --name= is no value at all.
          const std::string lower = detail::NormalizeOptionName(value);
          if (!has_equal_sign || lower == "true" || lower == "t" || lower == "1")
            *p = true;
          else if (lower == "false" || lower == "f" || lower == "0")
            *p = false;
          else
            BadValue(key, value, has_equal_sign, "true or false");
        } else if constexpr (std::same_as<T, std::string>) {
          if (!has_equal_sign) BadValue(key, value, has_equal_sign, "a string");
          *p = value;
        } else if constexpr (std::same_as<T, float> || std::same_as<T, double>) {
          if (!has_equal_sign || !ConvertStringToReal(value, p))
            BadValue(key, value, has_equal_sign, "a number");
        } else {
          T parsed = 0;
          if (!has_equal_sign || !ConvertStringToInteger(value, &parsed))
            BadValue(key, value, has_equal_sign,
                     std::same_as<T, uint32> ? "a non-negative integer" : "an integer");
          // The verbose level is read by other threads: it is set atomically.
          if constexpr (std::same_as<T, int32>) {
            if (p == &detail::verbose_level) return SetVerboseLevel(parsed);
          }
          *p = parsed;
        }
      },
      found->second.value);
  return true;
}

TABLIO_IMPL void ParseOptions::BadValue(const std::string& key, const std::string& value, bool has_equal_sign,
                                        const char* expected) const {
  PrintUsage(true);
  if (!has_equal_sign) KALDI_ERR << "Invalid option --" << key << ": it needs a value (--" << key << "=...)";
  KALDI_ERR << "Invalid option --" << key << "=" << value << ": expected " << expected;
}

TABLIO_IMPL std::string ParseOptions::CommandLine() const {
  std::string line;
  for (const std::string& arg : args_) line += Escape(arg) + ' ';
  return line;
}

}  // namespace kaldi

TABLIO_END_NAMESPACE
#endif  // TABLIO_HEADER_IMPLEMENTATION

// The Kaldi facade's utilities around tables: logging (KALDI_LOG and its kin, KaldiFatalError,
// SetLogHandler), ParseOptions with config files, and the text utilities of util/text-utils.h.
#include <tablio/kaldi.hpp>
#include <tablio/kaldi/logging.hpp>
#include <tablio/kaldi/options.hpp>
#include <tablio/kaldi/text.hpp>

#include <cmath>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "test_support.hpp"

namespace kaldi = tablio::kaldi;

namespace {

using test::CerrCapture;

// ----- helpers

// Restores the process-wide logging state (handler, verbose level, program name) at its end.
struct LoggingState {
  kaldi::LogHandler handler = kaldi::SetLogHandler(nullptr);
  kaldi::int32 verbose = kaldi::GetVerboseLevel();
  std::string program = kaldi::GetProgramName();
  LoggingState() {
    kaldi::SetLogHandler(handler);
    kaldi::SetVerboseLevel(0);
    kaldi::SetProgramName("");
  }
  ~LoggingState() {
    kaldi::SetLogHandler(handler);
    kaldi::SetVerboseLevel(verbose);
    kaldi::SetProgramName(program.c_str());
  }
  LoggingState(const LoggingState&) = delete;
  LoggingState& operator=(const LoggingState&) = delete;
};

// A message as a LogHandler received it.
struct Logged {
  int severity;
  std::string func, file;
  kaldi::int32 line;
  std::string message;
};
std::vector<Logged> logged;

void Record(const kaldi::LogMessageEnvelope& e, const char* message) {
  logged.push_back({e.severity, e.func, e.file, e.line, message});
}

// What a handler throws to leave a failed assertion without aborting (a [[noreturn]] function
// may end with an exception).
struct AssertionSeen {};

void RecordAndLeaveAssertions(const kaldi::LogMessageEnvelope& e, const char* message) {
  Record(e, message);
  if (e.severity == kaldi::LogMessageEnvelope::kAssertFailed) throw AssertionSeen{};
}

// Installs Record for its lifetime, on a fresh list.
struct Recording {
  LoggingState state;
  explicit Recording(kaldi::LogHandler handler = &Record) {
    logged.clear();
    kaldi::SetLogHandler(handler);
  }
};

// The KaldiMessage() of the KaldiFatalError f throws; "(no error)" when it throws none.
template <class F>
std::string ErrorOf(F&& f) {
  try {
    f();
  } catch (const kaldi::KaldiFatalError& e) {
    CHECK(std::string(e.what()) == "kaldi::KaldiFatalError");
    return e.KaldiMessage();
  }
  return "(no error)";
}

// A command line, argv-style.
struct Args {
  std::vector<std::string> strings;
  std::vector<const char*> pointers;
  Args(std::initializer_list<const char*> args) : strings(args.begin(), args.end()) {
    for (const std::string& s : strings) pointers.push_back(s.c_str());
    pointers.push_back(nullptr);
  }
  int argc() const { return static_cast<int>(strings.size()); }
  const char* const* argv() const { return pointers.data(); }
};

// Reads args with po, what it prints to stderr going to *printed (when given).
int ReadArgs(kaldi::ParseOptions& po, const Args& args, std::string* printed = nullptr) {
  CerrCapture capture;
  struct Keep {
    CerrCapture& capture;
    std::string* printed;
    ~Keep() {
      if (printed) *printed = capture.str();
    }
  } keep{capture, printed};
  return po.Read(args.argc(), args.argv());
}

const std::string kVersion = "tablio-" + std::to_string(TABLIO_VERSION_MAJOR) + "." +
                             std::to_string(TABLIO_VERSION_MINOR) + "." +
                             std::to_string(TABLIO_VERSION_PATCH);

// Functions with known names, for the func() part of messages; each returns its macro's line.
int LogLine() {
  KALDI_LOG << "a " << 3;
  return __LINE__ - 1;
}
int WarnLine() {
  KALDI_WARN << "careful\n\n";  // trailing newlines are dropped
  return __LINE__ - 1;
}
int VlogLine() {
  KALDI_VLOG(2) << "detail " << 2.5;
  return __LINE__ - 1;
}
int ErrLine() { KALDI_ERR << "broken " << 7; }
int AssertLine() {
  KALDI_ASSERT(1 + 1 == 3 && "arithmetic");
  return __LINE__ - 1;
}

// A config struct written Kaldi's way.
struct FrameOptions {
  kaldi::int32 frame_length = 25;
  bool snip_edges = true;
  std::string window = "povey";
  void Register(kaldi::OptionsItf* opts) {
    opts->Register("frame-length", &frame_length, "Frame length in milliseconds");
    opts->Register("snip-edges", &snip_edges, "Whether to snip the edges");
    opts->Register("window-type", &window, "Window type");
  }
};

struct NoCopies {
  NoCopies() = default;
  KALDI_DISALLOW_COPY_AND_ASSIGN(NoCopies);
};

}  // namespace

// ----- logging

TEST_CASE("kaldi logging: a handler receives each message with its envelope", "[kaldi][logging]") {
  Recording recording;
  const int log_line = LogLine();
  const int warn_line = WarnLine();
  REQUIRE(logged.size() == 2);
  CHECK(logged[0].severity == kaldi::LogMessageEnvelope::kInfo);
  CHECK(logged[0].func == "LogLine");
  CHECK(logged[0].file == "test_kaldi_utilities.cpp");
  CHECK(logged[0].line == log_line);
  CHECK(logged[0].message == "a 3");
  CHECK(logged[1].severity == kaldi::LogMessageEnvelope::kWarning);
  CHECK(logged[1].func == "WarnLine");
  CHECK(logged[1].line == warn_line);
  CHECK(logged[1].message == "careful");

  // SetLogHandler returns the handler it replaces.
  CHECK(kaldi::SetLogHandler(nullptr) == &Record);
  CHECK(kaldi::SetLogHandler(&Record) == nullptr);
}

TEST_CASE("kaldi logging: Kaldi's format on std::cerr", "[kaldi][logging]") {
  LoggingState state;
  const std::string where = ":test_kaldi_utilities.cpp:";
  {
    CerrCapture capture;
    const int line = LogLine();
    CHECK(capture.str() == "LOG (LogLine()" + where + std::to_string(line) + ") a 3\n");
  }
  kaldi::SetProgramName("copy-feats");
  CHECK(kaldi::GetProgramName() == "copy-feats");
  const std::string prog = "copy-feats[" + kVersion + "]:";
  {
    CerrCapture capture;
    const int line = LogLine();
    CHECK(capture.str() == "LOG (" + prog + "LogLine()" + where + std::to_string(line) + ") a 3\n");
  }
  {
    CerrCapture capture;
    const int line = WarnLine();
    CHECK(capture.str() == "WARNING (" + prog + "WarnLine()" + where + std::to_string(line) + ") careful\n");
  }
  {
    CerrCapture capture;
    kaldi::SetVerboseLevel(2);
    const int line = VlogLine();
    CHECK(capture.str() ==
          "VLOG[2] (" + prog + "VlogLine()" + where + std::to_string(line) + ") detail 2.5\n");
  }
  {
    CerrCapture capture;
    CHECK(ErrorOf(ErrLine) == "broken 7");
    const std::string text = capture.str();
    CHECK(text.starts_with("ERROR (" + prog + "ErrLine()" + where));
    CHECK(text.ends_with(") broken 7\n\n"));  // a blank line where Kaldi prints a stack trace
  }
  {
    // What a failed assertion prints before it aborts.
    CerrCapture capture;
    kaldi::detail::SendToLog({kaldi::LogMessageEnvelope::kAssertFailed, "f", "a.cc", 12},
                             "Assertion failed: (x)");
    CHECK(capture.str() == "ASSERTION_FAILED (" + prog + "f():a.cc:12) Assertion failed: (x)\n");
  }
  {
    // Directories are dropped from the file name, '/' or '\\'.
    Recording recording;
    kaldi::detail::MessageSender() & kaldi::detail::MessageLogger(0, "g", "C:\\src\\dir/x.cc", 1) << "m";
    REQUIRE(logged.size() == 1);
    CHECK(logged[0].file == "x.cc");
  }
}

TEST_CASE("kaldi logging: KALDI_ERR throws KaldiFatalError at the end of the statement", "[kaldi][logging]") {
  Recording recording;
  int evaluated = 0;
  auto count = [&] { return ++evaluated; };
  const std::string message = ErrorOf([&] { KALDI_ERR << "first " << count() << " second " << count(); });
  CHECK(message == "first 1 second 2");
  CHECK(evaluated == 2);
  // The handler got the message, and the error was thrown all the same.
  REQUIRE(logged.size() == 1);
  CHECK(logged[0].severity == kaldi::LogMessageEnvelope::kError);
  CHECK(logged[0].message == "first 1 second 2");

  kaldi::KaldiFatalError e("a message");
  CHECK(std::string(e.what()) == "kaldi::KaldiFatalError");
  CHECK(std::string(e.KaldiMessage()) == "a message");
  const kaldi::KaldiFatalError copy = e;
  CHECK(std::string(copy.KaldiMessage()) == "a message");
  STATIC_REQUIRE(std::is_nothrow_copy_constructible_v<kaldi::KaldiFatalError>);
  STATIC_REQUIRE(std::is_base_of_v<std::runtime_error, kaldi::KaldiFatalError>);
  // Caught as what Kaldi's programs catch.
  bool caught = false;
  try {
    ErrLine();
  } catch (const std::exception& error) {
    caught = std::string(error.what()) == "kaldi::KaldiFatalError";
  }
  CHECK(caught);
}

TEST_CASE("kaldi logging: the macros are single expressions", "[kaldi][logging]") {
  Recording recording;
  bool in_else = false;
  if (false)
    KALDI_WARN << "not this";
  else
    in_else = true;
  CHECK(in_else);
  in_else = false;
  kaldi::SetVerboseLevel(5);
  if (false)
    KALDI_VLOG(1) << "not this";
  else
    in_else = true;
  CHECK(in_else);
  if (true)
    KALDI_LOG << "this";
  else
    in_else = false;
  CHECK(in_else);
  REQUIRE(logged.size() == 1);
  CHECK(logged[0].message == "this");
  // Manipulators pass through.
  KALDI_LOG << std::hex << 255 << std::endl;
  CHECK(logged.back().message == "ff");
}

TEST_CASE("kaldi logging: KALDI_VLOG shows up to the verbose level", "[kaldi][logging]") {
  Recording recording;
  int evaluated = 0;
  auto count = [&] { return ++evaluated; };
  CHECK(kaldi::GetVerboseLevel() == 0);
  KALDI_VLOG(1) << count();
  CHECK(logged.empty());
  CHECK(evaluated == 0);  // a message not shown is not built
  kaldi::SetVerboseLevel(2);
  CHECK(kaldi::GetVerboseLevel() == 2);
  KALDI_VLOG(1) << "one " << count();
  KALDI_VLOG(2) << "two";
  KALDI_VLOG(3) << "three " << count();
  REQUIRE(logged.size() == 2);
  CHECK(logged[0].severity == 1);
  CHECK(logged[0].message == "one 1");
  CHECK(logged[1].severity == 2);
  CHECK(evaluated == 1);
}

TEST_CASE("kaldi logging: KALDI_ASSERT", "[kaldi][logging]") {
  Recording recording(&RecordAndLeaveAssertions);
  KALDI_ASSERT(1 + 1 == 2);
  KALDI_PARANOID_ASSERT(false);  // not evaluated without KALDI_PARANOID
  CHECK(logged.empty());
  int line = 0;
  CHECK_THROWS_AS(line = AssertLine(), AssertionSeen);
  REQUIRE(logged.size() == 1);
  CHECK(logged[0].severity == kaldi::LogMessageEnvelope::kAssertFailed);
  CHECK(logged[0].func == "AssertLine");
  CHECK(logged[0].message == "Assertion failed: (1 + 1 == 3 && \"arithmetic\")");
  CHECK(line == 0);
}

TEST_CASE("kaldi logging: compile-time helpers", "[kaldi][logging]") {
  KALDI_COMPILE_TIME_ASSERT(sizeof(kaldi::int32) == 4);
  KALDI_ASSERT_IS_INTEGER_TYPE(kaldi::int64);
  KALDI_ASSERT_IS_FLOATING_TYPE(kaldi::BaseFloat);
  STATIC_REQUIRE(!std::is_copy_constructible_v<NoCopies>);
  STATIC_REQUIRE(!std::is_copy_assignable_v<NoCopies>);
  CHECK(KALDI_STRCASECMP("Hello", "hELLO") == 0);
  CHECK(KALDI_STRCASECMP("abc", "ABD") < 0);
  CHECK(KALDI_STRCASECMP("abcd", "ABC") > 0);
}

// ----- ParseOptions

TEST_CASE("kaldi ParseOptions: every type, and positional arguments", "[kaldi][options]") {
  LoggingState state;
  kaldi::ParseOptions po("Usage: prog [options] <in> <out>\n");
  bool binary = false;
  kaldi::int32 n = 0;
  kaldi::uint32 u = 0;
  float f = 0;
  double d = 0;
  std::string s = "x";
  po.Register("binary", &binary, "Binary output");
  po.Register("n", &n, "Count");
  po.Register("u", &u, "Unsigned count");
  po.Register("f", &f, "Scale");
  po.Register("d", &d, "Offset");
  po.Register("s", &s, "Name");
  const int first = ReadArgs(po, {"/usr/local/bin/prog", "--binary", "--n=-12", "--u=4000000000", "--f=0.25",
                                  "--d=-1e-3", "--s=a b", "--print-args=false", "ark:in.ark", "ark,t:-"});
  CHECK(first == 8);
  CHECK(binary);
  CHECK(n == -12);
  CHECK(u == 4000000000u);
  CHECK(f == 0.25f);
  CHECK(d == -1e-3);
  CHECK(s == "a b");
  REQUIRE(po.NumArgs() == 2);
  CHECK(po.GetArg(1) == "ark:in.ark");
  CHECK(po.GetArg(2) == "ark,t:-");
  CHECK(po.GetOptArg(2) == "ark,t:-");
  CHECK(po.GetOptArg(3).empty());
  CHECK(po.GetOptArg(0).empty());
  {
    CerrCapture capture;  // the ERROR lines
    CHECK(ErrorOf([&] { po.GetArg(3); }).starts_with("ParseOptions::GetArg, invalid index 3"));
    CHECK(ErrorOf([&] { po.GetArg(0); }).starts_with("ParseOptions::GetArg, invalid index 0"));
  }
  // The program name is argv[0]'s last part.
  CHECK(kaldi::GetProgramName() == "prog");
}

TEST_CASE("kaldi ParseOptions: Read takes main's char* argv", "[kaldi][options]") {
  LoggingState state;
  kaldi::ParseOptions po("usage");
  kaldi::int32 n = 0;
  po.Register("n", &n, "Count");
  char arg0[] = "C:\\kaldi\\bin\\prog.exe", arg1[] = "--n=3", arg2[] = "--print-args=f", arg3[] = "x";
  char* argv[] = {arg0, arg1, arg2, arg3, nullptr};
  CerrCapture capture;
  po.Read(4, argv);
  CHECK(n == 3);
  CHECK(po.NumArgs() == 1);
  CHECK(kaldi::GetProgramName() == "prog.exe");
  CHECK(capture.str().empty());
}

TEST_CASE("kaldi ParseOptions: bool forms", "[kaldi][options]") {
  LoggingState state;
  for (auto [arg, expected] : std::vector<std::pair<const char*, bool>>{{"--flag", true},
                                                                        {"--flag=true", true},
                                                                        {"--flag=false", false},
                                                                        {"--flag=t", true},
                                                                        {"--flag=f", false},
                                                                        {"--flag=1", true},
                                                                        {"--flag=0", false},
                                                                        {"--flag=TRUE", true},
                                                                        {"--flag= False ", false}}) {
    kaldi::ParseOptions po("usage");
    bool flag = !expected;
    po.Register("flag", &flag, "A flag");
    ReadArgs(po, {"prog", "--print-args=false", arg});
    CHECK(flag == expected);
  }
  for (const char* bad : {"--flag=", "--flag=yes", "--flag=2"}) {
    kaldi::ParseOptions po("usage");
    bool flag = false;
    po.Register("flag", &flag, "A flag");
    std::string printed;
    const std::string error = ErrorOf([&] { ReadArgs(po, {"prog", bad}, &printed); });
    CHECK(error.starts_with("Invalid option --flag"));
    CHECK(printed.find("Command line was: prog " + kaldi::ParseOptions::Escape(bad)) != std::string::npos);
  }
}

TEST_CASE("kaldi ParseOptions: names are normalized", "[kaldi][options]") {
  LoggingState state;
  kaldi::ParseOptions po("usage");
  kaldi::int32 a = 0, b = 0;
  po.Register("max_active", &a, "A");
  po.Register("Beam-Width", &b, "B");
  ReadArgs(po, {"prog", "--MAX-ACTIVE=7", "--beam_width=9", "--Print_Args=false"});
  CHECK(a == 7);
  CHECK(b == 9);
}

TEST_CASE("kaldi ParseOptions: where options end", "[kaldi][options]") {
  LoggingState state;
  auto positional = [](kaldi::ParseOptions& po) {
    std::vector<std::string> args;
    for (int i = 1; i <= po.NumArgs(); ++i) args.push_back(po.GetArg(i));
    return args;
  };
  {
    kaldi::ParseOptions po("usage");
    kaldi::int32 x = 0;
    po.Register("x", &x, "X");
    // A lone "--" ends the options and is dropped.
    CHECK(ReadArgs(po, {"prog", "--print-args=false", "--x=1", "--", "--x=2", "a"}) == 4);
    CHECK(x == 1);
    CHECK(positional(po) == std::vector<std::string>{"--x=2", "a"});
  }
  {
    kaldi::ParseOptions po("usage");
    kaldi::int32 x = 0;
    po.Register("x", &x, "X");
    // The first argument that is not an option ends them: the rest are positional.
    ReadArgs(po, {"prog", "--print-args=false", "a", "--x=2", "b"});
    CHECK(x == 0);
    CHECK(positional(po) == std::vector<std::string>{"a", "--x=2", "b"});
  }
  {
    kaldi::ParseOptions po("usage");
    // The first lone "--" among the positional arguments is dropped, a second one kept.
    ReadArgs(po, {"prog", "--print-args=false", "a", "--", "b", "--", "c"});
    CHECK(positional(po) == std::vector<std::string>{"a", "b", "--", "c"});
  }
  {
    kaldi::ParseOptions po("usage");
    ReadArgs(po, {"prog", "--print-args=false", "--", "-", "--"});
    CHECK(positional(po) == std::vector<std::string>{"-", "--"});
  }
  {
    kaldi::ParseOptions po("usage");
    ReadArgs(po, {"prog", "--print-args=false"});
    CHECK(po.NumArgs() == 0);
  }
}

TEST_CASE("kaldi ParseOptions: errors", "[kaldi][options]") {
  LoggingState state;
  auto error = [](std::initializer_list<const char*> args, std::string* printed = nullptr) {
    kaldi::ParseOptions po("Usage: prog\n");
    kaldi::int32 n = 0;
    kaldi::uint32 u = 0;
    float f = 0;
    double d = 0;
    std::string s;
    po.Register("n", &n, "N");
    po.Register("u", &u, "U");
    po.Register("f", &f, "F");
    po.Register("d", &d, "D");
    po.Register("s", &s, "S");
    return ErrorOf([&] { ReadArgs(po, Args(args), printed); });
  };
  std::string printed;
  CHECK(error({"prog", "--nope=1", "a"}, &printed) == "Invalid option --nope=1");
  // The usage and the command line were printed first, then the ERROR line.
  CHECK(printed.starts_with("\nUsage: prog\n\nOptions:\n"));
  CHECK(printed.find("Command line was: prog --nope=1 a \n") != std::string::npos);
  CHECK(printed.find("ERROR (prog[") != std::string::npos);

  CHECK(error({"prog", "--=1"}) == "Invalid option (no key): --=1");
  CHECK(error({"prog", "--n=abc"}) == "Invalid option --n=abc: expected an integer");
  CHECK(error({"prog", "--n=1.5"}) == "Invalid option --n=1.5: expected an integer");
  CHECK(error({"prog", "--n=3000000000"}) == "Invalid option --n=3000000000: expected an integer");
  CHECK(error({"prog", "--n=0x10"}) == "Invalid option --n=0x10: expected an integer");
  CHECK(error({"prog", "--n="}) == "Invalid option --n=: expected an integer");
  CHECK(error({"prog", "--n"}) == "Invalid option --n: it needs a value (--n=...)");
  CHECK(error({"prog", "--u=-1"}) == "Invalid option --u=-1: expected a non-negative integer");
  CHECK(error({"prog", "--f=1e400"}) == "Invalid option --f=1e400: expected a number");
  CHECK(error({"prog", "--f=1e40"}) == "Invalid option --f=1e40: expected a number");  // too large for float
  CHECK(error({"prog", "--d=1e40"}) == "(no error)");
  CHECK(error({"prog", "--d=2.5x"}) == "Invalid option --d=2.5x: expected a number");
  CHECK(error({"prog", "--s"}) == "Invalid option --s: it needs a value (--s=...)");
  CHECK(error({"prog", "--print-args=false", "--s="}) == "(no error)");
  CHECK(error({"prog", "--verbose=high"}) == "Invalid option --verbose=high: expected an integer");
}

TEST_CASE("kaldi ParseOptions: values are trimmed; numbers in every form", "[kaldi][options]") {
  LoggingState state;
  kaldi::ParseOptions po("usage");
  kaldi::int32 n = 0;
  float f = 0, g = 0;
  double d = 0;
  std::string s = "default", t = "default";
  po.Register("n", &n, "N");
  po.Register("f", &f, "F");
  po.Register("g", &g, "G");
  po.Register("d", &d, "D");
  po.Register("s", &s, "S");
  po.Register("t", &t, "T");
  ReadArgs(po, {"prog", "--print-args=false", "--n= +42 ", "--f=-inf", "--g=nan", "--d=1.5e300",
                "--s=", "--t=  spaced  value "});
  CHECK(n == 42);
  CHECK(std::isinf(f));
  CHECK(f < 0);
  CHECK(std::isnan(g));
  CHECK(d == 1.5e300);
  CHECK(s.empty());
  CHECK(t == "spaced  value");
}

TEST_CASE("kaldi ParseOptions: --verbose sets the verbose level", "[kaldi][options]") {
  LoggingState state;
  kaldi::ParseOptions po("usage");
  ReadArgs(po, {"prog", "--verbose=3", "--print-args=false"});
  CHECK(kaldi::GetVerboseLevel() == 3);
}

TEST_CASE("kaldi ParseOptions: --print-args", "[kaldi][options]") {
  LoggingState state;
  {
    kaldi::ParseOptions po("usage");
    std::string printed;
    ReadArgs(po, {"/bin/prog", "--verbose=0", "a b", "it's", "ark:-", ""}, &printed);
    CHECK(printed == "/bin/prog --verbose=0 'a b' \"it's\" ark:- '' \n");
  }
  {
    kaldi::ParseOptions po("usage");
    std::string printed;
    ReadArgs(po, {"prog", "--print-args=false", "x"}, &printed);
    CHECK(printed.empty());
  }
}

TEST_CASE("kaldi ParseOptions: Escape", "[kaldi][options]") {
  using kaldi::ParseOptions;
  CHECK(ParseOptions::Escape("abc") == "abc");
  CHECK(ParseOptions::Escape("ark,t:foo/bar.ark") == "ark,t:foo/bar.ark");
  CHECK(ParseOptions::Escape("--a=b+c@d%e^f_g-h") == "--a=b+c@d%e^f_g-h");
  CHECK(ParseOptions::Escape("") == "''");
  CHECK(ParseOptions::Escape("a b") == "'a b'");
  CHECK(ParseOptions::Escape("gunzip -c x.gz |") == "'gunzip -c x.gz |'");
  CHECK(ParseOptions::Escape("$HOME") == "'$HOME'");
  CHECK(ParseOptions::Escape("a*b") == "'a*b'");
  CHECK(ParseOptions::Escape("x[1]") == "'x[1]'");
  CHECK(ParseOptions::Escape("~/x") == "'~/x'");
  CHECK(ParseOptions::Escape("#x") == "'#x'");
  CHECK(ParseOptions::Escape("it's") == "\"it's\"");
  CHECK(ParseOptions::Escape("it's \"$x\" `y` \\z") == "\"it's \\\"\\$x\\\" \\`y\\` \\\\z\"");
  // With '!', which bash expands inside double quotes, the single quote is written '\''.
  CHECK(ParseOptions::Escape("it's!") == "'it'\\''s!'");
  CHECK(ParseOptions::Escape("wow!") == "'wow!'");
  CHECK(ParseOptions::Escape("caf\xc3\xa9") == "'caf\xc3\xa9'");
  CHECK(kaldi::detail::EscapeForShell("a b") == "'a b'");
}

TEST_CASE("kaldi ParseOptions: PrintUsage in Kaldi's format", "[kaldi][options]") {
  LoggingState state;
  kaldi::ParseOptions po("Copy things\nUsage: prog [options] <in> <out>\n");
  bool binary = true;
  kaldi::int32 num = -3;
  kaldi::uint32 count = 7;
  float scale = 0.5f;
  double offset = 1e-5;
  std::string name, kind = "povey";
  po.Register("binary", &binary, "Binary-mode output");
  po.Register("num_frames", &num, "Frames to keep");
  po.Register("count", &count, "How many");
  po.Register("scale", &scale, "Scale");
  po.Register("offset", &offset, "Offset");
  po.Register("name", &name, "Name");
  po.Register("kind", &kind, "Kind");
  binary = false;  // defaults are the values at registration
  const std::string expected =
      "\n"
      "Copy things\n"
      "Usage: prog [options] <in> <out>\n"
      "\n"
      "Options:\n"
      "  --binary                    : Binary-mode output (bool, default = true)\n"
      "  --count                     : How many (uint, default = 7)\n"
      "  --kind                      : Kind (string, default = \"povey\")\n"
      "  --name                      : Name (string, default = \"\")\n"
      "  --num_frames                : Frames to keep (int, default = -3)\n"
      "  --offset                    : Offset (double, default = 1e-05)\n"
      "  --scale                     : Scale (float, default = 0.5)\n"
      "\n"
      "Standard options:\n"
      "  --config                    : Configuration file to read (this option may be repeated) "
      "(string, default = \"\")\n"
      "  --help                      : Print out usage message (bool, default = false)\n"
      "  --print-args                : Print the command line arguments (to stderr) (bool, default = true)\n"
      "  --verbose                   : Verbose level (higher->more logging) (int, default = 0)\n"
      "\n";
  {
    CerrCapture capture;
    po.PrintUsage();
    CHECK(capture.str() == expected);
  }
  ReadArgs(po, {"prog", "--print-args=false", "--scale=2", "a b"});
  {
    CerrCapture capture;
    po.PrintUsage(true);
    CHECK(capture.str() == expected + "Command line was: prog --print-args=false --scale=2 'a b' \n");
  }
  // A parser with only the standard options prints no "Options:".
  kaldi::ParseOptions bare("usage");
  CerrCapture capture;
  bare.PrintUsage();
  CHECK(capture.str().starts_with("\nusage\nStandard options:\n  --config "));
  // std::cerr keeps its formatting: the padding was done elsewhere.
  CHECK((std::cerr.flags() & std::ios::left) == 0);
}

TEST_CASE("kaldi ParseOptions: PrintConfig", "[kaldi][options]") {
  LoggingState state;
  kaldi::ParseOptions po("usage");
  bool b = true;
  std::string s = "x y";
  float f = 1.5f;
  po.Register("b", &b, "B");
  po.Register("s", &s, "S");
  po.Register("f", &f, "F");
  std::ostringstream out;
  po.PrintConfig(out);
  CHECK(out.str() ==
        "\n[[ Configuration of UI-Registered options ]]\n"
        "b = true\nconfig = ''\nf = 1.5\nhelp = false\nprint-args = true\ns = 'x y'\nverbose = 0\n\n");
}

TEST_CASE("kaldi ParseOptions: config files", "[kaldi][options]") {
  LoggingState state;
  test::temp_dir dir;
  const std::string conf = dir / "mfcc.conf";
  test::write_file(conf,
                   "# MFCC options\n"
                   "\n"
                   "--num-ceps=13   # a comment after the option\n"
                   "  --use_energy=false\r\n"
                   "--sample-frequency=8000 \n"
                   "--window-type=hamming\n"
                   "--config=does-not-exist.conf\n"
                   "   \t\n"
                   "--frame-length=20");
  auto make = [](kaldi::ParseOptions& po, kaldi::int32& ceps, bool& energy, float& freq,
                 FrameOptions& frame) {
    po.Register("num-ceps", &ceps, "Cepstra");
    po.Register("use-energy", &energy, "Energy");
    po.Register("sample-frequency", &freq, "Hz");
    frame.Register(&po);
  };
  {
    kaldi::ParseOptions po("usage");
    kaldi::int32 ceps = 0;
    bool energy = true;
    float freq = 16000;
    FrameOptions frame;
    make(po, ceps, energy, freq, frame);
    // The config file is read first, whatever its place: the command line overrides it.
    ReadArgs(po, {"prog", "--print-args=false", "--num-ceps=20", ("--config=" + conf).c_str(), "x"});
    CHECK(ceps == 20);
    CHECK_FALSE(energy);
    CHECK(freq == 8000);
    CHECK(frame.window == "hamming");
    CHECK(frame.frame_length == 20);
    CHECK(frame.snip_edges);
    CHECK(po.NumArgs() == 1);
  }
  {
    // ReadConfigFile on its own; a --config line only sets the option's string.
    kaldi::ParseOptions po("usage");
    kaldi::int32 ceps = 0;
    bool energy = true;
    float freq = 16000;
    FrameOptions frame;
    make(po, ceps, energy, freq, frame);
    po.ReadConfigFile(conf);
    CHECK(ceps == 13);
    std::ostringstream config;
    po.PrintConfig(config);
    CHECK(config.str().find("config = 'does-not-exist.conf'") != std::string::npos);
  }
  {
    // Two config files are read in order, the later overriding the earlier.
    const std::string second = dir / "second.conf";
    test::write_file(second, "--num-ceps=40\n");
    kaldi::ParseOptions po("usage");
    kaldi::int32 ceps = 0;
    bool energy = true;
    float freq = 16000;
    FrameOptions frame;
    make(po, ceps, energy, freq, frame);
    ReadArgs(po,
             {"prog", "--print-args=false", ("--config=" + conf).c_str(), ("--config=" + second).c_str()});
    CHECK(ceps == 40);
  }
  {
    const std::string bad = dir / "bad.conf";
    test::write_file(bad, "# fine\n--num-ceps=3\nnum-ceps=4\n");
    kaldi::ParseOptions po("usage");
    kaldi::int32 ceps = 0;
    po.Register("num-ceps", &ceps, "Cepstra");
    const std::string error = ErrorOf([&] { ReadArgs(po, {"prog", ("--config=" + bad).c_str()}); });
    CHECK(error.starts_with("Reading config file " + bad + ": line 3 is not an option"));
    CHECK(error.find("\"num-ceps=4\"") != std::string::npos);
  }
  {
    const std::string unknown = dir / "unknown.conf";
    test::write_file(unknown, "--no-such-option=1\n");
    kaldi::ParseOptions po("usage");
    const std::string error = ErrorOf([&] { ReadArgs(po, {"prog", ("--config=" + unknown).c_str()}); });
    CHECK(error == "Invalid option --no-such-option=1 in config file " + unknown);
  }
  {
    kaldi::ParseOptions po("usage");
    CerrCapture capture;  // the ERROR lines
    const std::string missing = dir / "missing.conf";
    CHECK(ErrorOf([&] { po.ReadConfigFile(missing); }).starts_with("Cannot open config file: " + missing));
    CHECK(ErrorOf([&] { po.ReadConfigFile("-"); }) == "Cannot open config file: -");
    CHECK(ErrorOf([&] { po.ReadConfigFile("cat x |"); }) == "Cannot open config file: cat x |");
  }
}

TEST_CASE("kaldi ParseOptions: options with a prefix", "[kaldi][options]") {
  LoggingState state;
  kaldi::ParseOptions po("usage");
  FrameOptions plain, prefixed, nested;
  plain.Register(&po);
  kaldi::ParseOptions with_prefix("mfcc", &po);
  prefixed.Register(&with_prefix);
  kaldi::ParseOptions deeper("frame", &with_prefix);
  nested.Register(&deeper);
  ReadArgs(po,
           {"prog", "--print-args=false", "--frame-length=10", "--mfcc.frame-length=30", "--mfcc.snip-edges",
            "--mfcc.snip-edges=false", "--frame.mfcc.window-type=rectangular", "--mfcc.window_type=hann"});
  CHECK(plain.frame_length == 10);
  CHECK(prefixed.frame_length == 30);
  CHECK_FALSE(prefixed.snip_edges);
  CHECK(prefixed.window == "hann");
  // Kaldi's order for a prefix of a prefix: the inner one first.
  CHECK(nested.window == "rectangular");
  CHECK(nested.frame_length == 25);
  // The usage lists them as registered.
  CerrCapture capture;
  po.PrintUsage();
  CHECK(capture.str().find(
            "  --mfcc.frame-length         : Frame length in milliseconds (int, default = 25)\n") !=
        std::string::npos);
  CHECK(ErrorOf([&] { kaldi::ParseOptions empty("", &po); }).find("prefix is empty") != std::string::npos);
}

TEST_CASE("kaldi ParseOptions: registering twice, disabling, standard options", "[kaldi][options]") {
  Recording recording;
  kaldi::ParseOptions po("usage");
  kaldi::int32 first = 1, second = 2;
  po.Register("x", &first, "First");
  po.Register("X", &second, "Second");
  REQUIRE(logged.size() == 1);
  CHECK(logged[0].severity == kaldi::LogMessageEnvelope::kWarning);
  CHECK(logged[0].message == "Registering option twice, ignoring second time: X");
  kaldi::int32 gone = 0;
  po.Register("gone", &gone, "Gone");
  po.DisableOption("gone");
  CHECK(ErrorOf([&] { po.DisableOption("never"); }).find("no option --never") != std::string::npos);
  bool extra = false;
  po.RegisterStandard("extra", &extra, "An extra standard option");
  ReadArgs(po, {"prog", "--print-args=false", "--x=5", "--extra"});
  CHECK(first == 5);
  CHECK(second == 2);
  CHECK(extra);
  CHECK(ErrorOf([&] { ReadArgs(po, {"prog", "--gone=1"}); }) == "Invalid option --gone=1");
  CHECK(ErrorOf([&] { po.DisableOption("x"); }).find("after Read") != std::string::npos);
  CerrCapture capture;
  po.PrintUsage();
  const std::string usage = capture.str();
  CHECK(usage.find("--extra") > usage.find("Standard options:"));
}

// ----- text utilities

TEST_CASE("kaldi text: SplitStringToVector and JoinVectorToString", "[kaldi][text]") {
  using V = std::vector<std::string>;
  V out{"stale"};
  kaldi::SplitStringToVector("a,b,,c", ",", false, &out);
  CHECK(out == V{"a", "b", "", "c"});
  kaldi::SplitStringToVector("a,b,,c", ",", true, &out);
  CHECK(out == V{"a", "b", "c"});
  kaldi::SplitStringToVector("", ",", false, &out);
  CHECK(out == V{""});
  kaldi::SplitStringToVector("", ",", true, &out);
  CHECK(out.empty());
  kaldi::SplitStringToVector(",a,", ",", false, &out);
  CHECK(out == V{"", "a", ""});
  kaldi::SplitStringToVector(" one\ttwo  three ", " \t", true, &out);
  CHECK(out == V{"one", "two", "three"});
  kaldi::SplitStringToVector("no delimiter", ",", false, &out);
  CHECK(out == V{"no delimiter"});

  std::string joined = "stale";
  kaldi::JoinVectorToString({"a", "", "b"}, ":", false, &joined);
  CHECK(joined == "a::b");
  kaldi::JoinVectorToString({"a", "", "b", ""}, ", ", true, &joined);
  CHECK(joined == "a, b");
  kaldi::JoinVectorToString({"", ""}, ":", true, &joined);
  CHECK(joined.empty());
  kaldi::JoinVectorToString({"", ""}, ":", false, &joined);
  CHECK(joined == ":");
  kaldi::JoinVectorToString({}, ":", false, &joined);
  CHECK(joined.empty());
}

TEST_CASE("kaldi text: SplitStringToIntegers and SplitStringToFloats", "[kaldi][text]") {
  std::vector<kaldi::int32> ints{9};
  CHECK(kaldi::SplitStringToIntegers("1:-2:3", ":", false, &ints));
  CHECK(ints == std::vector<kaldi::int32>{1, -2, 3});
  CHECK(kaldi::SplitStringToIntegers("", ":", false, &ints));
  CHECK(ints.empty());
  CHECK(kaldi::SplitStringToIntegers(" 1: 2", ":", false, &ints));  // whitespace before a number
  CHECK(ints == std::vector<kaldi::int32>{1, 2});
  CHECK_FALSE(kaldi::SplitStringToIntegers("1 :2", ":", false, &ints));  // but not after
  CHECK(ints.empty());
  CHECK_FALSE(kaldi::SplitStringToIntegers("1::2", ":", false, &ints));
  CHECK(kaldi::SplitStringToIntegers("1::2", ":", true, &ints));
  CHECK(ints == std::vector<kaldi::int32>{1, 2});
  CHECK(kaldi::SplitStringToIntegers(" 4  5 ", " ", true, &ints));
  CHECK(ints == std::vector<kaldi::int32>{4, 5});
  CHECK_FALSE(kaldi::SplitStringToIntegers("1,2.5", ",", false, &ints));
  CHECK_FALSE(kaldi::SplitStringToIntegers("1,x", ",", false, &ints));
  std::vector<kaldi::int8> int8s;
  CHECK(kaldi::SplitStringToIntegers("127,-128", ",", false, &int8s));
  CHECK_FALSE(kaldi::SplitStringToIntegers("127,128", ",", false, &int8s));
  std::vector<kaldi::uint32> unsigned_ints;
  CHECK_FALSE(kaldi::SplitStringToIntegers("1,-1", ",", false, &unsigned_ints));

  std::vector<float> floats;
  CHECK(kaldi::SplitStringToFloats("1.5 2 -3e2", " ", true, &floats));
  CHECK(floats == std::vector<float>{1.5f, 2.0f, -300.0f});
  CHECK(kaldi::SplitStringToFloats("", ",", false, &floats));
  CHECK(floats.empty());
  CHECK_FALSE(kaldi::SplitStringToFloats("1.5,x", ",", false, &floats));
  CHECK(floats.empty());
  CHECK_FALSE(kaldi::SplitStringToFloats("1,,2", ",", false, &floats));
  CHECK_FALSE(kaldi::SplitStringToFloats("1e40", ",", false, &floats));
  std::vector<double> doubles;
  CHECK(kaldi::SplitStringToFloats("1e40, nan ,-inf", ",", false, &doubles));
  REQUIRE(doubles.size() == 3);
  CHECK(doubles[0] == 1e40);
  CHECK(std::isnan(doubles[1]));
  CHECK(doubles[2] == -std::numeric_limits<double>::infinity());
}

TEST_CASE("kaldi text: ConvertStringToInteger", "[kaldi][text]") {
  kaldi::int32 i = 5;
  CHECK(kaldi::ConvertStringToInteger(" 42 ", &i));
  CHECK(i == 42);
  CHECK(kaldi::ConvertStringToInteger("+7", &i));
  CHECK(i == 7);
  CHECK(kaldi::ConvertStringToInteger("-2147483648", &i));
  CHECK(i == std::numeric_limits<kaldi::int32>::min());
  CHECK(kaldi::ConvertStringToInteger("2147483647", &i));
  CHECK(i == std::numeric_limits<kaldi::int32>::max());
  i = 5;
  for (const char* bad : {"", "   ", "2147483648", "-2147483649", "12a", "1 2", "0x10", "1.0", "+-1", "--1",
                          "+", "-", "1e3", "99999999999999999999999"}) {
    INFO(bad);
    CHECK_FALSE(kaldi::ConvertStringToInteger(bad, &i));
    CHECK(i == 5);  // untouched
  }
  kaldi::uint32 u = 0;
  CHECK(kaldi::ConvertStringToInteger("4294967295", &u));
  CHECK(u == 4294967295u);
  CHECK_FALSE(kaldi::ConvertStringToInteger("4294967296", &u));
  CHECK_FALSE(kaldi::ConvertStringToInteger("-1", &u));
  CHECK(kaldi::ConvertStringToInteger("-0", &u));
  CHECK(u == 0);
  kaldi::uint64 big = 0;
  CHECK(kaldi::ConvertStringToInteger("18446744073709551615", &big));
  CHECK(big == std::numeric_limits<kaldi::uint64>::max());
  CHECK_FALSE(kaldi::ConvertStringToInteger("18446744073709551616", &big));
  kaldi::int64 wide = 0;
  CHECK(kaldi::ConvertStringToInteger("-9223372036854775808", &wide));
  CHECK(wide == std::numeric_limits<kaldi::int64>::min());
  CHECK_FALSE(kaldi::ConvertStringToInteger("-9223372036854775809", &wide));
  kaldi::int16 narrow = 0;
  CHECK(kaldi::ConvertStringToInteger("\t-32768\n", &narrow));
  CHECK(narrow == -32768);
  CHECK_FALSE(kaldi::ConvertStringToInteger("32768", &narrow));
}

TEST_CASE("kaldi text: ConvertStringToReal", "[kaldi][text]") {
  double d = 0;
  float f = 0;
  CHECK(kaldi::ConvertStringToReal("1.5", &d));
  CHECK(d == 1.5);
  CHECK(kaldi::ConvertStringToReal(" -2.25e1 \n", &d));
  CHECK(d == -22.5);
  CHECK(kaldi::ConvertStringToReal("+3", &d));
  CHECK(d == 3);
  CHECK(kaldi::ConvertStringToReal(".5", &d));
  CHECK(d == 0.5);
  CHECK(kaldi::ConvertStringToReal("1e-310", &d));  // subnormal, still a number
  CHECK(d > 0);
  for (const char* inf : {"inf", "INF", "Infinity", "+inf"}) {
    INFO(inf);
    CHECK(kaldi::ConvertStringToReal(inf, &d));
    CHECK(d == std::numeric_limits<double>::infinity());
  }
  CHECK(kaldi::ConvertStringToReal("-Inf", &f));
  CHECK(f == -std::numeric_limits<float>::infinity());
  for (const char* nan : {"nan", "NaN", "-nan", " NAN "}) {
    INFO(nan);
    CHECK(kaldi::ConvertStringToReal(nan, &f));
    CHECK(std::isnan(f));
  }
  CHECK(kaldi::ConvertStringToReal("1e40", &d));
  CHECK(d == 1e40);
  d = 7;
  f = 7;
  for (const char* bad : {"", " ", "1e400", "-1e400", "1e-400", "1.5x", "1.5 2", "1e", ".", "x", "+-1", "++1",
                          "0x1p3", "1,5", "in f"}) {
    INFO(bad);
    CHECK_FALSE(kaldi::ConvertStringToReal(bad, &d));
    CHECK_FALSE(kaldi::ConvertStringToReal(bad, &f));
    CHECK(d == 7);  // untouched
    CHECK(f == 7);
  }
  CHECK_FALSE(kaldi::ConvertStringToReal("1e40", &f));  // past float's range
  CHECK(f == 7);
}

TEST_CASE("kaldi text: Trim, SplitStringOnFirstSpace, IsToken, IsLine", "[kaldi][text]") {
  std::string s = "  a b \t\r\n";
  kaldi::Trim(&s);
  CHECK(s == "a b");
  s = " \t ";
  kaldi::Trim(&s);
  CHECK(s.empty());
  s.clear();
  kaldi::Trim(&s);
  CHECK(s.empty());
  s = "kept";
  kaldi::Trim(&s);
  CHECK(s == "kept");

  std::string first = "x", rest = "y";
  kaldi::SplitStringOnFirstSpace("  utt1   big\tworld  ", &first, &rest);
  CHECK(first == "utt1");
  CHECK(rest == "big\tworld");
  kaldi::SplitStringOnFirstSpace("alone ", &first, &rest);
  CHECK(first == "alone");
  CHECK(rest.empty());
  kaldi::SplitStringOnFirstSpace("   ", &first, &rest);
  CHECK(first.empty());
  CHECK(rest.empty());

  CHECK(kaldi::IsToken("utt-001_a.b"));
  CHECK(kaldi::IsToken("caf\xc3\xa9"));  // UTF-8
  CHECK_FALSE(kaldi::IsToken(""));
  CHECK_FALSE(kaldi::IsToken("a b"));
  CHECK_FALSE(kaldi::IsToken("a\tb"));
  CHECK_FALSE(kaldi::IsToken("a\nb"));
  CHECK_FALSE(kaldi::IsToken("a\x7f"));
  CHECK_FALSE(kaldi::IsToken(std::string("a\0b", 3)));
  CHECK_FALSE(kaldi::IsToken("a\xff"));

  CHECK(kaldi::IsLine("hello world"));
  CHECK(kaldi::IsLine(""));
  CHECK(kaldi::IsLine("caf\xc3\xa9 au lait"));
  CHECK_FALSE(kaldi::IsLine(" leading"));
  CHECK_FALSE(kaldi::IsLine("trailing "));
  CHECK_FALSE(kaldi::IsLine("two\nlines"));
  CHECK_FALSE(kaldi::IsLine("a\tb"));
  CHECK_FALSE(kaldi::IsLine("bell\a"));
}

TEST_CASE("kaldi text: StringsApproxEqual and StringHasher", "[kaldi][text]") {
  CHECK(kaldi::StringsApproxEqual("x 0.1234", "x 0.1299"));
  CHECK_FALSE(kaldi::StringsApproxEqual("x 0.1234", "x 0.1334"));
  CHECK(kaldi::StringsApproxEqual("0.1234", "0.1235", 3));
  CHECK_FALSE(kaldi::StringsApproxEqual("0.1234", "0.1244", 3));
  CHECK(kaldi::StringsApproxEqual("[ 1.51 2.25 ]", "[ 1.59 2.21 ]", 1));
  CHECK_FALSE(kaldi::StringsApproxEqual("[ 1.51 2.25 ]", "[ 1.59 2.31 ]", 1));
  CHECK(kaldi::StringsApproxEqual("1.5", "1.7", 0));
  CHECK_FALSE(kaldi::StringsApproxEqual("15", "17", 0));  // not decimals
  CHECK_FALSE(kaldi::StringsApproxEqual("abc", "abd"));
  CHECK_FALSE(kaldi::StringsApproxEqual("0.12", "0.1299"));
  CHECK(kaldi::StringsApproxEqual("same", "same"));
  CHECK(kaldi::StringsApproxEqual("", ""));

  std::unordered_map<std::string, int, kaldi::StringHasher> counts;
  ++counts["utt1"];
  ++counts["utt2"];
  ++counts[std::string("utt") + "1"];
  CHECK(counts.size() == 2);
  CHECK(counts["utt1"] == 2);
  kaldi::StringHasher hash;
  CHECK(hash("abc") == hash(std::string("ab") + "c"));
}

TEST_CASE("kaldi text: PrintableRxfilename and PrintableWxfilename", "[kaldi][text]") {
  CHECK(kaldi::PrintableRxfilename("") == "standard input");
  CHECK(kaldi::PrintableRxfilename("-") == "standard input");
  CHECK(kaldi::PrintableRxfilename("feats.ark") == "feats.ark");
  CHECK(kaldi::PrintableRxfilename("my feats.ark") == "'my feats.ark'");
  CHECK(kaldi::PrintableRxfilename("gunzip -c a.gz |") == "'gunzip -c a.gz |'");
  CHECK(kaldi::PrintableWxfilename("") == "standard output");
  CHECK(kaldi::PrintableWxfilename("-") == "standard output");
  CHECK(kaldi::PrintableWxfilename("out/x.mat") == "out/x.mat");
  CHECK(kaldi::PrintableWxfilename("| gzip -c > a.gz") == "'| gzip -c > a.gz'");
}

TEST_CASE("stl-utils: sorting, de-duplicating, vectors of pointers", "[kaldi][facade]") {
  std::vector<int> v{3, 1, 3, 2, 1};
  CHECK_FALSE(kaldi::IsSorted(v));
  kaldi::SortAndUniq(&v);
  CHECK(v == std::vector<int>{1, 2, 3});
  CHECK(kaldi::IsSortedAndUniq(v));
  std::vector<int> repeats{1, 1, 2, 1};
  CHECK_FALSE(kaldi::IsSortedAndUniq(std::vector<int>{1, 1, 2}));
  CHECK(kaldi::IsSorted(std::vector<int>{1, 1, 2}));
  kaldi::Uniq(&repeats);
  CHECK(repeats == std::vector<int>{1, 2, 1});
  std::vector<std::string*> pointers{new std::string("a"), nullptr, new std::string("b")};
  CHECK(kaldi::ContainsNullPointers(pointers));
  kaldi::DeletePointers(&pointers);
  CHECK(pointers == std::vector<std::string*>(3, nullptr));
}

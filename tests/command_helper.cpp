// tablio_test_command: the command the pipe tests run through the system's shell (/bin/sh,
// cmd.exe), so that they need no program of one system (printf, tr, yes). It does its actions
// in order:
//   print TEXT   writes TEXT to standard output
//   file PATH    writes the bytes of the file PATH
//   part PATH FROM COUNT   writes COUNT bytes of the file PATH from offset FROM ("rest": to its end)
//   copy         copies standard input to standard output
//   upper        the same, upper-cased
//   zeros N      writes N zero bytes
//   endless      writes "y\n" until a write fails (its reader has gone)
//   drain        reads standard input to its end
//   exit N       exits with status N
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#if defined(_WIN32)
#include <fcntl.h>
#include <io.h>
#endif

int main(int argc, char** argv) {
#if defined(_WIN32)
  _setmode(_fileno(stdin), _O_BINARY);  // bytes as they are, no CR/LF translation
  _setmode(_fileno(stdout), _O_BINARY);
#endif
  for (int i = 1; i < argc; ++i) {
    const std::string action = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : "";
    if (action == "print") {
      std::fputs(value, stdout);
      ++i;
    } else if (action == "file") {
      std::FILE* in = std::fopen(value, "rb");
      if (!in) {
        std::perror(value);
        return 2;
      }
      char buffer[1 << 16];
      for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, in)) > 0;)
        std::fwrite(buffer, 1, n, stdout);
      std::fclose(in);
      ++i;
    } else if (action == "part" && i + 3 < argc) {
      std::FILE* in = std::fopen(value, "rb");
      if (!in || std::fseek(in, std::atol(argv[i + 2]), SEEK_SET) != 0) {
        std::perror(value);
        return 2;
      }
      long left = std::strcmp(argv[i + 3], "rest") == 0 ? -1 : std::atol(argv[i + 3]);
      for (int c; left != 0 && (c = std::getc(in)) != EOF; left -= left > 0) std::putchar(c);
      std::fclose(in);
      i += 3;
    } else if (action == "copy" || action == "upper") {
      for (int c; (c = std::getchar()) != EOF;) std::putchar(action == "upper" ? std::toupper(c) : c);
    } else if (action == "zeros") {
      for (long n = std::atol(value); n > 0; --n) std::putchar(0);
      ++i;
    } else if (action == "endless") {
      while (std::fputs("y\n", stdout) >= 0 && std::fflush(stdout) == 0) {
      }
      return 0;
    } else if (action == "drain") {
      while (std::getchar() != EOF) {
      }
    } else if (action == "exit") {
      std::fflush(stdout);
      return std::atoi(value);
    } else {
      std::fprintf(stderr, "tablio_test_command: unknown action '%s'\n", action.c_str());
      return 2;
    }
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

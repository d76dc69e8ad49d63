// A file opened by name through the stream layer and copied: the code every table that opens
// files compiles header-only (offsets, pipes, the untrusted-input policy), whatever its
// framing and holder.
#include <tablio/stream/filename.hpp>
int main(int argc, char** argv) {
  if (argc != 3) return 1;
  tablio::reader in = tablio::open_input(argv[1]);
  tablio::writer out = tablio::open_output(argv[2]);
  while (in.ensure(1)) {
    auto bytes = in.window();
    out.write(bytes.data(), bytes.size());
    in.skip(bytes.size());
  }
  out.close();
  return 0;
}

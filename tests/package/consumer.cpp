// Round-trips a user struct through the Kaldi binary codec: proof that the package works.
#include <tablio/tablio.hpp>

#include <cstdio>

struct point {
  int x;
  float y;
  std::string label;
};

int main() {
  point p{3, 0.5f, "origin"};
  auto bytes = tablio::encode<tablio::kaldi_binary>(p);
  auto back = tablio::decode<tablio::kaldi_binary, point>(std::string_view(bytes.data(), bytes.size()));
  bool ok = back.x == 3 && back.y == 0.5f && back.label == "origin";
  std::printf("consumer: %s\n", ok ? "ok" : "MISMATCH");
  return ok ? 0 : 1;
}

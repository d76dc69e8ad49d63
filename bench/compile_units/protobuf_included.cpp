// The protobuf codec included alone (tablio.hpp does not include it).
#include <tablio/codec/protobuf.hpp>
int main() { return 0; }

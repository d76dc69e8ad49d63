// The codec layer included, nothing used.
#include <tablio/codec/codec.hpp>
int main() { return 0; }

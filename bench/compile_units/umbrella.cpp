// <tablio/tablio.hpp> included, nothing used.
#include <tablio/tablio.hpp>
int main() { return 0; }

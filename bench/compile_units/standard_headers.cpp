// The standard headers a table's code needs at least, alone: the floor under every row.
#include <charconv>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>
int main() { return 0; }

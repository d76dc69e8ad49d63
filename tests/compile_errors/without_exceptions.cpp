// A framework built with -fno-exceptions includes tablio: the first error says that tablio
// needs exceptions, not the errors of the first `throw` deep in its headers.
// expected error: tablio reports every error by exception
// flags with TABLIO_EXPECT_ERROR: -fno-exceptions
#include <tablio/tablio.hpp>

int main() { return tablio::version.major; }

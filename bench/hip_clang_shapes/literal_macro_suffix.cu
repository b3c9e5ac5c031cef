// A format string glued to the <cinttypes> width macro and to a project macro.
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#define REAL_FORMAT "g"
void report(int64_t step, double r) { printf("%"PRId64": %"REAL_FORMAT"\n", step, r); }

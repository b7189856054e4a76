// `coil bench`: benchmarks on the command line (`coil bench cpu`: tools/bench/cpu_bench.h).
// Returns the process exit code: 0, 1 when a row failed (an output that does not match, a
// stage's error) or the benchmark could not run, 2 for usage errors. Missed speed targets are
// printed, never an exit status.
#ifndef COIL_TOOLS_COIL_BENCH_COMMANDS_H_
#define COIL_TOOLS_COIL_BENCH_COMMANDS_H_

#include <string>
#include <vector>

namespace coil::cli {

int BenchCommand(const std::vector<std::string>& argv);

}  // namespace coil::cli

#endif  // COIL_TOOLS_COIL_BENCH_COMMANDS_H_

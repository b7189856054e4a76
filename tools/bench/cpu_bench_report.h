// Summaries and output of `coil bench cpu`: the geometric mean over the model rows, the text
// report (ratio rows, `geomean vs torch eager: N.NNx`, bandwidth rows, compile times, the
// issue's targets) and the JSON of `--json FILE`.
//
//   Summarize(results);                       // geomean_speedup, failed_rows
//   std::fputs(FormatReport(results).c_str(), stdout);
//   absl::StatusOr<std::string> json = ResultsToJson(results);
#ifndef COIL_TOOLS_BENCH_CPU_BENCH_REPORT_H_
#define COIL_TOOLS_BENCH_CPU_BENCH_REPORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "tools/bench/cpu_bench.pb.h"

namespace coil::bench {

// The targets (printed against the measurements; never a failure).
inline constexpr double kTargetGeomean = 1.5;
inline constexpr double kTargetFractionOfCopy = 0.7;
inline constexpr double kTargetColdCompileMs = 1000;
inline constexpr double kTargetWarmCompileMs = 50;
// A 124M-parameter model (--large-model), from the imported graph: the compile driver issue's.
inline constexpr double kTargetLargeColdCompileMs = 5000;
inline constexpr double kTargetLargeWarmCompileMs = 1000;

// Sets geomean_speedup (geometric mean of the speedups of the rows that matched; 0 when none
// did) and failed_rows (model and bandwidth rows with matches = false, plus a compile-time
// error).
void Summarize(CpuBenchResults& results);

// The human-readable report. Every failed row also gets a line starting with "ERROR ".
std::string FormatReport(const CpuBenchResults& results);

// Pretty-printed JSON with snake_case keys and every field present.
absl::StatusOr<std::string> ResultsToJson(const CpuBenchResults& results);

}  // namespace coil::bench

#endif  // COIL_TOOLS_BENCH_CPU_BENCH_REPORT_H_

// TimeRuns: the warm-up / repeat / median loop shared by every timed row of `coil bench cpu`.
#include "tools/bench/cpu_bench_timing.h"

#include <algorithm>

#include "ir/check.h"

namespace coil::bench {

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

Timing SummarizeSamples(std::vector<double> samples_ms) {
  COIL_CHECK(!samples_ms.empty());
  std::sort(samples_ms.begin(), samples_ms.end());
  const size_t n = samples_ms.size();
  Timing t;
  t.median_ms = n % 2 == 1 ? samples_ms[n / 2] : (samples_ms[n / 2 - 1] + samples_ms[n / 2]) / 2;
  t.min_ms = samples_ms.front();
  t.reps = static_cast<int>(n);
  return t;
}

absl::StatusOr<Timing> TimeRuns(const TimingPolicy& policy, absl::FunctionRef<absl::Status()> fn) {
  COIL_CHECK(policy.min_reps >= 1 && policy.max_reps >= policy.min_reps)
      << policy.min_reps << " " << policy.max_reps;
  for (int i = 0; i < policy.warmup; ++i) {
    if (absl::Status s = fn(); !s.ok()) return s;
  }
  std::vector<double> samples;
  const auto start = std::chrono::steady_clock::now();
  while (static_cast<int>(samples.size()) < policy.min_reps ||
         (static_cast<int>(samples.size()) < policy.max_reps &&
          MillisecondsSince(start) < policy.min_seconds * 1e3)) {
    const auto t = std::chrono::steady_clock::now();
    if (absl::Status s = fn(); !s.ok()) return s;
    samples.push_back(MillisecondsSince(t));
  }
  return SummarizeSamples(std::move(samples));
}

}  // namespace coil::bench

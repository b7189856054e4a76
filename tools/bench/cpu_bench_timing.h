// Timing for `coil bench cpu`: warm-up runs, then timed runs until both a minimum count and a
// minimum time are reached (capped), summarized by median and minimum. torch_eager.py follows
// the same policy (TimingPolicy's fields are passed to it), so both sides are timed alike.
//
//   TimingPolicy policy{.warmup = 2, .min_reps = 5, .max_reps = 50, .min_seconds = 1.0};
//   absl::StatusOr<Timing> t = TimeRuns(policy, [&]() -> absl::Status { ... });
//   printf("%.3f ms\n", t->median_ms);
#ifndef COIL_TOOLS_BENCH_CPU_BENCH_TIMING_H_
#define COIL_TOOLS_BENCH_CPU_BENCH_TIMING_H_

#include <chrono>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"

namespace coil::bench {

struct TimingPolicy {
  int warmup = 2;            // untimed runs first
  int min_reps = 5;          // at least this many timed runs...
  int max_reps = 50;         // ...and at most this many,
  double min_seconds = 1.0;  // timing until this much time has passed (if max_reps allows)
};

struct Timing {
  double median_ms = 0;
  double min_ms = 0;
  int reps = 0;
};

// Median and minimum of `samples_ms` (at least one sample; CHECKed).
Timing SummarizeSamples(std::vector<double> samples_ms);

// Runs `fn` per `policy`; the first error stops timing and is returned.
absl::StatusOr<Timing> TimeRuns(const TimingPolicy& policy, absl::FunctionRef<absl::Status()> fn);

// Milliseconds since `start` on the steady clock.
double MillisecondsSince(std::chrono::steady_clock::time_point start);

}  // namespace coil::bench

#endif  // COIL_TOOLS_BENCH_CPU_BENCH_TIMING_H_

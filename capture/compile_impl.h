// The templates behind coil::compile and coil::explain (included by capture/compile.h).
//
// CompiledFunction<Fn> flattens each call's arguments (capture/internal/arg_flatten.h) and
// hands them to a FunctionCache, the non-template core (capture/compile.cc) that checks
// guards, runs cached artifacts, traces and recompiles, replays segmented functions and
// falls back to eager. Copies of a CompiledFunction share one cache. Not thread-safe: call a
// compiled function from one thread at a time.
//
//   auto f = coil::compile([](const Tensor& x, int64_t k) { return x * double(k); });
//   Tensor y = f(x, 3);                       // throws coil::Error on failure
//   absl::StatusOr<Tensor> z = f.Call(x, 3);  // or returns the Status
//   f.stats().compiles;                       // 1
#ifndef COIL_CAPTURE_COMPILE_IMPL_H_
#define COIL_CAPTURE_COMPILE_IMPL_H_

#include "capture/compile.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "capture/error.h"
#include "capture/internal/arg_flatten.h"
#include "capture/internal/trace.h"
#include "ir/proto/report.pb.h"

namespace coil {

// Counters of one compiled function (and its copies).
struct CompileStats {
  int64_t calls = 0;            // calls of the compiled function
  int64_t fn_calls = 0;         // runs of the user function: traces, segmented replays, eager
  int compiles = 0;             // traces that made a cache entry
  int recompiles = 0;           // compiles after the first (guard misses)
  int64_t cache_hits = 0;       // calls whose guards matched a cache entry
  int64_t eager_fallbacks = 0;  // calls run eagerly past recompile_limit
  int graphs_compiled = 0;      // graphs the backend compiled (segments included)
  int64_t graph_breaks = 0;     // graph breaks over every run
};

namespace capture_internal {

// The non-template core of a compiled function (capture/compile.cc).
class FunctionCache {
 public:
  // Calls the user function with these tensors in the tensors' places; returns its results
  // flattened. Throws coil::Error on failure.
  using Runner = absl::FunctionRef<std::vector<Tensor>(absl::Span<const Tensor>)>;

  explicit FunctionCache(CompileOptions options);
  ~FunctionCache();

  // One call: guards, then the cached artifact; a miss traces (or runs eagerly past the
  // recompile limit). Errors name the argument or the op and location.
  absl::StatusOr<std::vector<Tensor>> Call(const FlatArgs& args, Runner run);

  const CompileStats& stats() const;
  // The latest compile's graphs, guards and breaks, with the recompile history.
  proto::CaptureResult capture_result() const;
  // Every compile's, oldest first (recompiles from guard misses included): each with the
  // recompile history up to it, so compile N > 1 ends with the Recompile (count N) naming the
  // guard that failed. For reports: one capture stage per compile (the inspector's index).
  std::vector<proto::CaptureResult> capture_results() const;
  // The latest compile, readable.
  Explanation explanation() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace capture_internal

template <typename Fn>
class CompiledFunction {
 public:
  CompiledFunction(Fn fn, CompileOptions options)
      : fn_(std::make_shared<Fn>(std::move(fn))),
        cache_(std::make_shared<capture_internal::FunctionCache>(std::move(options))) {}

  template <typename... Args>
  using Result = std::decay_t<std::invoke_result_t<Fn&, std::decay_t<Args>&...>>;

  // Runs the function (compiled); throws coil::Error on failure.
  template <typename... Args>
  Result<Args...> operator()(const Args&... args) {
    absl::StatusOr<Result<Args...>> r = Call(args...);
    if (!r.ok()) throw Error(r.status());
    return *std::move(r);
  }

  // Runs the function (compiled); returns the error instead of throwing.
  template <typename... Args>
  absl::StatusOr<Result<Args...>> Call(const Args&... args) {
    using R = Result<Args...>;
    using Traits = capture_internal::ResultTraits<R>;
    if (capture_internal::ActiveTrace() != nullptr) {
      // Called while another function is traced: inline into that trace.
      try {
        std::tuple<std::decay_t<Args>...> copy(args...);
        return std::apply(*fn_, copy);
      } catch (const Error& e) {
        return e.status();
      }
    }
    capture_internal::FlatArgs flat;
    capture_internal::FlattenArgs(flat, args...);
    Fn& fn = *fn_;
    auto run = [&](absl::Span<const Tensor> tensors) -> std::vector<Tensor> {
      std::tuple<std::decay_t<Args>...> rebuilt = capture_internal::RebuildArgs(tensors, args...);
      return Traits::Flatten(std::apply(fn, rebuilt));
    };
    absl::StatusOr<std::vector<Tensor>> out = cache_->Call(flat, run);
    if (!out.ok()) return out.status();
    if (Traits::kArity >= 0 && static_cast<int>(out->size()) != Traits::kArity) {
      return absl::InternalError("compiled function returned the wrong number of results");
    }
    return Traits::Unflatten(*std::move(out));
  }

  const CompileStats& stats() const { return cache_->stats(); }
  proto::CaptureResult capture_result() const { return cache_->capture_result(); }
  std::vector<proto::CaptureResult> capture_results() const { return cache_->capture_results(); }
  Explanation explanation() const { return cache_->explanation(); }

 private:
  std::shared_ptr<Fn> fn_;
  std::shared_ptr<capture_internal::FunctionCache> cache_;
};

// Compiles `fn` lazily: the first call traces it.
template <typename Fn>
CompiledFunction<std::decay_t<Fn>> compile(Fn&& fn, CompileOptions options = {}) {
  return CompiledFunction<std::decay_t<Fn>>(std::forward<Fn>(fn), std::move(options));
}

// Runs `fn(args...)` once under compile (breaks allowed) and reports its graphs, breaks with
// reasons and locations, and guards. Throws coil::Error if the call fails.
template <typename Fn, typename... Args>
Explanation explain(Fn&& fn, const Args&... args) {
  CompiledFunction<std::decay_t<Fn>> f(std::forward<Fn>(fn), CompileOptions{});
  f(args...);
  return f.explanation();
}

}  // namespace coil

#endif  // COIL_CAPTURE_COMPILE_IMPL_H_

// capture_overhead: what coil::compile costs per call when compute is negligible.
//
//   bazel run -c opt //tools/bench:capture_overhead [-- --iters=BATCHES]
//
// Prints medians (over many timed batches of calls) of:
//  1. the guard check of a compiled function with 4 tensor inputs (GuardProgram::Check on the
//     guards a trace records for 4 static f32[4, 4] arguments, and for 4 arguments sharing a
//     symbolic batch dimension);
//  2. the dispatch overhead of f(a, b, c, d) over calling the backend's CompiledGraph
//     directly with the same inputs, for a trivial backend (Run returns preallocated outputs
//     at once, so only overhead is measured) and for the reference backend;
//  3. for a function with graph breaks (segmented mode: lazy tensors, each pending graph
//     compiled once and looked up by structural hash + guards at every break), the overhead
//     per recorded op, with the trivial backend.
// Targets (from the capture issue): guard check < 1 us for 4 inputs, dispatch < 5 us.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "capture/backend.h"
#include "capture/compile.h"
#include "capture/internal/arg_flatten.h"
#include "capture/internal/guards.h"
#include "capture/tensor.h"
#include "ir/graph.h"

namespace coil {
namespace {

using Clock = std::chrono::steady_clock;

// Median over `batches` of the time per call of `fn` (each batch runs it `per_batch` times),
// in nanoseconds.
double MedianNs(const std::function<void()>& fn, int batches, int per_batch) {
  for (int i = 0; i < per_batch; ++i) fn();  // warm up
  std::vector<double> ns;
  ns.reserve(batches);
  for (int b = 0; b < batches; ++b) {
    auto start = Clock::now();
    for (int i = 0; i < per_batch; ++i) fn();
    auto end = Clock::now();
    ns.push_back(std::chrono::duration<double, std::nano>(end - start).count() / per_batch);
  }
  std::nth_element(ns.begin(), ns.begin() + ns.size() / 2, ns.end());
  return ns[ns.size() / 2];
}

// Like MedianNs for two functions, their batches interleaved (a, b, a, b, ...) so that drift
// in the machine's speed affects both alike.
std::pair<double, double> MedianNsPair(const std::function<void()>& a,
                                       const std::function<void()>& b, int batches,
                                       int per_batch) {
  for (int i = 0; i < per_batch; ++i) a(), b();  // warm up
  std::vector<double> na, nb;
  for (int k = 0; k < batches; ++k) {
    for (auto [fn, out] : {std::pair{&a, &na}, std::pair{&b, &nb}}) {
      auto start = Clock::now();
      for (int i = 0; i < per_batch; ++i) (*fn)();
      auto end = Clock::now();
      out->push_back(std::chrono::duration<double, std::nano>(end - start).count() / per_batch);
    }
  }
  for (auto* v : {&na, &nb}) std::nth_element(v->begin(), v->begin() + v->size() / 2, v->end());
  return {na[na.size() / 2], nb[nb.size() / 2]};
}

// A compiled graph whose Run returns preallocated outputs of the graph's (static) output
// types: no compute, so a call measures only what surrounds it.
class NullCompiledGraph : public CompiledGraph {
 public:
  explicit NullCompiledGraph(const Graph& graph) {
    for (const Value* v : graph.outputs()) {
      std::vector<int64_t> shape;
      for (const SymExpr& d : v->type().shape) shape.push_back(d.is_constant() ? d.constant() : 1);
      outputs_.push_back(HostTensor::Zeros(v->type().dtype, shape));
    }
  }
  absl::StatusOr<std::vector<HostTensor>> Run(absl::Span<const HostTensor>) override {
    return outputs_;
  }

 private:
  std::vector<HostTensor> outputs_;
};

class NullBackend : public Backend {
 public:
  std::string name() const override { return "null"; }
  absl::StatusOr<std::unique_ptr<CompiledGraph>> Compile(const Graph& graph) override {
    return std::make_unique<NullCompiledGraph>(graph);
  }
};

// Forwards to `inner` and remembers the last CompiledGraph, so that the benchmark can call it
// directly (the forwarding costs one virtual call, counted in the overhead).
class RecordingBackend : public Backend {
 public:
  explicit RecordingBackend(std::shared_ptr<Backend> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  absl::StatusOr<std::unique_ptr<CompiledGraph>> Compile(const Graph& graph) override {
    absl::StatusOr<std::unique_ptr<CompiledGraph>> c = inner_->Compile(graph);
    if (!c.ok()) return c.status();
    std::shared_ptr<CompiledGraph> shared = *std::move(c);
    last = shared.get();
    ++graphs;
    return std::unique_ptr<CompiledGraph>(new Forward(shared));
  }

  CompiledGraph* last = nullptr;
  int graphs = 0;

 private:
  class Forward : public CompiledGraph {
   public:
    explicit Forward(std::shared_ptr<CompiledGraph> g) : g_(std::move(g)) {}
    absl::StatusOr<std::vector<HostTensor>> Run(absl::Span<const HostTensor> in) override {
      return g_->Run(in);
    }

   private:
    std::shared_ptr<CompiledGraph> g_;
  };
  std::shared_ptr<Backend> inner_;
};

struct Options {
  int batches = 200;
  int per_batch = 500;
};

void PrintRow(const char* what, double ns, const char* target = "") {
  std::printf("  %-72s %9.3f us  %s\n", what, ns / 1000.0, target);
}

// ---- 1. guard check ----
void GuardCheck(const Options& o) {
  std::printf("guard check, 4 tensor inputs f32[4, 4] (GuardProgram::Check, hit path)\n");
  std::vector<Tensor> args;
  for (int i = 0; i < 4; ++i) args.push_back(Tensor::Randn({4, 4}, i));
  capture_internal::FlatArgs flat;
  capture_internal::FlattenArgs(flat, args[0], args[1], args[2], args[3]);

  capture_internal::GuardProgram stat;
  for (int i = 0; i < 4; ++i) {
    stat.AddTensor("arg" + std::to_string(i), proto::FLOAT32, Device{}, true, {{4, -1}, {4, -1}});
  }
  if (!stat.Check(flat)) std::abort();
  double ns = MedianNs([&] { if (!stat.Check(flat)) std::abort(); }, o.batches, o.per_batch * 10);
  PrintRow("static sizes", ns, "(target < 1 us)");

  capture_internal::GuardProgram dyn;
  int s0 = dyn.AddSymbol("s0", 2, 0);
  for (int i = 0; i < 4; ++i) {
    dyn.AddTensor("arg" + std::to_string(i), proto::FLOAT32, Device{}, true, {{0, s0}, {4, -1}});
  }
  dyn.AddRelation(proto::Guard::LT, SymExpr(2), SymExpr::Symbol("s0"));
  if (!dyn.Check(flat)) std::abort();
  ns = MedianNs([&] { if (!dyn.Check(flat)) std::abort(); }, o.batches, o.per_batch * 10);
  PrintRow("symbolic batch s0 (shared by the 4 inputs, + relation s0 > 2)", ns,
           "(target < 1 us)");
}

// ---- 2. dispatch overhead, no breaks ----
Tensor Four(const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& d) {
  return a * b + c - d;
}

void Dispatch(const Options& o, const char* label, std::shared_ptr<Backend> inner) {
  auto backend = std::make_shared<RecordingBackend>(inner);
  std::vector<Tensor> args;
  for (int i = 0; i < 4; ++i) args.push_back(Tensor::Randn({4, 4}, i));
  auto f = compile(Four, {.backend = backend, .name = "four"});
  f(args[0], args[1], args[2], args[3]);  // trace + compile
  if (backend->last == nullptr || f.stats().compiles != 1) {
    std::fprintf(stderr, "the function did not compile to one graph\n");
    std::exit(1);
  }
  std::vector<HostTensor> host;
  for (const Tensor& t : args) host.push_back(t.host());
  CompiledGraph* g = backend->last;
  auto [direct, total] = MedianNsPair(
      [&] {
        auto r = g->Run(host);
        if (!r.ok()) std::abort();
      },
      [&] { f(args[0], args[1], args[2], args[3]); }, o.batches, o.per_batch);
  if (f.stats().fn_calls != 1) {
    std::fprintf(stderr, "the function re-ran on a guard hit\n");
    std::exit(1);
  }
  std::printf("dispatch, f(a, b, c, d) = a * b + c - d on f32[4, 4], %s backend\n", label);
  PrintRow("CompiledGraph::Run called directly", direct);
  PrintRow("f(a, b, c, d) (guards + inputs + Run + wrapping outputs)", total);
  PrintRow("dispatch overhead = f(...) - direct", total - direct, "(target < 5 us)");
}

// ---- 3. segmented mode ----
constexpr int kOpsPerSegment = 32;

// 2 segments of kOpsPerSegment elementwise ops each, split by a graph break (item()).
Tensor Segmented(const Tensor& x) {
  Tensor y = x;
  for (int i = 0; i < kOpsPerSegment - 1; ++i) y = y * 1.0001;
  double v = y.sum().item();  // the break (the sum is the segment's last op)
  for (int i = 0; i < kOpsPerSegment; ++i) y = y + 0.5;
  return v >= 0 ? y : y;  // the value is read, as real code would
}

void SegmentedMode(const Options& o) {
  auto backend = std::make_shared<RecordingBackend>(std::make_shared<NullBackend>());
  Tensor x = Tensor::Randn({4, 4}, 0);
  auto f = compile(Segmented, {.backend = backend, .name = "segmented"});
  f(x);
  f(x);
  Explanation e = f.explanation();
  const int ops = 2 * kOpsPerSegment;
  auto [total, eager] = MedianNsPair([&] { f(x); }, [&] { Segmented(x); }, o.batches / 4,
                                     o.per_batch / 10);
  std::printf("segmented mode: %d recorded ops per call, %d graphs, %zu break(s), null backend\n",
              ops, e.graph_count, e.breaks.size());
  PrintRow("f(x) per call (replay: trace, hash + guard lookup, Run per segment)", total);
  PrintRow("overhead per recorded op = f(x) / ops", total / ops);
  PrintRow("eager (reference kernels, compute included) per op", eager / ops);
}

}  // namespace
}  // namespace coil

int main(int argc, char** argv) {
  coil::Options o;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--iters=", 8) == 0) {
      o.batches = std::max(8, std::atoi(argv[i] + 8));
    } else {
      std::fprintf(stderr, "usage: %s [--iters=BATCHES]\n", argv[0]);
      return 2;
    }
  }
  std::printf("capture overhead: medians over %d batches (times per call)\n\n", o.batches);
  coil::GuardCheck(o);
  std::printf("\n");
  coil::Dispatch(o, "trivial (Run returns at once)", std::make_shared<coil::NullBackend>());
  std::printf("\n");
  coil::Dispatch(o, "reference", coil::ReferenceBackend());
  std::printf("\n");
  coil::SegmentedMode(o);
  return 0;
}

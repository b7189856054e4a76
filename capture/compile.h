// coil::compile: the TorchDynamo role in C++.
//
//   auto f = coil::compile([](const Tensor& x, const Tensor& w) { return relu(x.matmul(w)); });
//   Tensor y = f(x, w);   // first call: trace + compile; later calls: guards, then run
//
// The first call traces the function with lazy tensors into a graph, records guards (dtype,
// device, rank, sizes or symbolic sizes with relations, contiguity, every size the function
// branched on) and compiles the graph with the backend. Later calls whose arguments pass the
// guards run the compiled artifact without running the function. A failed guard recompiles;
// past `recompile_limit` the function runs eagerly, with one logged warning.
//
// Graph breaks (reading values: item(), tolist(), printing; an op the tracer cannot record)
// split the function into segments: it then runs in segmented mode, each pending graph
// compiled (cached by structural hash + guards) and run at the break. `fullgraph = true` makes a
// break an error naming the reason and the source location.
//
// Callables take Tensors, std::vector<Tensor>, and plain int64_t/int/double/bool (specialized:
// a guard on the value); they return a Tensor, a std::vector<Tensor> or a std::tuple of
// Tensors. Module parameters and other tensors the function reads become graph inputs.
#ifndef COIL_CAPTURE_COMPILE_H_
#define COIL_CAPTURE_COMPILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "capture/backend.h"
#include "capture/tensor.h"
#include "ir/proto/report.pb.h"

namespace coil {

enum class DynamicMode {
  kAuto,     // static first; a dimension that changed becomes symbolic on the recompile
  kStatic,   // every size specialized
  kDynamic,  // every dimension symbolic from the first compile (sizes 0 and 1 specialized)
};

struct CompileOptions {
  DynamicMode dynamic = DynamicMode::kAuto;
  bool fullgraph = false;
  int recompile_limit = 8;
  // nullptr: DefaultBackend() (capture/backend.h): the compiled CPU backend when //:coil is
  // linked, else the reference interpreter.
  std::shared_ptr<Backend> backend;
  // Used in logs and reports (default: "fn").
  std::string name;
};

// Marks dimension `dim` of `t` dynamic for the next compile that sees it: a symbol with range
// [min, max] (max 0: unbounded), guarded.
void mark_dynamic(Tensor& t, int64_t dim, int64_t min = 2, int64_t max = 0);

struct GraphBreakInfo {
  std::string reason;  // "item() reads a tensor's value", "op aten.nonzero has data-dependent shape"
  std::string op;
  std::string location;  // "file.cc:12:7"
};

// What coil::explain reports about one call.
struct Explanation {
  int graph_count = 0;
  std::vector<GraphBreakInfo> breaks;
  std::vector<std::string> guards;  // readable, e.g. "x: f32[s0, 64]", "s0 >= 2", "s0 > 2"
  std::vector<std::string> graphs;  // text IR of each graph
  std::string ToString() const;
};

}  // namespace coil

// The templates (CompiledFunction, compile, explain) live in capture/compile_impl.h.
#include "capture/compile_impl.h"

#endif  // COIL_CAPTURE_COMPILE_H_

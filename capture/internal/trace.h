// The interface between eager dispatch and the tracer. Internal to capture/.
//
// While coil::compile runs a user function, a Trace is active on the thread (ActiveTrace()).
// Every op dispatched then goes to Trace::Record instead of running: the trace appends a node
// to its current segment graph (lifting concrete tensors it has not seen, such as module
// parameters, as graph inputs) and returns lazy tensors. Reading a lazy tensor's data is a
// graph break (Trace::Materialize); comparing or reading a symbolic size records a guard
// (Trace::RecordGuard).
#ifndef COIL_CAPTURE_INTERNAL_TRACE_H_
#define COIL_CAPTURE_INTERNAL_TRACE_H_

#include <source_location>
#include <vector>

#include "absl/strings/string_view.h"
#include "ir/attribute.h"
#include "ir/proto/graph.pb.h"
#include "ir/sym_expr.h"
#include "runtime/host_tensor.h"

namespace coil {
class Tensor;
}

namespace coil::capture_internal {

class Trace {
 public:
  virtual ~Trace() = default;

  // Records `op` and returns its outputs as lazy tensors. Inputs may be lazy (of this trace)
  // or concrete. Errors (a bad shape, an unknown op) throw coil::Error naming the op and `loc`.
  virtual std::vector<Tensor> Record(absl::string_view op, const std::vector<Tensor>& inputs,
                                     AttrMap attrs, const std::source_location& loc) = 0;

  // A read of a lazy tensor's values (`reason`: "item()", "printing", "tolist()", ...): a graph
  // break. Runs what is pending and returns the concrete data; with fullgraph it throws
  // coil::Error naming the reason and `loc`.
  virtual HostTensor Materialize(const Tensor& t, absl::string_view reason,
                                 const std::source_location& loc) = 0;

  // A relation between symbolic sizes that the function's control flow depended on, with
  // its value at the hints (`holds`). The compiled artifact is valid only while it holds.
  virtual void RecordGuard(proto::Guard::Relation relation, const SymExpr& lhs, const SymExpr& rhs,
                           bool holds, const std::source_location& loc) = 0;

  // A run-time integer for an attribute (a dropout's Philox counter offset): a symbol bound by
  // the value of a new 0-d int64 graph input holding `value` (SymbolInfo::value_of), so a
  // compiled graph takes another value on each call without recompiling. `draw`: how many
  // counters the value's owner took from the default generator (symbolic in the trace's
  // sizes), which a cached call draws again. The default bakes the value in as a constant.
  virtual SymExpr RuntimeInt(int64_t value, absl::string_view stem, const SymExpr& draw) {
    (void)stem;
    (void)draw;
    return SymExpr(value);
  }
};

// The trace active on this thread, or nullptr (eager mode).
Trace* ActiveTrace();

// Makes `trace` active for the current scope (nesting restores the previous one).
class ScopedActiveTrace {
 public:
  explicit ScopedActiveTrace(Trace* trace);
  ~ScopedActiveTrace();
  ScopedActiveTrace(const ScopedActiveTrace&) = delete;
  ScopedActiveTrace& operator=(const ScopedActiveTrace&) = delete;

 private:
  Trace* previous_;
};

}  // namespace coil::capture_internal

#endif  // COIL_CAPTURE_INTERNAL_TRACE_H_

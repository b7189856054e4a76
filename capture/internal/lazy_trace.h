// LazyTrace: the Trace that coil::compile runs a user function under. Internal to capture/.
//
// Ops are recorded into the current segment graph with GraphBuilder (meta functions infer the
// symbolic types). A concrete tensor the trace has not seen (a module parameter, a tensor made
// inside the function, a value that came back from an earlier segment) becomes a graph input,
// and the trace keeps a reference to it so a cached artifact reads its current data. In-place
// ops are recorded as aten.*_ nodes: the graphs have eager semantics, and the backend writes
// through to its inputs (the reference interpreter does so directly).
//
// A graph break (reading values, an op with a data-dependent output shape) materializes the
// segment: its graph is compiled (cached by structural hash + input layout in a SegmentCache
// shared by every trace of one compiled function) and run, every live lazy tensor of the
// segment becomes concrete, and the next segment starts. Finish does the same for the last
// segment, with the function's results as its first outputs.
//
//   LazyTrace trace(options);
//   std::vector<Tensor> lazy_args = trace.AddArguments(args, types);
//   std::vector<Tensor> out;
//   { ScopedActiveTrace scope(&trace); out = fn(lazy_args); }
//   out = trace.Finish(std::move(out));   // concrete
#ifndef COIL_CAPTURE_INTERNAL_LAZY_TRACE_H_
#define COIL_CAPTURE_INTERNAL_LAZY_TRACE_H_

#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/types/span.h"
#include "capture/backend.h"
#include "capture/internal/tensor_impl.h"
#include "capture/internal/trace.h"
#include "capture/internal/training_segment.h"
#include "capture/tensor.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "ir/proto/report.pb.h"

namespace coil::capture_internal {

// Where a segment input's data comes from when a cached artifact runs again.
struct InputSource {
  int arg = -1;                         // flat tensor argument index, or -1
  std::shared_ptr<TensorImpl> lifted;   // a concrete tensor the function read (kept alive)
  // Set for a run-time counter (Trace::RuntimeInt): a call draws this many counters (over the
  // graph's symbols) from the default generator and passes the first as the input's value.
  std::optional<SymExpr> draw;
};

// Compiled segment graphs of one compiled function, by structural hash + input layout.
struct SegmentCache {
  absl::flat_hash_map<std::string, std::shared_ptr<CompiledGraph>> compiled;
  // Segments whose inputs needed gradients (capture/internal/training_segment.h).
  TrainingCache training;
};

struct TraceOptions {
  std::string fn_name = "fn";
  bool fullgraph = false;
  Backend* backend = nullptr;
  SegmentCache* cache = nullptr;
};

class LazyTrace : public Trace {
 public:
  explicit LazyTrace(TraceOptions options);
  // Tensors an in-place op made lazy get their data back if the trace did not finish.
  ~LazyTrace() override;

  // Declares a symbol of the arguments' types (the caller decides which sizes are dynamic).
  void AddSymbol(const SymbolInfo& symbol);
  // Makes the concrete `args` inputs of the first segment with `types` (symbolic where
  // dynamic) and `names`; returns the lazy tensors to call the function with.
  std::vector<Tensor> AddArguments(absl::Span<const Tensor> args,
                                   absl::Span<const TensorType> types,
                                   absl::Span<const std::string> names);
  // Runs the last segment with `outputs` as its first graph outputs. Afterwards every output
  // is concrete (returned). Throws coil::Error if the segment fails to compile or run.
  std::vector<Tensor> Finish(std::vector<Tensor> outputs);

  // Trace interface.
  std::vector<Tensor> Record(absl::string_view op, const std::vector<Tensor>& inputs,
                             AttrMap attrs, const std::source_location& loc) override;
  HostTensor Materialize(const Tensor& t, absl::string_view reason,
                         const std::source_location& loc) override;
  void RecordGuard(proto::Guard::Relation relation, const SymExpr& lhs, const SymExpr& rhs,
                   bool holds, const std::source_location& loc) override;
  SymExpr RuntimeInt(int64_t value, absl::string_view stem, const SymExpr& draw) override;

  // A graph break for an op the tracer does not record (`op`, e.g. "coil.nonzero", whose
  // output shape depends on data): runs what is pending and returns the inputs' data. With
  // fullgraph it throws coil::Error naming the op and `loc`.
  std::vector<HostTensor> BreakForOp(absl::string_view op, absl::string_view reason,
                                     const std::vector<Tensor>& inputs,
                                     const std::source_location& loc);

  // ---- results ----
  // Breaks in order.
  const std::vector<proto::GraphBreak>& breaks() const { return breaks_; }
  // Every non-empty segment graph that ran, and its text IR.
  const std::vector<proto::Graph>& segment_graphs() const { return segment_graphs_; }
  const std::vector<std::string>& segment_texts() const { return segment_texts_; }
  // Relation guards recorded over the whole function.
  const std::vector<GuardInfo>& guards() const { return guards_; }
  // Segments compiled by the backend (cache misses) and served from the SegmentCache.
  int segments_compiled() const { return segments_compiled_; }
  int segments_cached() const { return segments_cached_; }
  // Whether any segment took a run-time integer (RuntimeInt). A function without breaks then
  // runs from the cache with fresh draws (InputSource::draw); with breaks it is traced again.
  bool took_runtime_ints() const { return took_runtime_ints_; }

  // The last segment run (for a function without breaks, the whole function): its artifact,
  // where its inputs come from, and how many of its outputs are the function's results.
  struct Segment {
    std::shared_ptr<CompiledGraph> compiled;  // null when it ran for training only
    std::vector<InputSource> inputs;
    int num_results = 0;
    std::shared_ptr<const Graph> graph;  // for a later compile (inference or training)
    std::string key;                     // its SegmentCache key
    // Its outputs after the results (live tensors, shared view bases), on the autograd tape
    // as the results are.
    std::vector<Tensor> extra_outputs;
  };
  const Segment& last_segment() const { return last_segment_; }

 private:
  Value* ValueFor(const Tensor& t);
  Tensor MakeLazy(Value* value);
  std::vector<int64_t> Hints(const TensorType& type) const;
  SymRanges Ranges() const;
  [[noreturn]] void ThrowBreak(absl::string_view reason, absl::string_view op,
                               const std::source_location& loc) const;
  void AddBreak(absl::string_view reason, absl::string_view op, const std::source_location& loc);
  // Runs the current segment; `results` become its first outputs. Returns their data.
  std::vector<HostTensor> RunSegment(const std::vector<Value*>& results, bool always_compile);
  void StartSegment();

  TraceOptions options_;
  std::vector<SymbolInfo> symbols_;
  absl::flat_hash_map<std::string, int64_t> hints_;
  std::vector<GuardInfo> guards_;

  // The current segment.
  int segment_ = 0;
  std::shared_ptr<Graph> graph_;
  std::unique_ptr<GraphBuilder> builder_;
  std::vector<HostTensor> input_data_;
  std::vector<InputSource> input_sources_;
  std::vector<std::shared_ptr<TensorImpl>> input_impls_;  // the tensors behind input_data_
  absl::flat_hash_map<const TensorImpl*, Value*> lifted_;
  std::vector<std::weak_ptr<TensorImpl>> live_;
  std::vector<SymbolInfo> value_symbols_;  // RuntimeInt's symbols of this segment
  absl::flat_hash_set<const Value*> no_grad_values_;  // recorded while grad mode was off

  // Concrete tensors an in-place op made lazy, with their data (handed back after the run).
  std::vector<std::pair<std::shared_ptr<TensorImpl>, HostTensor>> made_lazy_;
  // Symbolic types of tensors that earlier segments materialized (a later segment re-imports
  // them with their lone-symbol dimensions kept symbolic).
  absl::flat_hash_map<const TensorImpl*, std::pair<std::weak_ptr<TensorImpl>, TensorType>>
      materialized_types_;

  std::vector<proto::GraphBreak> breaks_;
  std::vector<proto::Graph> segment_graphs_;
  std::vector<std::string> segment_texts_;
  int segments_compiled_ = 0;
  int segments_cached_ = 0;
  bool took_runtime_ints_ = false;
  Segment last_segment_;
};

// The active trace as a LazyTrace, or nullptr (eager mode, or another kind of trace).
LazyTrace* ActiveLazyTrace();

}  // namespace coil::capture_internal

#endif  // COIL_CAPTURE_INTERNAL_LAZY_TRACE_H_

// LazyTrace: recording ops into segment graphs, graph breaks, and running segments.
#include "capture/internal/lazy_trace.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "capture/error.h"
#include "capture/internal/guards.h"
#include "capture/internal/output_aliases.h"
#include "capture/logging.h"
#include "capture/name_scope.h"
#include "ir/check.h"
#include "ir/graph_hash.h"
#include "ir/op_registry.h"
#include "ir/printer.h"

namespace coil::capture_internal {
namespace {

SourceLoc ToSourceLoc(const std::source_location& loc) {
  return SourceLoc{loc.file_name(), static_cast<int32_t>(loc.line()),
                   static_cast<int32_t>(loc.column()), loc.function_name()};
}

std::string FileLine(const std::source_location& loc) {
  return absl::StrCat(loc.file_name(), ":", loc.line());
}

TensorType StaticType(const HostTensor& data) {
  std::vector<SymExpr> shape(data.shape().begin(), data.shape().end());
  return TensorType(data.dtype(), std::move(shape));
}

void CollectSymbols(const SymExpr& e, absl::flat_hash_set<std::string>& out) {
  for (std::string& s : e.Symbols()) out.insert(std::move(s));
}

}  // namespace

LazyTrace* ActiveLazyTrace() { return dynamic_cast<LazyTrace*>(ActiveTrace()); }

LazyTrace::LazyTrace(TraceOptions options) : options_(std::move(options)) {
  COIL_CHECK(options_.backend != nullptr && options_.cache != nullptr);
  StartSegment();
}

LazyTrace::~LazyTrace() {
  for (auto& [impl, data] : made_lazy_) {
    if (impl->is_lazy() && impl->lazy().trace == this) impl->Materialize(data);
  }
}

void LazyTrace::StartSegment() {
  graph_ = std::make_shared<Graph>(absl::StrCat(options_.fn_name, "_", segment_));
  builder_ = std::make_unique<GraphBuilder>(*graph_);
  input_data_.clear();
  input_sources_.clear();
  input_impls_.clear();
  lifted_.clear();
  live_.clear();
  value_symbols_.clear();
  no_grad_values_.clear();
  made_lazy_.clear();
}

void LazyTrace::AddSymbol(const SymbolInfo& symbol) {
  symbols_.push_back(symbol);
  hints_[symbol.name] = symbol.hint;
}

SymRanges LazyTrace::Ranges() const {
  SymRanges ranges;
  for (const SymbolInfo& s : symbols_) {
    ranges[s.name] = SymRange{s.min, s.max == 0 ? INT64_MAX : s.max};
  }
  return ranges;
}

std::vector<int64_t> LazyTrace::Hints(const TensorType& type) const {
  std::vector<int64_t> hints;
  hints.reserve(type.shape.size());
  for (const SymExpr& d : type.shape) {
    if (d.is_constant()) {
      hints.push_back(d.constant());
      continue;
    }
    absl::StatusOr<int64_t> v = d.Evaluate(hints_);
    COIL_CHECK(v.ok()) << "size " << d.ToString() << " has no hint: " << v.status().message();
    hints.push_back(*v);
  }
  return hints;
}

Tensor LazyTrace::MakeLazy(Value* value) {
  auto impl = std::make_shared<TensorImpl>(LazyRef{this, value, segment_}, value->type(),
                                           Hints(value->type()));
  live_.push_back(impl);
  return Tensor(std::move(impl));
}

std::vector<Tensor> LazyTrace::AddArguments(absl::Span<const Tensor> args,
                                            absl::Span<const TensorType> types,
                                            absl::Span<const std::string> names) {
  COIL_CHECK(args.size() == types.size() && args.size() == names.size());
  std::vector<Tensor> lazy;
  lazy.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    Value* v = builder_->Input(types[i], names[i]);
    input_data_.push_back(args[i].impl()->data());
    input_sources_.push_back(InputSource{static_cast<int>(i), nullptr});
    input_impls_.push_back(args[i].impl_ptr());
    lazy.push_back(MakeLazy(v));
  }
  return lazy;
}

Value* LazyTrace::ValueFor(const Tensor& t) {
  TensorImpl* impl = t.impl();
  if (impl == nullptr) {
    throw Error(absl::InvalidArgumentError("an undefined tensor was passed to an op"));
  }
  if (impl->is_lazy()) {
    const LazyRef& ref = impl->lazy();
    if (ref.trace != this || ref.segment != segment_) {
      throw Error(absl::FailedPreconditionError(
          "a lazy tensor of another compiled call was used (tensors made while tracing must not "
          "escape the traced function except as its results)"));
    }
    return ref.value;
  }
  auto it = lifted_.find(impl);
  if (it != lifted_.end()) return it->second;
  // A concrete tensor not seen before: a graph input, kept by reference.
  const HostTensor& data = impl->data();
  TensorType type = StaticType(data);
  auto mt = materialized_types_.find(impl);
  if (mt != materialized_types_.end() && !mt->second.first.expired()) {
    // Keep the dimensions that are lone symbols (BindSymbols binds them from this input).
    const TensorType& sym = mt->second.second;
    if (sym.rank() == type.rank()) {
      for (int64_t d = 0; d < type.rank(); ++d) {
        if (sym.shape[d].is_symbol()) type.shape[d] = sym.shape[d];
      }
    }
  }
  Value* v = builder_->Input(std::move(type), absl::StrCat("l", input_data_.size()));
  input_data_.push_back(data);
  input_sources_.push_back(InputSource{-1, t.impl_ptr()});
  input_impls_.push_back(t.impl_ptr());
  lifted_[impl] = v;
  return v;
}

SymExpr LazyTrace::RuntimeInt(int64_t value, absl::string_view stem, const SymExpr& draw) {
  // Named by its place in the segment, so the segment's structural hash does not depend on
  // the value (the cached artifact serves every call).
  std::string name = absl::StrCat(stem, value_symbols_.size());
  HostTensor data = HostTensor::Zeros(proto::INT64, {});
  data.StoreInt(0, value);
  auto impl = std::make_shared<TensorImpl>(data);
  builder_->Input(TensorType{proto::INT64, {}}, name);
  input_data_.push_back(data);
  input_sources_.push_back(InputSource{-1, impl, draw});
  input_impls_.push_back(impl);
  value_symbols_.push_back(SymbolInfo{name, 0, 0, 0, name});
  took_runtime_ints_ = true;
  return SymExpr::Symbol(name);
}

std::vector<Tensor> LazyTrace::Record(absl::string_view op, const std::vector<Tensor>& inputs,
                                      AttrMap attrs, const std::source_location& loc) {
  std::vector<Value*> values;
  values.reserve(inputs.size());
  for (const Tensor& t : inputs) values.push_back(ValueFor(t));
  absl::StatusOr<std::vector<Value*>> out =
      builder_->OpMulti(op, std::move(values), std::move(attrs), ToSourceLoc(loc));
  if (!out.ok()) {
    // The builder's message names the op and the source location already.
    absl::string_view message = out.status().message();
    bool named = absl::StartsWith(message, op);
    bool located = absl::StrContains(message, "(at ");
    throw Error(absl::Status(
        out.status().code(),
        absl::StrCat(named ? "" : absl::StrCat(op, ": "), message,
                     located ? "" : absl::StrCat(" (at ", FileLine(loc), ")"), " (while tracing ",
                     options_.fn_name, ")")));
  }
  // Provenance: the module path of the open NameScopes names the node.
  if (const std::string& path = NameScope::CurrentPath(); !path.empty() && !out->empty()) {
    (*out)[0]->producer()->set_name(path);
  }
  // Values recorded under no_grad (a module's buffer update) get no grad_fn when they run.
  if (!GradEnabled()) no_grad_values_.insert(out->begin(), out->end());
  const OpSchema* schema = OpRegistry::Global().Find(op);
  std::vector<Tensor> results;
  results.reserve(out->size());
  for (size_t k = 0; k < out->size(); ++k) {
    int m = schema != nullptr ? schema->mutated_input : -1;
    if (k == 0 && m >= 0 && m < static_cast<int>(inputs.size())) {
      // In-place: the mutated tensor now stands for the node's output.
      const std::shared_ptr<TensorImpl>& impl = inputs[m].impl_ptr();
      if (impl->is_lazy()) {
        impl->mutable_lazy().value = (*out)[0];
      } else {
        made_lazy_.push_back({impl, impl->data()});
        lifted_.erase(impl.get());
        impl->BecomeLazy(LazyRef{this, (*out)[0], segment_}, (*out)[0]->type());
        live_.push_back(impl);
      }
      results.push_back(inputs[m]);
      continue;
    }
    results.push_back(MakeLazy((*out)[k]));
  }
  return results;
}

void LazyTrace::ThrowBreak(absl::string_view reason, absl::string_view op,
                           const std::source_location& loc) const {
  throw Error(absl::FailedPreconditionError(
      absl::StrCat("graph break in ", options_.fn_name, " at ", FileLine(loc), ": ", reason,
                   op.empty() ? "" : absl::StrCat(" (op ", op, ")"),
                   "; fullgraph=true does not allow graph breaks")));
}

void LazyTrace::AddBreak(absl::string_view reason, absl::string_view op,
                         const std::source_location& loc) {
  proto::GraphBreak b;
  b.set_reason(std::string(reason));
  b.set_op(std::string(op));
  proto::SourceLocation* l = b.mutable_loc();
  l->set_file(loc.file_name());
  l->set_line(static_cast<int32_t>(loc.line()));
  l->set_column(static_cast<int32_t>(loc.column()));
  l->set_function(loc.function_name());
  breaks_.push_back(std::move(b));
  if (LogEnabled(LogStream::kGraphBreaks)) {
    LogLine(LogStream::kGraphBreaks,
            absl::StrCat(options_.fn_name, ": graph break at ", FileLine(loc), ": ", reason,
                         op.empty() ? "" : absl::StrCat(" (op ", op, ")")));
  }
}

HostTensor LazyTrace::Materialize(const Tensor& t, absl::string_view reason,
                                  const std::source_location& loc) {
  TensorImpl* impl = t.impl();
  if (!impl->is_lazy()) return impl->data();
  if (impl->lazy().trace != this) {
    throw Error(absl::FailedPreconditionError("reading a lazy tensor of another trace"));
  }
  Node* producer = impl->lazy().value->producer();
  std::string op = producer != nullptr ? producer->op() : "";
  std::string why = absl::StrCat(reason, " reads a tensor's value");
  if (options_.fullgraph) ThrowBreak(why, op, loc);
  AddBreak(why, op, loc);
  RunSegment({}, /*always_compile=*/false);
  StartSegment();
  return impl->data();
}

std::vector<HostTensor> LazyTrace::BreakForOp(absl::string_view op, absl::string_view reason,
                                              const std::vector<Tensor>& inputs,
                                              const std::source_location& loc) {
  if (options_.fullgraph) ThrowBreak(reason, op, loc);
  AddBreak(reason, op, loc);
  RunSegment({}, /*always_compile=*/false);
  StartSegment();
  std::vector<HostTensor> data;
  for (const Tensor& t : inputs) {
    if (t.impl()->is_lazy()) {
      throw Error(absl::FailedPreconditionError(absl::StrCat(op, ": a lazy tensor of another trace")));
    }
    data.push_back(t.impl()->data());
  }
  return data;
}

void LazyTrace::RecordGuard(proto::Guard::Relation relation, const SymExpr& lhs,
                            const SymExpr& rhs, bool holds, const std::source_location& loc) {
  SymExpr a = lhs, b = rhs;
  if (!holds) NegateRelation(relation, a, b);
  SymRanges ranges = Ranges();
  Truth truth = Truth::kUnknown;
  switch (relation) {
    case proto::Guard::EQ:
      truth = ProveEq(a, b, ranges);
      break;
    case proto::Guard::NE:
      truth = ProveEq(a, b, ranges) == Truth::kFalse ? Truth::kTrue : Truth::kUnknown;
      break;
    case proto::Guard::LT:
      truth = ProveLt(a, b, ranges);
      break;
    case proto::Guard::LE:
      truth = ProveLe(a, b, ranges);
      break;
    default:
      break;
  }
  if (truth == Truth::kTrue) return;  // implied by the symbols' ranges
  for (const GuardInfo& g : guards_) {
    if (g.relation == relation && g.lhs == a && g.rhs == b) return;
  }
  GuardInfo g{relation, a, b, absl::StrCat("size relation ", RelationText(relation, a, b)),
              ToSourceLoc(loc)};
  guards_.push_back(g);
  graph_->guards().push_back(g);
  if (LogEnabled(LogStream::kGuards)) {
    LogLine(LogStream::kGuards, absl::StrCat(options_.fn_name, ": guard ",
                                             RelationText(relation, a, b), " at ", FileLine(loc)));
  }
}

std::vector<HostTensor> LazyTrace::RunSegment(const std::vector<Value*>& results,
                                              bool always_compile) {
  // Graph outputs: the results, then every live lazy tensor of this segment.
  std::vector<Value*> outputs = results;
  absl::flat_hash_map<Value*, int> index;
  for (size_t i = 0; i < results.size(); ++i) index.emplace(results[i], static_cast<int>(i));
  std::vector<std::pair<std::shared_ptr<TensorImpl>, int>> fill;
  for (const std::weak_ptr<TensorImpl>& w : live_) {
    std::shared_ptr<TensorImpl> impl = w.lock();
    if (impl == nullptr || !impl->is_lazy() || impl->lazy().trace != this) continue;
    Value* v = impl->lazy().value;
    auto [it, inserted] = index.emplace(v, static_cast<int>(outputs.size()));
    if (inserted) outputs.push_back(v);
    fill.push_back({std::move(impl), it->second});
  }
  // Values two results view (output_aliases.h): returned too, so the results can be made
  // views of them again after each run.
  for (Value* base : SharedViewBases(outputs, static_cast<int>(results.size()))) {
    if (index.emplace(base, static_cast<int>(outputs.size())).second) outputs.push_back(base);
  }
  graph_->SetOutputs(outputs);

  // Symbols used by the inputs and guards.
  absl::flat_hash_set<std::string> used;
  for (Value* in : graph_->inputs()) {
    for (const SymExpr& d : in->type().shape) CollectSymbols(d, used);
  }
  for (const GuardInfo& g : graph_->guards()) {
    CollectSymbols(g.lhs, used);
    CollectSymbols(g.rhs, used);
  }
  for (const SymbolInfo& s : symbols_) {
    if (used.contains(s.name)) graph_->symbols().push_back(s);
  }
  for (const SymbolInfo& s : value_symbols_) graph_->symbols().push_back(s);

  std::vector<HostTensor> data(outputs.size());
  std::shared_ptr<CompiledGraph> compiled;
  std::shared_ptr<GradNode> grad_node;
  std::vector<bool> on_tape;  // per output, with grad_node: whether it requires grad
  // Outputs that are inputs needing gradients (a segment without nodes): their tensors get an
  // identity node to the input.
  absl::flat_hash_map<int, std::shared_ptr<TensorImpl>> passthrough;
  std::string key;
  if (graph_->num_nodes() == 0 && !always_compile) {
    // Nothing to run: every output is an input.
    absl::flat_hash_map<Value*, int> input_index;
    for (size_t i = 0; i < graph_->inputs().size(); ++i) {
      input_index[graph_->inputs()[i]] = static_cast<int>(i);
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      int in = input_index.at(outputs[i]);
      data[i] = input_data_[in];
      if (GradEnabled() && NeedsGrad(input_impls_[in].get())) passthrough[i] = input_impls_[in];
    }
  } else {
    key = StructuralHashHex(*graph_);
    key.push_back(':');
    for (const HostTensor& in : input_data_) key.push_back(in.IsContiguous() ? 'c' : 'n');
    std::vector<bool> needs = InputsNeedingGrad(input_impls_);
    auto it = options_.cache->compiled.find(key);
    if (!needs.empty()) {
      // Inputs need gradients: the training compile, and one node on the autograd tape.
      TrainingRun run = RunForTraining(
          *options_.backend, *graph_, key, options_.cache->training, input_impls_, input_data_,
          needs, absl::StrCat(options_.fn_name, " (graph ", graph_->name(), ")"));
      if (run.compiled) {
        ++segments_compiled_;
      } else {
        ++segments_cached_;
      }
      data = std::move(run.outputs);
      grad_node = std::move(run.node);
      on_tape = std::move(run.requires_grad);
    } else if (it != options_.cache->compiled.end()) {
      compiled = it->second;
      ++segments_cached_;
    } else {
      if (LogEnabled(LogStream::kOutputCode)) {
        LogLine(LogStream::kOutputCode,
                absl::StrCat(options_.fn_name, ": graph for ", options_.backend->name(), "\n",
                             PrintGraph(*graph_)));
      }
      absl::StatusOr<std::unique_ptr<CompiledGraph>> c = options_.backend->Compile(*graph_);
      if (!c.ok()) {
        throw Error(absl::Status(c.status().code(),
                                 absl::StrCat("backend ", options_.backend->name(),
                                              " failed to compile ", graph_->name(), ": ",
                                              c.status().message())));
      }
      compiled = std::shared_ptr<CompiledGraph>(std::move(*c));
      options_.cache->compiled.emplace(key, compiled);
      ++segments_compiled_;
    }
    if (grad_node == nullptr) {
      absl::StatusOr<std::vector<HostTensor>> out = compiled->Run(input_data_);
      if (!out.ok()) {
        throw Error(absl::Status(out.status().code(),
                                 absl::StrCat("running ", graph_->name(), ": ",
                                              out.status().message())));
      }
      data = std::move(*out);
    }
    COIL_CHECK(data.size() == outputs.size());
    segment_graphs_.push_back(graph_->ToProto());
    segment_texts_.push_back(PrintGraph(*graph_));
  }

  // Tensors made lazy by an in-place op get their own (written-through) data back.
  absl::flat_hash_map<const TensorImpl*, const HostTensor*> original;
  for (const auto& [impl, d] : made_lazy_) original[impl.get()] = &d;
  for (auto& [impl, i] : fill) {
    TensorType type = impl->type();
    auto o = original.find(impl.get());
    impl->Materialize(o != original.end() ? *o->second : data[i]);
    if (grad_node != nullptr && on_tape[i] && !no_grad_values_.contains(outputs[i])) {
      SetGradFn(impl.get(), grad_node, i);
    }
    if (auto p = passthrough.find(i); p != passthrough.end() && p->second != impl) {
      SetGradFn(impl.get(), IdentityNodeOf(p->second), 0);
    }
    if (!type.IsStatic()) materialized_types_[impl.get()] = {impl, std::move(type)};
  }
  made_lazy_.clear();

  std::vector<Tensor> extra;
  for (size_t i = results.size(); i < data.size(); ++i) {
    auto impl = std::make_shared<TensorImpl>(data[i]);
    if (grad_node != nullptr && on_tape[i] && !no_grad_values_.contains(outputs[i])) {
      SetGradFn(impl.get(), grad_node, static_cast<int>(i));
    }
    extra.push_back(Tensor(std::move(impl)));
  }
  last_segment_ = Segment{compiled, input_sources_, static_cast<int>(results.size()), graph_,
                          key, std::move(extra)};
  ++segment_;
  std::vector<HostTensor> result_data(data.begin(), data.begin() + results.size());
  return result_data;
}

std::vector<Tensor> LazyTrace::Finish(std::vector<Tensor> outputs) {
  std::vector<Value*> values;
  values.reserve(outputs.size());
  for (const Tensor& t : outputs) values.push_back(ValueFor(t));
  // Without breaks the last segment is the whole function: compile it even when it is empty,
  // since its artifact is what later calls run.
  RunSegment(values, /*always_compile=*/breaks_.empty());
  // Lazy results were made concrete in place; the others were concrete already.
  return outputs;
}

}  // namespace coil::capture_internal

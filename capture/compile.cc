// coil::compile's core: the per-function cache of compiled artifacts (FunctionCache), the
// dynamic-shape policy, recompiles and the eager fallback; mark_dynamic; Explanation.
#include <algorithm>
#include <cctype>
#include <memory>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "capture/compile.h"
#include "capture/dispatch.h"
#include "capture/internal/guards.h"
#include "capture/internal/lazy_trace.h"
#include "capture/internal/output_aliases.h"
#include "capture/internal/tensor_impl.h"
#include "capture/logging.h"
#include "capture/random.h"
#include "ir/check.h"

namespace coil {

using capture_internal::FlatArgs;
using capture_internal::GuardProgram;
using capture_internal::InputSource;
using capture_internal::LazyTrace;
using capture_internal::OutputAlias;
using capture_internal::TensorImpl;
using capture_internal::TrainingRun;

void mark_dynamic(Tensor& t, int64_t dim, int64_t min, int64_t max) {
  if (!t.defined()) throw Error(absl::InvalidArgumentError("mark_dynamic: undefined tensor"));
  int64_t rank = t.dim();
  if (dim < 0) dim += rank;
  if (dim < 0 || dim >= rank) {
    throw Error(absl::InvalidArgumentError(
        absl::StrCat("mark_dynamic: dim ", dim, " is out of range for a tensor of rank ", rank)));
  }
  if (min < 0 || (max != 0 && max < min)) {
    throw Error(absl::InvalidArgumentError(
        absl::StrCat("mark_dynamic: bad range [", min, ", ", max, "]")));
  }
  std::vector<capture_internal::DynamicDim>& dims = t.impl()->dynamic_dims();
  dims.erase(std::remove_if(dims.begin(), dims.end(),
                            [&](const capture_internal::DynamicDim& d) { return d.dim == dim; }),
             dims.end());
  dims.push_back({dim, min, max});
}

std::string Explanation::ToString() const {
  std::string s = absl::StrCat(graph_count, " graph(s), ", breaks.size(), " graph break(s)\n");
  for (size_t i = 0; i < breaks.size(); ++i) {
    absl::StrAppend(&s, "  break ", i + 1, ": ", breaks[i].reason,
                    breaks[i].op.empty() ? "" : absl::StrCat(" (op ", breaks[i].op, ")"), " at ",
                    breaks[i].location, "\n");
  }
  absl::StrAppend(&s, "guards:\n");
  for (const std::string& g : guards) absl::StrAppend(&s, "  ", g, "\n");
  for (size_t i = 0; i < graphs.size(); ++i) {
    absl::StrAppend(&s, "graph ", i, ":\n", graphs[i]);
    if (!graphs[i].empty() && graphs[i].back() != '\n') s.push_back('\n');
  }
  return s;
}

namespace capture_internal {
namespace {

// The metadata of one call's arguments, for automatic dynamic shapes.
struct ArgMeta {
  std::vector<std::vector<int64_t>> shapes;
  std::vector<DType> dtypes;
  std::vector<bool> contiguous;
  std::vector<double> scalars;
  std::vector<int32_t> lengths;
};

ArgMeta MetaOf(const FlatArgs& args) {
  ArgMeta m;
  for (const Tensor* t : args.tensors) {
    const HostTensor& d = t->impl()->data();
    m.shapes.push_back(d.shape());
    m.dtypes.push_back(d.dtype());
    m.contiguous.push_back(d.IsContiguous());
  }
  m.scalars.assign(args.scalars.begin(), args.scalars.end());
  m.lengths.assign(args.list_lengths.begin(), args.list_lengths.end());
  return m;
}

// Whether `b` differs from `a` in sizes only (same ranks, dtypes, layout, scalars).
bool OnlySizesChanged(const ArgMeta& a, const ArgMeta& b) {
  if (a.shapes.size() != b.shapes.size() || a.dtypes != b.dtypes ||
      a.contiguous != b.contiguous || a.scalars != b.scalars || a.lengths != b.lengths) {
    return false;
  }
  for (size_t i = 0; i < a.shapes.size(); ++i) {
    if (a.shapes[i].size() != b.shapes[i].size()) return false;
  }
  return true;
}

std::string TensorName(const FlatArgs& args, size_t i) {
  auto [pos, idx] = args.tensor_origin[i];
  return idx < 0 ? absl::StrCat("arg", pos) : absl::StrCat("arg", pos, "[", idx, "]");
}

// The tensors behind a segment's graph inputs, in graph input order.
std::vector<Tensor> SourceTensors(const std::vector<InputSource>& sources, const FlatArgs& args) {
  std::vector<Tensor> out;
  out.reserve(sources.size());
  for (const InputSource& src : sources) {
    out.push_back(src.arg >= 0 ? *args.tensors[src.arg] : Tensor(src.lifted));
  }
  return out;
}

std::vector<Tensor> Wrap(std::vector<HostTensor> data, int n) {
  std::vector<Tensor> out;
  out.reserve(n);
  for (int i = 0; i < n; ++i) out.push_back(Tensor(std::make_shared<TensorImpl>(std::move(data[i]))));
  return out;
}

}  // namespace

struct FunctionCache::State {
  struct Entry {
    GuardProgram guards;
    ArgMeta meta;
    bool segmented = false;
    // A function without breaks: its one graph.
    std::shared_ptr<CompiledGraph> compiled;
    std::vector<InputSource> inputs;
    int num_results = 0;
    // Its graph, for the training compile (or the inference one when it ran for training).
    std::shared_ptr<const Graph> graph;
    std::string key;
    // Results that alias an input or another result (regenerated as views after each run).
    std::vector<OutputAlias> aliases;
    // A segmented function: how to trace it again.
    std::vector<TensorType> arg_types;
    std::vector<std::string> arg_names;
    std::vector<SymbolInfo> symbols;
  };

  CompileOptions options;
  std::shared_ptr<Backend> backend;
  SegmentCache segments;
  std::vector<Entry> entries;
  std::set<std::pair<int, int64_t>> auto_dynamic;  // (flat tensor index, dim)
  bool warned_limit = false;
  CompileStats stats;
  proto::CaptureResult result;
  std::vector<proto::CaptureResult> results;  // every compile's, oldest first
  Explanation explanation;

  TraceOptions trace_options() {
    return TraceOptions{options.name, options.fullgraph, backend.get(), &segments};
  }
  std::vector<Tensor> Concrete(const FlatArgs& args) {
    std::vector<Tensor> t;
    t.reserve(args.tensors.size());
    for (const Tensor* p : args.tensors) t.push_back(*p);
    return t;
  }
  absl::Status Validate(const FlatArgs& args);
  std::vector<Tensor> RunCompiled(Entry& e, const FlatArgs& args);
  std::vector<Tensor> Replay(const Entry& e, const FlatArgs& args, Runner run);
  std::vector<Tensor> Compile(const FlatArgs& args, Runner run, const std::string& reason);
};

absl::Status FunctionCache::State::Validate(const FlatArgs& args) {
  for (size_t i = 0; i < args.tensors.size(); ++i) {
    const TensorImpl* impl = args.tensors[i]->impl();
    if (impl == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          options.name, ": argument ", TensorName(args, i), " is an undefined tensor"));
    }
    if (impl->is_lazy()) {
      return absl::InvalidArgumentError(
          absl::StrCat(options.name, ": argument ", TensorName(args, i),
                       " is a lazy tensor of a trace that is no longer running"));
    }
  }
  return absl::OkStatus();
}

namespace {

// Fresh run-time counters for a cached call (InputSource::draw), drawn from the default
// generator in the trace's order; the draw sizes use the symbols the inputs' shapes bind.
void DrawRuntimeCounters(const std::vector<InputSource>& sources, const Graph& graph,
                         std::vector<HostTensor>& inputs) {
  bool any = false;
  for (const InputSource& src : sources) any = any || src.draw.has_value();
  if (!any) return;
  absl::flat_hash_map<std::string, int64_t> sizes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::vector<SymExpr>& shape = graph.inputs()[i]->type().shape;
    for (size_t d = 0; d < shape.size() && d < inputs[i].shape().size(); ++d) {
      if (shape[d].is_symbol()) sizes[shape[d].ToString()] = inputs[i].shape()[d];
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!sources[i].draw.has_value()) continue;
    absl::StatusOr<int64_t> n = sources[i].draw->Evaluate(sizes);
    COIL_CHECK(n.ok()) << "a draw's size " << sources[i].draw->ToString()
                       << " uses a symbol no input binds: " << n.status().message();
    HostTensor counter = HostTensor::Zeros(proto::INT64, {});
    counter.StoreInt(0, capture_internal::DrawCounters(*n).offset);
    inputs[i] = counter;
  }
}

}  // namespace

std::vector<Tensor> FunctionCache::State::RunCompiled(Entry& e, const FlatArgs& args) {
  std::vector<HostTensor> inputs;
  std::vector<std::shared_ptr<TensorImpl>> impls;
  inputs.reserve(e.inputs.size());
  for (const InputSource& src : e.inputs) {
    std::shared_ptr<TensorImpl> impl = src.arg >= 0 ? args.tensors[src.arg]->impl_ptr() : src.lifted;
    if (impl->is_lazy()) {
      throw Error(absl::FailedPreconditionError(
          absl::StrCat(options.name, ": a tensor the function reads is lazy")));
    }
    inputs.push_back(impl->data());
    impls.push_back(std::move(impl));
  }
  DrawRuntimeCounters(e.inputs, *e.graph, inputs);
  std::vector<bool> needs = InputsNeedingGrad(impls);
  if (!needs.empty()) {
    // Inputs need gradients: one node on the autograd tape.
    TrainingRun run = RunForTraining(*backend, *e.graph, e.key, segments.training, impls, inputs,
                                     needs, absl::StrCat(options.name, " (graph ", e.graph->name(), ")"));
    if (run.compiled) ++stats.graphs_compiled;
    const int n = static_cast<int>(run.outputs.size());
    std::vector<Tensor> out = Wrap(std::move(run.outputs), n);
    for (int i = 0; i < n; ++i) {
      if (run.requires_grad[i]) SetGradFn(out[i].impl(), run.node, i);
    }
    RestoreOutputAliases(e.aliases, *e.graph, SourceTensors(e.inputs, args), out);
    out.resize(e.num_results);
    return out;
  }
  if (e.compiled == nullptr) {  // it ran for training only so far
    absl::StatusOr<std::unique_ptr<CompiledGraph>> c = backend->Compile(*e.graph);
    if (!c.ok()) {
      throw Error(absl::Status(c.status().code(),
                               absl::StrCat("backend ", backend->name(), " failed to compile ",
                                            e.graph->name(), ": ", c.status().message())));
    }
    e.compiled = std::shared_ptr<CompiledGraph>(std::move(*c));
    ++stats.graphs_compiled;
  }
  absl::StatusOr<std::vector<HostTensor>> out = e.compiled->Run(inputs);
  if (!out.ok()) {
    throw Error(absl::Status(out.status().code(),
                             absl::StrCat(options.name, ": ", out.status().message())));
  }
  const int n = static_cast<int>(out->size());
  std::vector<Tensor> results = Wrap(*std::move(out), n);
  RestoreOutputAliases(e.aliases, *e.graph, SourceTensors(e.inputs, args), results);
  results.resize(e.num_results);
  return results;
}

std::vector<Tensor> FunctionCache::State::Replay(const Entry& e, const FlatArgs& args,
                                                 Runner run) {
  LazyTrace trace(trace_options());
  absl::flat_hash_map<std::string, int64_t> hints;
  for (size_t i = 0; i < e.arg_types.size(); ++i) {
    const std::vector<int64_t>& shape = args.tensors[i]->impl()->data().shape();
    for (size_t d = 0; d < shape.size(); ++d) {
      if (e.arg_types[i].shape[d].is_symbol()) hints[e.arg_types[i].shape[d].ToString()] = shape[d];
    }
  }
  for (SymbolInfo s : e.symbols) {
    s.hint = hints[s.name];
    trace.AddSymbol(s);
  }
  std::vector<Tensor> lazy = trace.AddArguments(Concrete(args), e.arg_types, e.arg_names);
  ++stats.fn_calls;
  std::vector<Tensor> out;
  {
    ScopedActiveTrace scope(&trace);
    out = run(lazy);
  }
  out = trace.Finish(std::move(out));
  stats.graph_breaks += static_cast<int64_t>(trace.breaks().size());
  stats.graphs_compiled += trace.segments_compiled();
  return out;
}

namespace {

// The sizes of the symbols (not from mark_dynamic) that an error message names ("s2 vs 32").
std::vector<int64_t> SpecializableSizes(absl::string_view message,
                                        const std::vector<SymbolInfo>& symbols) {
  std::vector<int64_t> sizes;
  for (const SymbolInfo& s : symbols) {
    if (s.min != 2 || s.max != 0) continue;  // a mark_dynamic range: the user asked for it
    for (size_t pos = message.find(s.name); pos != absl::string_view::npos;
         pos = message.find(s.name, pos + 1)) {
      size_t end = pos + s.name.size();
      bool starts = pos == 0 || !std::isalnum(static_cast<unsigned char>(message[pos - 1]));
      bool ends = end == message.size() || !std::isalnum(static_cast<unsigned char>(message[end]));
      if (starts && ends) {
        sizes.push_back(s.hint);
        break;
      }
    }
  }
  return sizes;
}

}  // namespace

std::vector<Tensor> FunctionCache::State::Compile(const FlatArgs& args, Runner run,
                                                  const std::string& reason) {
  const bool dynamic_all = options.dynamic == DynamicMode::kDynamic;
  Entry e;
  std::vector<std::vector<GuardProgram::Dim>> dims;
  std::vector<Tensor> out;
  // Sizes specialized after a symbolic trace failed on them (see below).
  absl::flat_hash_set<int64_t> specialized;
  std::unique_ptr<LazyTrace> trace_ptr;
  for (;;) {
    e = Entry();
    e.meta = MetaOf(args);
    // Symbols: duck sizing (equal sizes share a symbol); sizes 0 and 1 stay static.
    absl::flat_hash_map<int64_t, int> by_size;
    dims.assign(args.tensors.size(), {});
    for (size_t i = 0; i < args.tensors.size(); ++i) {
      const TensorImpl* impl = args.tensors[i]->impl();
      const HostTensor& data = impl->data();
      std::vector<SymExpr> shape;
      for (int64_t d = 0; d < data.rank(); ++d) {
        int64_t size = data.shape()[d];
        const DynamicDim* mark = nullptr;
        for (const DynamicDim& m : impl->dynamic_dims()) {
          if (m.dim == d) mark = &m;
        }
        if (mark != nullptr && (size < mark->min || (mark->max != 0 && size > mark->max))) {
          throw Error(absl::InvalidArgumentError(absl::StrCat(
              options.name, ": ", TensorName(args, i), " dim ", d, " has size ", size,
              ", outside its mark_dynamic range [", mark->min, ", ",
              mark->max == 0 ? "inf" : absl::StrCat(mark->max), "]")));
        }
        bool automatic = auto_dynamic.count({static_cast<int>(i), d}) > 0;
        bool symbolic = mark != nullptr ||
                        ((dynamic_all || automatic) && size >= 2 && !specialized.count(size));
        if (!symbolic) {
          shape.push_back(size);
          dims[i].push_back({size, -1});
          continue;
        }
        auto [it, inserted] = by_size.emplace(size, static_cast<int>(e.symbols.size()));
        if (inserted) {
          std::string name = absl::StrCat("s", e.symbols.size());
          e.symbols.push_back(SymbolInfo{name, mark != nullptr ? mark->min : 2,
                                         mark != nullptr ? mark->max : 0, size});
          if (LogEnabled(LogStream::kDynamic)) {
            LogLine(LogStream::kDynamic,
                    absl::StrCat(options.name, ": ", TensorName(args, i), " dim ", d, " = ", size,
                                 " is symbol ", name,
                                 mark != nullptr ? " (mark_dynamic)"
                                 : automatic     ? " (automatic dynamic)"
                                                 : " (dynamic)"));
          }
        } else if (mark != nullptr) {
          SymbolInfo& s = e.symbols[it->second];
          s.min = std::max(s.min, mark->min);
          if (mark->max != 0) s.max = s.max == 0 ? mark->max : std::min(s.max, mark->max);
        }
        shape.push_back(SymExpr::Symbol(e.symbols[it->second].name));
        dims[i].push_back({size, it->second});
      }
      e.arg_types.push_back(TensorType(data.dtype(), std::move(shape)));
      e.arg_names.push_back(TensorName(args, i));
    }

    trace_ptr = std::make_unique<LazyTrace>(trace_options());
    LazyTrace& attempt = *trace_ptr;
    for (const SymbolInfo& s : e.symbols) attempt.AddSymbol(s);
    std::vector<Tensor> lazy = attempt.AddArguments(Concrete(args), e.arg_types, e.arg_names);
    ++stats.fn_calls;
    try {
      {
        ScopedActiveTrace scope(&attempt);
        out = run(lazy);
      }
      out = attempt.Finish(std::move(out));
      break;
    } catch (const Error& error) {
      // A symbolic size met a static one where an op needs them equal (a dynamic hidden size
      // against a parameter's): like torch's specialization on a guard, the sizes the error names
      // become static and the function is traced again. Sizes named by mark_dynamic stay
      // symbolic, so such an error reaches the caller.
      // Only before any segment ran: a retrace must not repeat side effects on real data.
      if (!attempt.breaks().empty()) throw;
      std::vector<int64_t> sizes = SpecializableSizes(error.status().message(), e.symbols);
      bool progress = false;
      for (int64_t size : sizes) progress |= specialized.insert(size).second;
      if (!progress) throw;
      if (LogEnabled(LogStream::kDynamic)) {
        LogLine(LogStream::kDynamic,
                absl::StrCat(options.name, ": specializing size(s) ", absl::StrJoin(sizes, ", "),
                             " and tracing again: ", error.status().message()));
      }
    }
  }
  LazyTrace& trace = *trace_ptr;

  // Guards.
  for (const SymbolInfo& s : e.symbols) e.guards.AddSymbol(s.name, s.min, s.max);
  for (size_t i = 0; i < args.tensors.size(); ++i) {
    const HostTensor& data = args.tensors[i]->impl()->data();
    e.guards.AddTensor(TensorName(args, i), data.dtype(), args.tensors[i]->device(),
                       data.IsContiguous(), dims[i]);
  }
  for (size_t i = 0; i < args.scalars.size(); ++i) {
    e.guards.AddScalar(absl::StrCat("arg", args.scalar_origin[i]), args.scalars[i]);
  }
  e.guards.SetListLengths(std::vector<int32_t>(args.list_lengths.begin(), args.list_lengths.end()));
  for (const GuardInfo& g : trace.guards()) e.guards.AddRelation(g.relation, g.lhs, g.rhs);

  // A function that drew random numbers (dropout from the default generator) takes each draw's
  // counter as a run-time input: a cached call draws again (RunCompiled, InputSource::draw).
  e.segmented = !trace.breaks().empty();
  if (!e.segmented) {
    e.compiled = trace.last_segment().compiled;
    e.inputs = trace.last_segment().inputs;
    e.num_results = trace.last_segment().num_results;
    e.graph = trace.last_segment().graph;
    e.key = trace.last_segment().key;
    e.aliases = capture_internal::FindOutputAliases(*e.graph, e.num_results);
    // The results, then the first run's other outputs (shared view bases among them).
    std::vector<Tensor> outputs = out;
    for (const Tensor& t : trace.last_segment().extra_outputs) outputs.push_back(t);
    RestoreOutputAliases(e.aliases, *e.graph, SourceTensors(e.inputs, args), outputs);
    outputs.resize(out.size());
    out = std::move(outputs);
  }

  ++stats.compiles;
  if (stats.compiles > 1) {
    ++stats.recompiles;
    proto::CaptureResult::Recompile* r = result.add_recompiles();
    r->set_reason(reason);
    r->set_count(stats.compiles);
  }
  stats.graph_breaks += static_cast<int64_t>(trace.breaks().size());
  stats.graphs_compiled += trace.segments_compiled();

  // The capture result and explanation of this compile.
  result.clear_graphs();
  result.clear_guards();
  result.clear_breaks();
  for (const proto::Graph& g : trace.segment_graphs()) *result.add_graphs() = g;
  for (proto::Guard& g : e.guards.ToProto()) *result.add_guards() = std::move(g);
  for (const proto::GraphBreak& b : trace.breaks()) *result.add_breaks() = b;
  explanation = Explanation{};
  explanation.graph_count = static_cast<int>(trace.segment_graphs().size());
  for (const proto::GraphBreak& b : trace.breaks()) {
    explanation.breaks.push_back(GraphBreakInfo{
        b.reason(), b.op(), absl::StrCat(b.loc().file(), ":", b.loc().line(), ":", b.loc().column())});
  }
  explanation.guards = e.guards.Describe();
  explanation.graphs = trace.segment_texts();
  results.push_back(result);

  entries.push_back(std::move(e));
  return out;
}

FunctionCache::FunctionCache(CompileOptions options) : state_(std::make_unique<State>()) {
  if (options.name.empty()) options.name = "fn";
  state_->backend = options.backend != nullptr ? options.backend : DefaultBackend();
  state_->options = std::move(options);
}

FunctionCache::~FunctionCache() = default;

const CompileStats& FunctionCache::stats() const { return state_->stats; }

proto::CaptureResult FunctionCache::capture_result() const { return state_->result; }

std::vector<proto::CaptureResult> FunctionCache::capture_results() const {
  return state_->results;
}

Explanation FunctionCache::explanation() const { return state_->explanation; }

absl::StatusOr<std::vector<Tensor>> FunctionCache::Call(const FlatArgs& args, Runner run) {
  State& s = *state_;
  ++s.stats.calls;
  try {
    // Most recent entries first (they are the most general after automatic dynamic).
    for (auto it = s.entries.rbegin(); it != s.entries.rend(); ++it) {
      if (!it->guards.Check(args)) continue;
      ++s.stats.cache_hits;
      return it->segmented ? s.Replay(*it, args, run) : s.RunCompiled(*it, args);
    }
    if (absl::Status v = s.Validate(args); !v.ok()) return v;
    if (static_cast<int>(s.entries.size()) >= s.options.recompile_limit) {
      if (!s.warned_limit) {
        s.warned_limit = true;
        LogLine(LogStream::kRecompiles,
                absl::StrCat("WARNING: ", s.options.name, " reached recompile_limit (",
                             s.options.recompile_limit, "); running it eagerly from now on (",
                             s.entries.empty() ? "" : s.entries.back().guards.FirstFailure(args),
                             ")"));
      }
      ++s.stats.eager_fallbacks;
      ++s.stats.fn_calls;
      return run(s.Concrete(args));
    }
    std::string reason;
    if (!s.entries.empty()) {
      reason = s.entries.back().guards.FirstFailure(args);
      if (s.options.dynamic == DynamicMode::kAuto) {
        const ArgMeta& last = s.entries.back().meta;
        ArgMeta now = MetaOf(args);
        if (OnlySizesChanged(last, now)) {
          for (size_t i = 0; i < now.shapes.size(); ++i) {
            for (size_t d = 0; d < now.shapes[i].size(); ++d) {
              if (now.shapes[i][d] == last.shapes[i][d]) continue;
              if (s.auto_dynamic.insert({static_cast<int>(i), static_cast<int64_t>(d)}).second &&
                  LogEnabled(LogStream::kDynamic)) {
                LogLine(LogStream::kDynamic,
                        absl::StrCat(s.options.name, ": ", TensorName(args, i), " dim ", d,
                                     " changed (", last.shapes[i][d], " -> ", now.shapes[i][d],
                                     "); automatic dynamic makes it symbolic"));
              }
            }
          }
        }
      }
      if (LogEnabled(LogStream::kRecompiles)) {
        LogLine(LogStream::kRecompiles,
                absl::StrCat(s.options.name, ": recompiling (compile ", s.entries.size() + 1,
                             " of at most ", s.options.recompile_limit, "): ", reason));
      }
    }
    return s.Compile(args, run, reason);
  } catch (const Error& e) {
    return e.status();
  }
}

}  // namespace capture_internal
}  // namespace coil

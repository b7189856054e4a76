// Reference interpreter: symbol binding, constant loading, node-by-node execution.
#include "runtime/interpreter.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/io/data_path.h"
#include "ir/op_registry.h"
#include "ir/shape_guards.h"
#include "runtime/reference/kernel_registry.h"
#include "runtime/reference/kernel_util.h"
#include "runtime/tensor_storage.h"

namespace coil {
namespace {

using Bindings = absl::flat_hash_map<std::string, int64_t>;

absl::StatusOr<std::vector<int64_t>> Concrete(const TensorType& t, const Bindings& b) {
  std::vector<int64_t> shape;
  for (const SymExpr& d : t.shape) {
    absl::StatusOr<int64_t> v = d.Evaluate(b);
    if (!v.ok()) return v.status();
    if (*v < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("dimension ", d.ToString(), " evaluates to negative ", *v));
    }
    shape.push_back(*v);
  }
  // Symbol values come from the inputs: a size past int64 is the input's error, before a kernel
  // computes with it.
  if (absl::StatusOr<int64_t> bytes = HostTensor::ByteSize(t.dtype, shape); !bytes.ok()) {
    return bytes.status();
  }
  return shape;
}

// Outputs at least this large are checked against what the system grants before their kernel
// runs (reference kernels allocate with HostTensor::Zeros/Empty, which abort when refused).
constexpr int64_t kCheckedAllocationBytes = int64_t{1} << 30;

}  // namespace

absl::Status BindSymAttrs(AttrMap& attrs, const absl::flat_hash_map<std::string, int64_t>& b) {
  for (auto& [name, value] : attrs) {
    std::vector<SymExpr*> exprs;
    if (SymExpr* e = std::get_if<SymExpr>(&value)) exprs.push_back(e);
    if (SymList* l = std::get_if<SymList>(&value)) {
      for (SymExpr& e : *l) exprs.push_back(&e);
    }
    for (SymExpr* e : exprs) {
      if (e->is_constant()) continue;
      absl::StatusOr<int64_t> v = e->Evaluate(b);
      if (!v.ok()) {
        return absl::Status(v.status().code(),
                            absl::StrCat("attribute '", name, "': ", v.status().message()));
      }
      *e = SymExpr(*v);
    }
  }
  return absl::OkStatus();
}

namespace {

DType Oracle(DType t, bool float64) { return float64 && IsFloating(t) ? proto::FLOAT64 : t; }

// Whether any node writes into one of its inputs (an in-place op or prims.copy_to).
bool GraphMutates(const Graph& graph, const OpRegistry& registry) {
  for (const Node* n : graph.nodes()) {
    const OpSchema* schema = registry.Find(n->op());
    if (n->op() == "prims.copy_to" || (schema != nullptr && schema->mutated_input >= 0)) {
      return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<Bindings> BindSymbols(const Graph& graph, absl::Span<const HostTensor> inputs) {
  if (inputs.size() != graph.inputs().size()) {
    return absl::InvalidArgumentError(absl::StrCat("graph '", graph.name(), "' takes ",
                                                   graph.inputs().size(), " inputs, got ",
                                                   inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].dtype() != graph.inputs()[i]->type().dtype) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", i, " ('", graph.inputs()[i]->name(), "') is ", DTypeName(inputs[i].dtype()),
          ", the graph expects ", graph.inputs()[i]->type().ToString()));
    }
  }
  Bindings b;
  // First lone symbols, then check every dimension (compound ones included).
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const TensorType& t = graph.inputs()[i]->type();
    if (t.rank() != inputs[i].rank()) {
      return absl::InvalidArgumentError(absl::StrCat("input ", i, " ('", graph.inputs()[i]->name(),
                                                     "') has rank ", inputs[i].rank(),
                                                     ", the graph expects ", t.ToString()));
    }
    for (int64_t d = 0; d < t.rank(); ++d) {
      if (t.shape[d].is_symbol()) b.emplace(t.shape[d].ToString(), inputs[i].shape()[d]);
    }
  }
  // Symbols bound from a 0-d int64 input's value (SymbolInfo::value_of; the verifier checked
  // the input's type, and the dtype and rank checks above hold for `inputs`).
  for (const SymbolInfo& s : graph.symbols()) {
    if (s.value_of.empty()) continue;
    for (size_t i = 0; i < graph.inputs().size(); ++i) {
      if (graph.inputs()[i]->name() != s.value_of) continue;
      if (inputs[i].rank() != 0 || inputs[i].dtype() != proto::INT64) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input ", i, " ('", s.value_of, "') binds symbol ", s.name,
            " by its value and must be a 0-d int64 tensor, got ", inputs[i].TypeString()));
      }
      b[s.name] = inputs[i].GetInt({});
      break;
    }
  }
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const TensorType& t = graph.inputs()[i]->type();
    for (int64_t d = 0; d < t.rank(); ++d) {
      absl::StatusOr<int64_t> v = t.shape[d].Evaluate(b);
      if (!v.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("input ", i, " dimension ", d, ": ",
                                                       v.status().message()));
      }
      if (*v != inputs[i].shape()[d]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input ", i, " ('", graph.inputs()[i]->name(), "') dimension ", d, " is ",
            inputs[i].shape()[d], ", the graph expects ", t.shape[d].ToString(), " = ", *v));
      }
    }
  }
  for (const SymbolInfo& s : graph.symbols()) {
    auto it = b.find(s.name);
    if (it == b.end()) continue;
    if (it->second < s.min || (s.max != 0 && it->second > s.max)) {
      return absl::InvalidArgumentError(absl::StrCat("symbol ", s.name, " = ", it->second,
                                                     " is outside its range [", s.min, ", ",
                                                     s.max == 0 ? "inf" : absl::StrCat(s.max), "]"));
    }
  }
  // What the graph's code assumes about its sizes (ir/shape_guards.h).
  if (absl::Status s = CheckGuards(graph, b); !s.ok()) return s;
  return b;
}

absl::StatusOr<HostTensor> LoadConstant(const Value& constant, const std::string& dir) {
  const TensorType& t = constant.type();
  std::vector<int64_t> shape = *t.StaticShape();
  const ConstantData& d = constant.constant();
  if (!d.is_external()) return HostTensor::FromBytes(t.dtype, shape, d.raw);
  // The path rules are checked again here, where the bytes are read (a graph built in memory
  // never went through Graph::FromProto).
  absl::StatusOr<std::string> bytes =
      ReadDataFile(dir, d.external_path, d.external_offset, d.external_length);
  if (!bytes.ok()) {
    return absl::Status(bytes.status().code(), absl::StrCat("constant %", constant.id(), ": ",
                                                            bytes.status().message()));
  }
  return HostTensor::FromBytes(t.dtype, shape, *std::move(bytes));
}

absl::StatusOr<std::vector<HostTensor>> Interpret(const Graph& graph,
                                                  absl::Span<const HostTensor> inputs,
                                                  const InterpreterOptions& options) {
  absl::StatusOr<Bindings> bindings = BindSymbols(graph, inputs);
  if (!bindings.ok()) return bindings.status();

  absl::flat_hash_map<const Value*, HostTensor> env;
  absl::flat_hash_map<const Value*, int> remaining_uses;
  for (const Node* n : graph.nodes()) {
    for (const Value* in : n->inputs()) ++remaining_uses[in];
  }
  for (const Value* out : graph.outputs()) ++remaining_uses[out];
  auto bind = [&](const Value* v, HostTensor t) {
    DType want = Oracle(t.dtype(), options.float64);
    env[v] = want == t.dtype() ? std::move(t) : t.To(want);
  };
  for (size_t i = 0; i < inputs.size(); ++i) bind(graph.inputs()[i], inputs[i]);
  // Inputs converted to float64 are copies: keep them, to write mutations back at the end.
  std::vector<HostTensor> converted(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const HostTensor& held = env.at(graph.inputs()[i]);
    if (held.dtype() != inputs[i].dtype()) converted[i] = held;
  }
  for (const Value* c : graph.constants()) {
    absl::StatusOr<HostTensor> t = LoadConstant(*c, options.external_data_dir);
    if (!t.ok()) return t.status();
    bind(c, *std::move(t));
  }

  const ReferenceKernels& kernels = ReferenceKernels::Global();
  const OpRegistry& registry = OpRegistry::Global();
  std::vector<Node*> nodes = graph.nodes();
  for (size_t ni = 0; ni < nodes.size(); ++ni) {
    const Node* n = nodes[ni];
    auto where = [&] { return absl::StrCat("node ", ni, " ", n->Describe()); };
    const ReferenceKernel* kernel = kernels.Find(n->op());
    if (kernel == nullptr) {
      return absl::UnimplementedError(
          absl::StrCat(where(), ": no reference kernel for op '", n->op(), "'"));
    }
    std::vector<HostTensor> args;
    for (const Value* in : n->inputs()) {
      auto it = env.find(in);
      if (it == env.end()) {
        return absl::InvalidArgumentError(absl::StrCat(where(), ": input %", in->id(),
                                                       " has no value (graph not verified?)"));
      }
      args.push_back(it->second);
    }
    std::vector<std::vector<int64_t>> shapes;
    std::vector<DType> dtypes;
    for (const Value* out : n->outputs()) {
      absl::StatusOr<std::vector<int64_t>> s = Concrete(out->type(), *bindings);
      if (!s.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(where(), ": output %", out->id(), ": ", s.status().message()));
      }
      shapes.push_back(*std::move(s));
      dtypes.push_back(Oracle(out->type().dtype, options.float64));
      // (float64 mode may double the size Concrete checked.)
      absl::StatusOr<int64_t> bytes = HostTensor::ByteSize(dtypes.back(), shapes.back());
      if (!bytes.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(where(), ": output %", out->id(), ": ", bytes.status().message()));
      }
      if (*bytes >= kCheckedAllocationBytes &&
          !TensorStorage::SystemGrants(static_cast<size_t>(*bytes))) {
        return absl::ResourceExhaustedError(absl::StrCat(
            where(), ": output %", out->id(), " (", DTypeName(dtypes.back()), "[",
            absl::StrJoin(shapes.back(), ", "), "], ", *bytes, " bytes): out of memory"));
      }
    }
    // Attributes as the schema normalizes them (defaults present even in hand-made graphs).
    AttrMap attrs = n->attrs();
    if (const OpSchema* schema = registry.Find(n->op())) {
      absl::Status s = NormalizeAttrs(*schema, attrs);
      if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat(where(), ": ", s.message()));
    }
    // Symbolic attributes (slice bounds, select index) reach kernels as constants.
    if (absl::Status s = BindSymAttrs(attrs, *bindings); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(where(), ": ", s.message()));
    }
    // A functionalized graph's write-back (prims.copy_to) comes after every read of the input's
    // old value by ordinary nodes, but a graph output that is that value (or a view of it), or
    // the source of a later write-back (`y.copy_(x); x.neg_()`: y's new value is x's old one)
    // keeps it: such values are copied first (args[0] still writes the caller's storage).
    if (n->op() == "prims.copy_to") {
      for (auto& [v, t] : env) {
        int uses_here = 0;
        for (const Value* in : n->inputs()) uses_here += in == v ? 1 : 0;
        // remaining_uses counts graph outputs too.
        auto uses = remaining_uses.find(v);
        const bool read_later = uses != remaining_uses.end() && uses->second > uses_here;
        if (read_later && t.SharesStorageWith(args[0])) t = t.To(t.dtype());
      }
    }
    KernelContext ctx{args, attrs, shapes, dtypes};
    absl::StatusOr<std::vector<HostTensor>> results = (*kernel)(ctx);
    if (!results.ok()) {
      return absl::Status(results.status().code(),
                          absl::StrCat(where(), ": ", results.status().message()));
    }
    if (results->size() != n->outputs().size()) {
      return absl::InternalError(absl::StrCat(where(), ": kernel returned ", results->size(),
                                              " outputs, expected ", n->outputs().size()));
    }
    for (size_t k = 0; k < results->size(); ++k) {
      const HostTensor& r = (*results)[k];
      if (r.shape() != shapes[k] || r.dtype() != dtypes[k]) {
        return absl::InternalError(absl::StrCat(where(), ": kernel output ", k, " is ",
                                                r.TypeString(), ", expected ", DTypeName(dtypes[k]),
                                                "[", absl::StrJoin(shapes[k], ", "), "]"));
      }
      env[n->output(k)] = std::move((*results)[k]);
    }
    for (const Value* in : n->inputs()) {
      if (--remaining_uses[in] == 0) env.erase(in);
    }
  }
  std::vector<HostTensor> outputs;
  for (const Value* out : graph.outputs()) outputs.push_back(env.at(out));
  // Eager semantics: in-place ops (and prims.copy_to) wrote into the inputs' storage; in
  // float64 mode that storage is a converted copy, so write it back, rounded to the caller's
  // dtype.
  if (GraphMutates(graph, registry)) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!converted[i].defined()) continue;
      HostTensor dst = inputs[i];  // shares the caller's storage
      ForEachIndex(dst.shape(), [&](absl::Span<const int64_t> idx) {
        CopyElem(converted[i], converted[i].StorageOffset(idx), dst, dst.StorageOffset(idx));
      });
    }
  }
  return outputs;
}

}  // namespace coil

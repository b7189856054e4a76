// ONNX ModelProto -> coil graph. This file is the driver: model checks, opset, graph inputs,
// initializers, one ImportNode per node (internal/op_table.h), outputs, cleanup.
#include "capture/onnx/onnx_importer.h"

#include <filesystem>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "capture/onnx/internal/context.h"
#include "capture/onnx/internal/op_table.h"
#include "capture/onnx/internal/tensor_data.h"
#include "capture/onnx/onnx/onnx.pb.h"
#include "ir/io/read_file.h"
#include "ir/graph.h"
#include "ir/verifier.h"

namespace coil::onnx {
namespace {

using onnx_internal::ImportContext;
using onnx_internal::KnownValue;
using onnx_internal::OnnxNode;
using onnx_internal::OnnxTensor;

// Ops whose semantics this importer follows (per ONNX opset of the default domain).
constexpr int64_t kMinOpset = 1;
constexpr int64_t kMaxOpset = 20;

bool IsDefaultDomain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

absl::StatusOr<int64_t> DefaultOpset(const ::onnx::ModelProto& model) {
  int64_t opset = -1;
  for (const auto& o : model.opset_import()) {
    if (IsDefaultDomain(o.domain())) opset = o.version();
  }
  if (opset < 0) return opset;  // only an error if a node of the default domain appears
  if (opset < kMinOpset || opset > kMaxOpset) {
    return absl::UnimplementedError(absl::StrCat("opset ", opset, " is not supported (coil imports opsets ",
                                                 kMinOpset, " to ", kMaxOpset, ")"));
  }
  return opset;
}

// The coil type of a graph input's ValueInfo; unknown dimensions become symbols.
absl::StatusOr<TensorType> InputType(const ::onnx::ValueInfoProto& info, ImportContext& ctx) {
  if (!info.type().has_tensor_type()) {
    return absl::UnimplementedError(
        absl::StrCat("graph input '", info.name(), "': only tensor types are supported "
                     "(sequence, map and optional inputs are not)"));
  }
  const auto& tt = info.type().tensor_type();
  absl::StatusOr<DType> dtype = onnx_internal::DTypeFromOnnx(tt.elem_type());
  if (!dtype.ok()) {
    return absl::Status(dtype.status().code(),
                        absl::StrCat(dtype.status().message(), " (graph input '", info.name(), "')"));
  }
  if (!tt.has_shape()) {
    return absl::UnimplementedError(
        absl::StrCat("graph input '", info.name(), "' has an unknown rank"));
  }
  std::vector<SymExpr> shape;
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value()) {
      if (d.dim_value() < 0) {
        return absl::InvalidArgumentError(absl::StrCat("graph input '", info.name(),
                                                       "' has negative dimension ", d.dim_value()));
      }
      shape.push_back(SymExpr(d.dim_value()));
    } else if (d.has_dim_param() && !d.dim_param().empty()) {
      shape.push_back(ctx.SymbolForParam(d.dim_param()));
    } else {
      shape.push_back(ctx.FreshSymbol());
    }
  }
  return TensorType(*dtype, std::move(shape));
}

// Takes the initializers' raw bytes out of `g` (moved, not copied: the importer owns the model).
absl::Status AddInitializers(::onnx::GraphProto& g, const ImportOptions& options,
                             ImportContext& ctx) {
  if (g.sparse_initializer_size() > 0) {
    return absl::UnimplementedError("sparse initializers are not supported");
  }
  for (::onnx::TensorProto& t : *g.mutable_initializer()) {
    if (t.name().empty()) return absl::InvalidArgumentError("an initializer has no name");
    absl::StatusOr<onnx_internal::TensorData> data =
        onnx_internal::TakeTensor(t, options.external_data_dir, options.inline_external_data);
    if (!data.ok()) return data.status();
    std::vector<SymExpr> shape(data->shape.begin(), data->shape.end());
    TensorType type(data->dtype, std::move(shape));
    OnnxTensor entry;
    if (data->external.is_external()) {
      entry.value = ctx.graph().AddConstant(type, data->external, t.name());
    } else {
      entry.known = onnx_internal::KnownFromBytes(data->dtype, data->shape, data->bytes);
      entry.value = ctx.builder().Constant(type, std::move(data->bytes), t.name());
    }
    ctx.Define(t.name(), std::move(entry));
  }
  return absl::OkStatus();
}

// A declared graph output type that contradicts the imported one is an error.
absl::Status CheckOutputType(const ::onnx::ValueInfoProto& info, const TensorType& got) {
  if (!info.type().has_tensor_type()) return absl::OkStatus();
  const auto& tt = info.type().tensor_type();
  if (tt.elem_type() != 0) {
    absl::StatusOr<DType> want = onnx_internal::DTypeFromOnnx(tt.elem_type());
    if (want.ok() && *want != got.dtype) {
      return absl::InvalidArgumentError(absl::StrCat("graph output '", info.name(), "' is declared ",
                                                     DTypeName(*want), " but computes ",
                                                     got.ToString()));
    }
  }
  if (!tt.has_shape()) return absl::OkStatus();
  if (tt.shape().dim_size() != got.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("graph output '", info.name(), "' is declared with rank ",
                                                   tt.shape().dim_size(), " but computes ", got.ToString()));
  }
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto& d = tt.shape().dim(i);
    std::optional<int64_t> c = got.shape[i].AsConstant();
    if (d.has_dim_value() && c && *c != d.dim_value()) {
      return absl::InvalidArgumentError(absl::StrCat("graph output '", info.name(), "' dimension ", i,
                                                     " is declared ", d.dim_value(), " but computes ",
                                                     got.ToString()));
    }
  }
  return absl::OkStatus();
}

std::string NodeLabel(const ::onnx::NodeProto& n, int index) {
  std::string name = n.name().empty() ? absl::StrCat("#", index) : absl::StrCat("'", n.name(), "'");
  return absl::StrCat("node ", name, " (", n.op_type(), ")");
}

// ONNX graphs assign each tensor name once (SSA): two nodes writing one name, a node output
// that shadows a graph input or an initializer, and a name declared twice are errors (else the
// last definition would silently win).
absl::Status CheckSingleAssignment(const ::onnx::GraphProto& g) {
  absl::flat_hash_map<std::string, std::string> defined;  // name -> what defines it
  for (const ::onnx::TensorProto& t : g.initializer()) {
    if (t.name().empty()) continue;  // AddInitializers reports it
    if (!defined.emplace(t.name(), "an initializer").second) {
      return absl::InvalidArgumentError(absl::StrCat("initializer '", t.name(), "' is defined twice"));
    }
  }
  absl::flat_hash_set<std::string> inputs;
  for (const ::onnx::ValueInfoProto& in : g.input()) {
    if (in.name().empty()) continue;  // ImportGraph reports it
    if (!inputs.insert(in.name()).second) {
      return absl::InvalidArgumentError(absl::StrCat("graph input '", in.name(), "' is declared twice"));
    }
    defined.emplace(in.name(), "a graph input");  // an initializer of that name is its default
  }
  for (int i = 0; i < g.node_size(); ++i) {
    const ::onnx::NodeProto& n = g.node(i);
    for (const std::string& out : n.output()) {
      if (out.empty()) continue;
      auto [it, inserted] = defined.emplace(out, NodeLabel(n, i));
      if (!inserted) {
        return absl::InvalidArgumentError(absl::StrCat(
            NodeLabel(n, i), " writes '", out, "', which ", it->second,
            " already defines (ONNX graphs assign each name once)"));
      }
    }
  }
  return absl::OkStatus();
}

// `model` is the caller's to give up: its initializers' bytes move into the graph.
absl::StatusOr<Graph> ImportGraph(::onnx::ModelProto& model, const ImportOptions& options) {
  if (!model.has_graph()) return absl::InvalidArgumentError("model has no graph");
  absl::StatusOr<int64_t> opset = DefaultOpset(model);
  if (!opset.ok()) return opset.status();
  ::onnx::GraphProto& g = *model.mutable_graph();
  if (absl::Status s = CheckSingleAssignment(g); !s.ok()) return s;
  Graph graph(g.name().empty() ? "onnx" : g.name());
  ImportContext ctx(graph, *opset);

  absl::Status s = AddInitializers(g, options, ctx);
  if (!s.ok()) return s;
  for (const ::onnx::ValueInfoProto& in : g.input()) {
    if (ctx.Find(in.name()) != nullptr) continue;  // an initializer: a constant
    if (in.name().empty()) return absl::InvalidArgumentError("a graph input has no name");
    absl::StatusOr<TensorType> type = InputType(in, ctx);
    if (!type.ok()) return type.status();
    OnnxTensor t;
    t.value = ctx.builder().Input(*type, in.name());
    ctx.Define(in.name(), std::move(t));
  }
  for (int i = 0; i < g.node_size(); ++i) {
    const ::onnx::NodeProto& proto = g.node(i);
    OnnxNode node(ctx, proto, i);
    if (!IsDefaultDomain(proto.domain())) {
      return absl::UnimplementedError(absl::StrCat("domain '", proto.domain(), "' is not supported (op ",
                                                   proto.op_type(), ", node ", node.Name(), ")"));
    }
    if (ctx.opset() < 0) {
      return absl::InvalidArgumentError(absl::StrCat("model has no opset_import for the default ONNX domain (node ",
                                                     node.Name(), ")"));
    }
    s = onnx_internal::ImportNode(node);
    if (!s.ok()) return s;
  }
  std::vector<Value*> outputs;
  for (const ::onnx::ValueInfoProto& out : g.output()) {
    absl::StatusOr<Value*> v = ctx.Materialize(out.name(), "output");
    if (!v.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph output '", out.name(), "' is not computed by the graph"));
    }
    s = CheckOutputType(out, (*v)->type());
    if (!s.ok()) return s;
    outputs.push_back(*v);
  }
  if (outputs.empty()) return absl::InvalidArgumentError("graph has no outputs");
  graph.SetOutputs(std::move(outputs));
  graph.RemoveDeadCode();
  s = Verify(graph);
  if (!s.ok()) {
    return absl::InternalError(absl::StrCat("ONNX import built an invalid graph (coil bug): ", s.message()));
  }
  return graph;
}

absl::Status ParseModel(absl::string_view model_bytes, ::onnx::ModelProto& model) {
  if (model_bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(model_bytes.data(), static_cast<int>(model_bytes.size()))) {
    return absl::InvalidArgumentError("not a valid ONNX model (the protobuf does not parse)");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Graph> ImportOnnxModelAsGraph(absl::string_view model_bytes,
                                             const ImportOptions& options) {
  ::onnx::ModelProto model;
  if (absl::Status s = ParseModel(model_bytes, model); !s.ok()) return s;
  return ImportGraph(model, options);
}

absl::StatusOr<proto::Graph> ImportOnnxModel(absl::string_view model_bytes,
                                             const ImportOptions& options) {
  absl::StatusOr<Graph> graph = ImportOnnxModelAsGraph(model_bytes, options);
  if (!graph.ok()) return graph.status();
  return graph->ToProto();
}

absl::StatusOr<Graph> ImportOnnxFileAsGraph(const std::string& path, ImportOptions options) {
  // The whole file in one buffer of its size (a 46 MB model is not copied through a growing
  // stream buffer); a folder, a FIFO or an endless device is an error (ir/io/read_file.h).
  absl::StatusOr<std::string> bytes = ReadInputFile(path);
  if (!bytes.ok()) return bytes.status();
  if (options.external_data_dir.empty()) {
    options.external_data_dir = std::filesystem::path(path).parent_path().string();
  }
  ::onnx::ModelProto model;
  if (absl::Status s = ParseModel(*bytes, model); !s.ok()) return s;
  *bytes = std::string();  // the file's bytes are in `model` now: freed before the graph is made
  return ImportGraph(model, options);
}

absl::StatusOr<proto::Graph> ImportOnnxFile(const std::string& path, ImportOptions options) {
  absl::StatusOr<Graph> graph = ImportOnnxFileAsGraph(path, std::move(options));
  if (!graph.ok()) return graph.status();
  return graph->ToProto();
}

}  // namespace coil::onnx

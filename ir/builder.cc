// GraphBuilder: registry-checked node construction.
#include "ir/builder.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/check.h"

namespace coil {

Value* GraphBuilder::Constant(TensorType type, std::string raw, std::string name) {
  COIL_CHECK(type.IsStatic()) << "constant with symbolic shape " << type.ToString();
  COIL_CHECK(static_cast<int64_t>(raw.size()) ==
             type.NumElements().constant() * ElementSize(type.dtype))
      << "constant bytes do not match " << type.ToString();
  ConstantData data;
  data.raw = std::move(raw);
  return graph_.AddConstant(std::move(type), std::move(data), std::move(name));
}

absl::StatusOr<std::vector<Value*>> GraphBuilder::OpMulti(absl::string_view op,
                                                          std::vector<Value*> inputs,
                                                          AttrMap attrs, SourceLoc loc) {
  const OpSchema* schema = registry_.Find(op);
  if (schema == nullptr) {
    return absl::NotFoundError(absl::StrCat("unknown op '", op, "'"));
  }
  std::vector<TensorType> in_types;
  in_types.reserve(inputs.size());
  for (const Value* v : inputs) {
    COIL_CHECK(v != nullptr && graph_.FindValue(v->id()) == v) << "input from another graph";
    in_types.push_back(v->type());
  }
  absl::StatusOr<std::vector<TensorType>> out = InferOutputTypes(*schema, in_types, attrs);
  if (!out.ok()) {
    if (loc.empty()) return out.status();
    return absl::Status(out.status().code(),
                        absl::StrCat(out.status().message(), " (at ", loc.ToString(), ")"));
  }
  Node* node = graph_.AddNode(std::string(op), std::move(inputs), std::move(attrs), *std::move(out));
  node->set_loc(std::move(loc));
  return std::vector<Value*>(node->outputs().begin(), node->outputs().end());
}

absl::StatusOr<Value*> GraphBuilder::Op(absl::string_view op, std::vector<Value*> inputs,
                                        AttrMap attrs, SourceLoc loc) {
  absl::StatusOr<std::vector<Value*>> outs =
      OpMulti(op, std::move(inputs), std::move(attrs), std::move(loc));
  if (!outs.ok()) return outs.status();
  if (outs->size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, " has ", outs->size(), " outputs; use OpMulti"));
  }
  return (*outs)[0];
}

}  // namespace coil

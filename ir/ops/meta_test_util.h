// Test-only helpers for the meta-function tests of the op families (ir/ops/*_ops_test.cc): build
// one node over inputs of given types and read back its output types or its error message.
//
//   EXPECT_EQ(meta_test::TypeOf("aten.sum", {meta_test::F32({2, 3})}), "f32[]");
//   EXPECT_THAT(meta_test::ErrorOf("aten.sum", {x}, {{"dim", IntList{5}}}), HasSubstr("range"));
#ifndef COIL_IR_OPS_META_TEST_UTIL_H_
#define COIL_IR_OPS_META_TEST_UTIL_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "ir/op_registry.h"
#include "ir/tensor_type.h"

namespace coil::meta_test {

// Builds one node of `op` over graph inputs of the given types; returns its output types or the
// error the builder (the op's meta function) gave.
inline absl::StatusOr<std::vector<TensorType>> Infer(const std::string& op,
                                                     const std::vector<TensorType>& inputs,
                                                     AttrMap attrs = {}) {
  Graph g("test");
  GraphBuilder b(g);
  std::vector<Value*> args;
  for (const TensorType& t : inputs) args.push_back(b.Input(t));
  absl::StatusOr<std::vector<Value*>> outs = b.OpMulti(op, args, std::move(attrs));
  if (!outs.ok()) return outs.status();
  std::vector<TensorType> types;
  for (Value* v : *outs) types.push_back(v->type());
  return types;
}

// The message of a node that must not build; expects an InvalidArgument error.
inline std::string ErrorOf(const std::string& op, const std::vector<TensorType>& inputs,
                           AttrMap attrs = {}) {
  absl::StatusOr<std::vector<TensorType>> r = Infer(op, inputs, std::move(attrs));
  EXPECT_FALSE(r.ok()) << op << " unexpectedly gave " << (r.ok() ? (*r)[0].ToString() : "");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(r.status().message());
}

// Output `output`'s type as text ("f32[2, s]"); "" (and a test failure) when the node fails.
inline std::string TypeOf(const std::string& op, const std::vector<TensorType>& inputs,
                          AttrMap attrs = {}, int output = 0) {
  absl::StatusOr<std::vector<TensorType>> r = Infer(op, inputs, std::move(attrs));
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? (*r)[output].ToString() : "";
}

// All output types as text, joined by "; ".
inline std::string TypesOf(const std::string& op, const std::vector<TensorType>& inputs,
                           AttrMap attrs = {}) {
  absl::StatusOr<std::vector<TensorType>> r = Infer(op, inputs, std::move(attrs));
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return "";
  std::string s;
  for (const TensorType& t : *r) s += (s.empty() ? "" : "; ") + t.ToString();
  return s;
}

// A float32 tensor type of `shape` (default device).
inline TensorType F32(std::vector<SymExpr> shape) {
  return TensorType(proto::FLOAT32, std::move(shape));
}

}  // namespace coil::meta_test

#endif  // COIL_IR_OPS_META_TEST_UTIL_H_

// Eager dispatch (capture/dispatch.h): meta function for output types, reference kernel for
// values, shared storage for views, the self Tensor back from in-place ops.
#include "capture/dispatch.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/match.h"
#include "capture/error.h"
#include "capture/internal/saved_version.h"
#include "capture/internal/tape.h"
#include "capture/internal/tensor_impl.h"
#include "capture/internal/trace.h"
#include "capture/sym_int.h"
#include "capture/tensor.h"
#include "ir/op_registry.h"
#include "runtime/reference/kernel_registry.h"

namespace coil::capture_internal {
namespace {

[[noreturn]] void Throw(absl::string_view op, absl::StatusCode code, absl::string_view message,
                        const std::source_location& loc) {
  ThrowOpError(op, absl::Status(code, message), loc);
}

// The concrete shape of a meta output (eager types have no symbols).
std::vector<int64_t> ConcreteShape(absl::string_view op, const TensorType& t,
                                   const std::source_location& loc) {
  std::vector<int64_t> shape;
  for (const SymExpr& d : t.shape) {
    if (!d.is_constant()) {
      Throw(op, absl::StatusCode::kInternal,
            absl::StrCat("meta function gave a symbolic size ", d.ToString(),
                         " for concrete inputs"),
            loc);
    }
    shape.push_back(d.constant());
  }
  return shape;
}

}  // namespace

std::string Where(const std::source_location& loc) {
  return absl::StrCat(loc.file_name(), ":", loc.line());
}

void ThrowOpError(absl::string_view op, const absl::Status& status,
                  const std::source_location& loc) {
  // Meta functions already name the op ("aten.add: ..."); do not say it twice.
  std::string prefix = absl::StartsWith(status.message(), op) ? "" : absl::StrCat(op, ": ");
  throw Error(absl::Status(status.code(), absl::StrCat(prefix, status.message(), " (at ",
                                                       Where(loc), ")")));
}

std::vector<Tensor> RunEager(absl::string_view op, const std::vector<Tensor>& inputs,
                             AttrMap attrs, const std::source_location& loc) {
  const OpSchema* schema = OpRegistry::Global().Find(op);
  if (schema == nullptr) Throw(op, absl::StatusCode::kNotFound, "unknown op", loc);
  std::vector<TensorType> types;
  std::vector<HostTensor> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (!t.defined()) {
      Throw(op, absl::StatusCode::kInvalidArgument,
            absl::StrCat("input ", i, " is an undefined tensor"), loc);
    }
    if (t.impl()->is_lazy()) {
      Throw(op, absl::StatusCode::kFailedPrecondition,
            absl::StrCat("input ", i,
                         " is a lazy tensor of a trace that is not active (a tensor created "
                         "inside coil::compile used outside it before it was materialized)"),
            loc);
    }
    types.push_back(t.impl()->type());
    args.push_back(t.impl()->data());
  }
  absl::StatusOr<std::vector<TensorType>> out_types = InferOutputTypes(*schema, types, attrs);
  if (!out_types.ok()) ThrowOpError(op, out_types.status(), loc);
  std::vector<std::vector<int64_t>> shapes;
  std::vector<DType> dtypes;
  for (const TensorType& t : *out_types) {
    shapes.push_back(ConcreteShape(op, t, loc));
    dtypes.push_back(t.dtype);
  }
  const ReferenceKernel* kernel = ReferenceKernels::Global().Find(op);
  if (kernel == nullptr) {
    Throw(op, absl::StatusCode::kUnimplemented, "no reference kernel (cannot run eagerly)", loc);
  }
  KernelContext ctx{args, attrs, shapes, dtypes};
  absl::StatusOr<std::vector<HostTensor>> results = (*kernel)(ctx);
  if (!results.ok()) ThrowOpError(op, results.status(), loc);
  if (results->size() != shapes.size()) {
    Throw(op, absl::StatusCode::kInternal,
          absl::StrCat("kernel returned ", results->size(), " outputs, expected ", shapes.size()),
          loc);
  }
  std::vector<Tensor> outputs;
  for (size_t k = 0; k < results->size(); ++k) {
    HostTensor& r = (*results)[k];
    if (r.shape() != shapes[k] || r.dtype() != dtypes[k]) {
      Throw(op, absl::StatusCode::kInternal,
            absl::StrCat("kernel output ", k, " is ", r.TypeString(), ", expected ",
                         DTypeName(dtypes[k]), "[", absl::StrJoin(shapes[k], ", "), "]"),
            loc);
    }
    // In-place: the kernel wrote into the mutated input's storage; hand back that Tensor.
    if (k == 0 && schema->mutated_input >= 0 &&
        schema->mutated_input < static_cast<int>(inputs.size())) {
      // Saved tensors on this storage are stale now (the tape's version check).
      BumpStorageVersion(args[schema->mutated_input], op, Where(loc));
      outputs.push_back(inputs[schema->mutated_input]);
      continue;
    }
    outputs.push_back(Tensor(std::make_shared<TensorImpl>(std::move(r))));
  }
  return outputs;
}

std::vector<Tensor> Dispatch(absl::string_view op, std::vector<Tensor> inputs, AttrMap attrs,
                             const std::source_location& loc) {
  DrawRandomAttrs(op, inputs, attrs, ActiveTrace());
  if (Trace* trace = ActiveTrace()) return trace->Record(op, inputs, std::move(attrs), loc);
  bool needs_grad = false;
  if (GradEnabled()) {
    for (const Tensor& t : inputs) needs_grad = needs_grad || NeedsGrad(t.impl());
  }
  if (!needs_grad) return RunEager(op, inputs, std::move(attrs), loc);
  // Eager with grad mode on and an input that needs a gradient: the tape records the op.
  const OpSchema* schema = OpRegistry::Global().Find(op);
  std::string where = Where(loc);
  if (schema != nullptr) CheckInPlace(op, schema->mutated_input, inputs, where);
  std::vector<Tensor> out = RunEager(op, inputs, attrs, loc);
  RecordEagerOp(op, attrs, inputs, out, where);
  return out;
}

Tensor DispatchOne(absl::string_view op, std::vector<Tensor> inputs, AttrMap attrs,
                   const std::source_location& loc) {
  std::vector<Tensor> out = Dispatch(op, std::move(inputs), std::move(attrs), loc);
  if (out.empty()) Throw(op, absl::StatusCode::kInternal, "op produced no outputs", loc);
  return out[0];
}

void AddOptional(std::vector<Tensor>& inputs, const std::optional<Tensor>& t, const char* name,
                 const char*& missing, absl::string_view op, const std::source_location& loc) {
  if (!t.has_value() || !t->defined()) {
    if (missing == nullptr) missing = name;
    return;
  }
  if (missing != nullptr) {
    Throw(op, absl::StatusCode::kInvalidArgument,
          absl::StrCat("optional input '", name, "' given without '", missing,
                       "' (only trailing optional inputs may be left off)"),
          loc);
  }
  inputs.push_back(*t);
}

Attribute SymAttr(const SymInt& s) { return Attribute(s.expr()); }

Attribute SymsAttr(const std::vector<SymInt>& s) {
  SymList list;
  list.reserve(s.size());
  for (const SymInt& v : s) list.push_back(v.expr());
  return Attribute(std::move(list));
}

}  // namespace coil::capture_internal

// EXTERN kernels: reference kernel calls on buffer memory.
#include "runtime/internal/schedule_extern.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/attribute.h"
#include "ir/channels_last.h"
#include "ir/op_registry.h"
#include "ir/tensor_type.h"
#include "runtime/channels_last_copy.h"
#include "runtime/host_tensor.h"
#include "runtime/interpreter.h"
#include "runtime/reference/kernel_registry.h"

namespace coil::schedule_internal {
namespace {


absl::StatusOr<const BufferMem*> Buf(const std::vector<BufferMem*>& buffers, int id) {
  if (id <= 0 || id >= static_cast<int>(buffers.size()) || buffers[id] == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("unknown buffer ", id));
  }
  return buffers[id];
}

absl::Status Run(const proto::Kernel& k, const std::vector<BufferMem*>& buffers,
                 const absl::flat_hash_map<std::string, int64_t>& symbols) {
  const ReferenceKernel* fn = ReferenceKernels::Global().Find(k.extern_op());
  if (fn == nullptr) {
    return absl::UnimplementedError(
        absl::StrCat("no reference kernel for extern op '", k.extern_op(), "'"));
  }
  std::vector<HostTensor> args;
  std::vector<TensorType> arg_types;
  for (int id : k.extern_inputs()) {
    absl::StatusOr<const BufferMem*> b = Buf(buffers, id);
    if (!b.ok()) return b.status();
    arg_types.push_back(TensorType((*b)->dtype, {(*b)->shape.begin(), (*b)->shape.end()}));
    absl::StatusOr<HostTensor> t = HostTensor::FromBytes(
        (*b)->dtype, (*b)->shape,
        std::string(reinterpret_cast<const char*>((*b)->data), (*b)->size_bytes()));
    if (!t.ok()) return t.status();
    args.push_back(*std::move(t));
  }
  absl::StatusOr<const BufferMem*> out = Buf(buffers, k.extern_output());
  if (!out.ok()) return out.status();
  AttrMap attrs;
  for (const proto::NamedAttribute& a : k.extern_attrs()) {
    absl::StatusOr<Attribute> v = AttrFromProto(a.value());
    if (!v.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("attribute '", a.name(), "': ", v.status().message()));
    }
    attrs[a.name()] = *std::move(v);
  }
  // Activations stored channels-last (ir/channels_last.h): the reference kernel computes on
  // their NCHW copies.
  absl::StatusOr<ChannelsLast> cl = TakeChannelsLast(attrs);
  if (!cl.ok()) return cl.status();
  if (cl->any() && (args.empty() || args[0].rank() != 4 || (*out)->shape.size() != 4)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "attribute '", kChannelsLastAttr, "' needs a rank-4 input 0 and output"));
  }
  if (cl->input) {
    args[0] = FromChannelsLastTensor(args[0]);
    arg_types[0] = TensorType(args[0].dtype(), {args[0].shape().begin(), args[0].shape().end()});
  }
  const std::vector<int64_t> out_shape =
      cl->output ? FromChannelsLast((*out)->shape) : (*out)->shape;
  const OpSchema* schema = OpRegistry::Global().Find(k.extern_op());
  if (schema == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("unknown op '", k.extern_op(), "'"));
  }
  if (absl::Status s = NormalizeAttrs(*schema, attrs); !s.ok()) return s;
  if (absl::Status s = coil::BindSymAttrs(attrs, symbols); !s.ok()) return s;
  // The reference kernel trusts its arguments (as after Verify): the call must type-check
  // against the op's meta function and produce exactly the output buffer's type.
  absl::StatusOr<std::vector<TensorType>> want = InferOutputTypes(*schema, arg_types, attrs);
  if (!want.ok()) return want.status();
  const TensorType out_type((*out)->dtype, {out_shape.begin(), out_shape.end()});
  if (want->empty() || (*want)[0] != out_type) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the op's result ", want->empty() ? std::string("(none)") : (*want)[0].ToString(),
        " does not match buffer ", (*out)->id, " ('", (*out)->name, "') of ",
        out_type.ToString()));
  }
  std::vector<std::vector<int64_t>> shapes = {out_shape};
  std::vector<DType> dtypes = {(*out)->dtype};
  KernelContext ctx{args, attrs, shapes, dtypes};
  absl::StatusOr<std::vector<HostTensor>> results = (*fn)(ctx);
  if (!results.ok()) return results.status();
  if (results->empty()) return absl::InternalError("the reference kernel returned no output");
  const HostTensor r = cl->output && !results->empty() && (*results)[0].rank() == 4
                           ? ToChannelsLastTensor((*results)[0])
                           : (*results)[0];
  if (r.shape() != (*out)->shape || r.dtype() != (*out)->dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the extern's result ", r.TypeString(), " does not match buffer ", (*out)->id, " ('",
        (*out)->name, "') of ", DTypeName((*out)->dtype), "[",
        absl::StrJoin((*out)->shape, ", "), "]"));
  }
  std::string bytes = r.Bytes();
  if (!bytes.empty()) std::memcpy((*out)->data, bytes.data(), bytes.size());
  return absl::OkStatus();
}

}  // namespace

absl::Status RunExtern(const proto::Kernel& kernel, const std::vector<BufferMem*>& buffers,
                       const absl::flat_hash_map<std::string, int64_t>& symbols) {
  absl::Status s = Run(kernel, buffers, symbols);
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat("kernel ", kernel.id(), " '", kernel.name(),
                                             "' (extern ", kernel.extern_op(), "): ", s.message()));
}

}  // namespace coil::schedule_internal

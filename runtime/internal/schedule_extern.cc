// EXTERN kernels: reference kernel calls on buffer memory.
#include "runtime/internal/schedule_extern.h"

#include <cstring>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/attribute.h"
#include "ir/channels_last.h"
#include "ir/op_registry.h"
#include "ir/sym_expr.h"
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

absl::StatusOr<int64_t> Eval(const proto::SymExpr& p,
                              const absl::flat_hash_map<std::string, int64_t>& symbols) {
  absl::StatusOr<SymExpr> e = SymExpr::FromProto(p);
  if (!e.ok()) return e.status();
  return e->Evaluate(symbols);
}

struct ViewPositions {
  std::vector<int64_t> shape;      // the operand's
  std::vector<int64_t> positions;  // its elements' in the buffer, row-major
};

// `v` (schedule.proto's ExternView; `what` names it in errors) on buffer `b`: the operand's
// elements in row-major order are the row-major digits of all its dims' factors in turn, each
// factor one digit.
absl::StatusOr<ViewPositions> Positions(const BufferMem& b, const proto::ExternView& v,
                                        const std::string& what,
                                        const absl::flat_hash_map<std::string, int64_t>& symbols) {
  absl::StatusOr<int64_t> offset = v.has_offset() ? Eval(v.offset(), symbols) : 0;
  if (!offset.ok()) return offset.status();
  std::vector<int64_t> shape, sizes, strides;
  for (const proto::ExternView::Dim& d : v.dims()) {
    if (d.sizes_size() != d.strides_size()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": a dim has ",
                                                     d.sizes_size(), " sizes and ",
                                                     d.strides_size(), " strides"));
    }
    int64_t n = 1;
    for (int f = 0; f < d.sizes_size(); ++f) {
      absl::StatusOr<int64_t> size = Eval(d.sizes(f), symbols);
      if (!size.ok()) return size.status();
      absl::StatusOr<int64_t> stride = Eval(d.strides(f), symbols);
      if (!stride.ok()) return stride.status();
      if (*size < 0 || *stride < 0) {
        return absl::InvalidArgumentError(absl::StrCat(what, " has size ", *size,
                                                       " and stride ", *stride));
      }
      sizes.push_back(*size);
      strides.push_back(*stride);
      n *= *size;
    }
    shape.push_back(n);
  }
  int64_t numel = 1;
  for (int64_t n : shape) numel *= n;
  ViewPositions out;
  out.shape = shape;
  out.positions.reserve(numel);
  std::vector<int64_t> digit(sizes.size(), 0);
  for (int64_t e = 0; e < numel; ++e) {
    int64_t pos = *offset;
    for (size_t f = 0; f < sizes.size(); ++f) pos += digit[f] * strides[f];
    if (pos < 0 || pos >= b.numel) {
      return absl::InvalidArgumentError(absl::StrCat(what, " reaches element ", pos,
                                                     " of buffer ", b.id, " ('", b.name,
                                                     "') of ", b.numel));
    }
    out.positions.push_back(pos);
    for (size_t f = sizes.size(); f-- > 0;) {
      if (++digit[f] < sizes[f]) break;
      digit[f] = 0;
    }
  }
  return out;
}

absl::StatusOr<HostTensor> ReadView(const BufferMem& b, const proto::ExternView& v, int i,
                                    const absl::flat_hash_map<std::string, int64_t>& symbols) {
  absl::StatusOr<ViewPositions> p = Positions(b, v, absl::StrCat("input ", i, "'s view"), symbols);
  if (!p.ok()) return p.status();
  std::string bytes(p->positions.size() * b.elem_size, '\0');
  for (size_t e = 0; e < p->positions.size(); ++e) {
    std::memcpy(bytes.data() + e * b.elem_size, b.data + p->positions[e] * b.elem_size,
                b.elem_size);
  }
  return HostTensor::FromBytes(b.dtype, p->shape, std::move(bytes));
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
  if (k.extern_input_views_size() != 0 &&
      k.extern_input_views_size() != k.extern_inputs_size()) {
    return absl::InvalidArgumentError(absl::StrCat(k.extern_input_views_size(),
                                                   " input views for ", k.extern_inputs_size(),
                                                   " inputs"));
  }
  for (int i = 0; i < k.extern_inputs_size(); ++i) {
    absl::StatusOr<const BufferMem*> b = Buf(buffers, k.extern_inputs(i));
    if (!b.ok()) return b.status();
    if (k.extern_input_views_size() != 0 && k.extern_input_views(i).dims_size() != 0) {
      absl::StatusOr<HostTensor> t = ReadView(**b, k.extern_input_views(i), i, symbols);
      if (!t.ok()) return t.status();
      arg_types.push_back(TensorType(t->dtype(), {t->shape().begin(), t->shape().end()}));
      args.push_back(*std::move(t));
      continue;
    }
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
  std::vector<int64_t> out_shape = cl->output ? FromChannelsLast((*out)->shape) : (*out)->shape;
  if (k.extern_output_shape_size() > 0) {  // the buffer is a reshape of the op's result
    std::vector<int64_t> shape;
    int64_t n = 1;
    for (const proto::SymExpr& d : k.extern_output_shape()) {
      absl::StatusOr<int64_t> v = Eval(d, symbols);
      if (!v.ok()) return v.status();
      shape.push_back(*v);
      n *= *v;
    }
    if (n != (*out)->numel || cl->any()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "extern_output_shape [", absl::StrJoin(shape, ", "), "] is no reshape of buffer ",
          (*out)->id, " ('", (*out)->name, "') of ", (*out)->numel, " elements"));
    }
    out_shape = std::move(shape);
  }
  // The result written through a view of the buffer (extern_output_view): every element once.
  std::optional<ViewPositions> out_view;
  if (k.extern_output_view().dims_size() > 0) {
    absl::StatusOr<ViewPositions> p = Positions(**out, k.extern_output_view(), "the output view",
                                                symbols);
    if (!p.ok()) return p.status();
    std::vector<bool> seen((*out)->numel, false);
    for (int64_t pos : p->positions) {
      if (seen[pos] || cl->any()) {
        return absl::InvalidArgumentError("the output view writes an element twice");
      }
      seen[pos] = true;
    }
    if (static_cast<int64_t>(p->positions.size()) != (*out)->numel) {
      return absl::InvalidArgumentError("the output view does not cover its buffer");
    }
    out_shape = p->shape;
    out_view = *std::move(p);
  }
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
  const bool reshaped = k.extern_output_shape_size() > 0 || out_view.has_value();
  if (r.shape() != (reshaped ? out_shape : (*out)->shape) || r.dtype() != (*out)->dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the extern's result ", r.TypeString(), " does not match buffer ", (*out)->id, " ('",
        (*out)->name, "') of ", DTypeName((*out)->dtype), "[",
        absl::StrJoin((*out)->shape, ", "), "]"));
  }
  std::string bytes = r.Bytes();
  if (out_view.has_value()) {
    const int64_t elem = (*out)->elem_size;
    for (size_t e = 0; e < out_view->positions.size(); ++e) {
      std::memcpy((*out)->data + out_view->positions[e] * elem, bytes.data() + e * elem, elem);
    }
    return absl::OkStatus();
  }
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

// The fused attention plan of an EXTERN aten.scaled_dot_product_attention kernel (see
// attention_plan.h).
#include "runtime/cuda/attention_plan.h"

#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace coil::cuda {
namespace {

bool SameExpr(const proto::SymExpr& x, const proto::SymExpr& y) {
  return x.SerializeAsString() == y.SerializeAsString();
}

int64_t StaticDim(const proto::Buffer& b, int d) {
  const proto::SymExpr& e = b.shape(d);
  return e.kind() == proto::SymExpr::CONST ? e.value() : -1;
}

const proto::Attribute* FindAttr(const proto::Kernel& k, const char* name) {
  for (const proto::NamedAttribute& a : k.extern_attrs()) {
    if (a.name() == name) return &a.value();
  }
  return nullptr;
}

}  // namespace

std::string AttentionDTypeName(proto::DType dtype) {
  switch (dtype) {
    case proto::FLOAT32:
      return "f32";
    case proto::FLOAT16:
      return "f16";
    case proto::BFLOAT16:
      return "bf16";
    default:
      return "";
  }
}

std::string AttentionUnsupported(const AttentionShape& s) {
  if (!s.same_dtypes) return "query, key, value and output of different dtypes";
  if (AttentionDTypeName(s.dtype).empty()) {
    return absl::StrCat("no fused attention for ", proto::DType_Name(s.dtype));
  }
  if (!s.same_ranks || s.rank < 3) return "query, key, value and output not of one rank >= 3";
  if (!s.same_batch_dims) return "query, key, value and output shapes disagree (broadcast batch dims)";
  if (s.head_dim != s.k_head_dim || s.head_dim != s.v_head_dim || s.head_dim < 0) {
    return "the head dims of query, key and value differ or are symbolic";
  }
  if (s.head_dim != 64 && s.head_dim != 128) {
    return absl::StrCat("head dim ", s.head_dim, " (the fused kernels have 64 and 128)");
  }
  if (s.train && s.dropout_p != 0) return "dropout";
  if (s.mask_dtype != proto::DTYPE_UNSPECIFIED) {
    if (s.mask_dtype != proto::BOOL && s.mask_dtype != s.dtype) {
      return "a mask neither bool nor of the query's dtype";
    }
    if (s.mask_rank > s.rank) return "a mask of higher rank than the output";
    if (s.rank - 2 > 4) return "more than 4 batch dims with a mask";
  }
  return "";
}

std::optional<AttentionPlan> PlanAttention(const proto::Schedule& schedule,
                                           const proto::Kernel& kernel) {
  if (kernel.kind() != proto::Kernel::EXTERN || kernel.extern_op() != kAttentionOp) {
    return std::nullopt;
  }
  AttentionPlan p;
  if (kernel.extern_inputs_size() != 3 && kernel.extern_inputs_size() != 4) {
    p.unsupported = "not 3 or 4 inputs";
    return p;
  }
  if (kernel.loops_size() > 0) {
    p.unsupported = "an epilogue";
    return p;
  }
  absl::flat_hash_map<int, const proto::Buffer*> buffers;
  for (const proto::Buffer& b : schedule.buffers()) buffers[b.id()] = &b;
  for (int id : kernel.extern_inputs()) {
    if (!buffers.contains(id)) {
      p.unsupported = absl::StrCat("unknown buffer ", id);
      return p;
    }
  }
  if (!buffers.contains(kernel.extern_output())) {
    p.unsupported = absl::StrCat("unknown buffer ", kernel.extern_output());
    return p;
  }
  p.q = kernel.extern_inputs(0);
  p.k = kernel.extern_inputs(1);
  p.v = kernel.extern_inputs(2);
  p.mask = kernel.extern_inputs_size() == 4 ? kernel.extern_inputs(3) : 0;
  p.out = kernel.extern_output();
  const proto::Buffer& q = *buffers.at(p.q);
  const proto::Buffer& k = *buffers.at(p.k);
  const proto::Buffer& v = *buffers.at(p.v);
  const proto::Buffer& o = *buffers.at(p.out);
  AttentionShape s;
  s.dtype = q.dtype();
  s.same_dtypes = k.dtype() == q.dtype() && v.dtype() == q.dtype() && o.dtype() == q.dtype();
  s.rank = o.shape_size();
  s.same_ranks = q.shape_size() == s.rank && k.shape_size() == s.rank && v.shape_size() == s.rank;
  if (s.same_ranks && s.rank >= 2) {
    for (int d = 0; d < s.rank - 2; ++d) {
      s.same_batch_dims = s.same_batch_dims && SameExpr(q.shape(d), o.shape(d)) &&
                          SameExpr(k.shape(d), o.shape(d)) && SameExpr(v.shape(d), o.shape(d));
    }
    s.head_dim = StaticDim(q, s.rank - 1);
    s.k_head_dim = StaticDim(k, s.rank - 1);
    s.v_head_dim = StaticDim(v, s.rank - 1);
    // The output's rows are the query's and its columns the value's.
    s.same_batch_dims = s.same_batch_dims && SameExpr(q.shape(s.rank - 2), o.shape(s.rank - 2)) &&
                        SameExpr(k.shape(s.rank - 2), v.shape(s.rank - 2)) &&
                        SameExpr(v.shape(s.rank - 1), o.shape(s.rank - 1));
  }
  if (p.mask != 0) {
    s.mask_dtype = buffers.at(p.mask)->dtype();
    s.mask_rank = buffers.at(p.mask)->shape_size();
    p.mask_dtype = s.mask_dtype;
  }
  if (const proto::Attribute* a = FindAttr(kernel, "dropout_p")) s.dropout_p = a->f();
  if (const proto::Attribute* a = FindAttr(kernel, "train")) s.train = a->b();
  if (const proto::Attribute* a = FindAttr(kernel, "is_causal")) p.causal = a->b();
  if (const proto::Attribute* a = FindAttr(kernel, "scale")) p.scale = a->f();
  p.dtype = s.dtype;
  p.head_dim = s.head_dim;
  p.unsupported = AttentionUnsupported(s);
  if (p.causal && p.mask != 0 && p.unsupported.empty()) p.unsupported = "a mask and is_causal";
  if (p.scale == 0 && s.head_dim > 0) p.scale = 1.0 / std::sqrt(static_cast<double>(s.head_dim));
  return p;
}

}  // namespace coil::cuda

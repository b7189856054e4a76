// Reference kernels of the nn op family: the matmul ops here and the helpers shared by the
// family; convolution in nn_kernels_conv.cc, pooling in nn_kernels_pool.cc, attention in
// nn_kernels_attention.cc, upsampling and pixel shuffle in nn_kernels_upsample.cc.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/check.h"
#include "runtime/reference/kernel_registry.h"
#include "runtime/reference/nn_kernels_internal.h"

namespace coil {
namespace nn_kernels {

HostTensor BroadcastTo(const HostTensor& t, absl::Span<const int64_t> shape) {
  int64_t rank = static_cast<int64_t>(shape.size());
  COIL_CHECK(t.rank() <= rank) << t.TypeString() << " to rank " << rank;
  std::vector<int64_t> strides(rank, 0);
  for (int64_t i = 0; i < t.rank(); ++i) {
    int64_t d = rank - t.rank() + i;
    if (t.shape()[i] == shape[d]) {
      strides[d] = t.strides()[i];
    } else {
      COIL_CHECK(t.shape()[i] == 1) << t.TypeString() << " does not broadcast to ["
                                    << absl::StrJoin(shape, ", ") << "]";
    }
  }
  return t.View(std::vector<int64_t>(shape.begin(), shape.end()), strides, t.offset());
}

HostTensor Unsqueeze(const HostTensor& t, int64_t dim) {
  std::vector<int64_t> shape = t.shape(), strides = t.strides();
  shape.insert(shape.begin() + dim, 1);
  strides.insert(strides.begin() + dim, 1);
  return t.View(shape, strides, t.offset());
}

HostTensor Transpose(const HostTensor& t, int64_t a, int64_t b) {
  std::vector<int64_t> shape = t.shape(), strides = t.strides();
  std::swap(shape[a], shape[b]);
  std::swap(strides[a], strides[b]);
  return t.View(shape, strides, t.offset());
}

IntList ExpandedInts(const AttrMap& attrs, absl::string_view name, int64_t n) {
  IntList v = *GetInts(attrs, name);
  if (v.size() == 1) return IntList(n, v[0]);
  return v;
}

absl::Status CheckSize(int64_t a, int64_t b, absl::string_view what) {
  if (a == b) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(what, " must be equal, got ", a, " and ", b));
}

namespace {

bool IsIntegerLike(DType t) { return IsIntegral(t) || IsBool(t); }

// The values of a torch.matmul product, row-major over the broadcast batch, n and m (the unit
// dimension a 1-D operand adds is included, which does not change the flat order).
struct Product {
  std::vector<double> f;   // floating operands
  std::vector<int64_t> i;  // integer operands (wrapping)
};

absl::StatusOr<Product> MatmulProduct(HostTensor a, HostTensor b) {
  if (a.rank() == 1) a = Unsqueeze(a, 0);
  if (b.rank() == 1) b = Unsqueeze(b, 1);
  int64_t ra = a.rank(), rb = b.rank();
  int64_t n = a.shape()[ra - 2], k = a.shape()[ra - 1], m = b.shape()[rb - 1];
  if (absl::Status s = CheckSize(k, b.shape()[rb - 2], "matmul inner sizes"); !s.ok()) return s;
  int64_t batch_rank = std::max(ra, rb) - 2;
  std::vector<int64_t> batch(batch_rank, 1);
  for (const HostTensor* t : {&a, &b}) {
    int64_t tb = t->rank() - 2;
    for (int64_t i = 0; i < tb; ++i) {
      int64_t& d = batch[batch_rank - tb + i];
      int64_t s = t->shape()[i];
      if (d == 1) {
        d = s;
      } else if (s != 1 && s != d) {
        return absl::InvalidArgumentError(absl::StrCat("matmul batch sizes ", d, " and ", s,
                                                       " do not broadcast"));
      }
    }
  }
  std::vector<int64_t> ashape = batch, bshape = batch;
  ashape.insert(ashape.end(), {n, k});
  bshape.insert(bshape.end(), {k, m});
  HostTensor av = BroadcastTo(a, ashape), bv = BroadcastTo(b, bshape);
  bool integral = IsIntegerLike(a.dtype());
  Product p;
  std::vector<int64_t> ai(batch_rank + 2), bi(batch_rank + 2);
  ForEachIndex(batch, [&](absl::Span<const int64_t> bidx) {
    std::copy(bidx.begin(), bidx.end(), ai.begin());
    std::copy(bidx.begin(), bidx.end(), bi.begin());
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t c = 0; c < m; ++c) {
        double facc = 0;
        int64_t iacc = 0;
        ai[batch_rank] = r;
        bi[batch_rank + 1] = c;
        for (int64_t j = 0; j < k; ++j) {
          ai[batch_rank + 1] = j;
          bi[batch_rank] = j;
          if (integral) {
            iacc = WrapAdd(iacc, WrapMul(av.GetInt(ai), bv.GetInt(bi)));
          } else {
            facc += av.GetDouble(ai) * bv.GetDouble(bi);
          }
        }
        if (integral) {
          p.i.push_back(iacc);
        } else {
          p.f.push_back(facc);
        }
      }
    }
  });
  return p;
}

// bmm / baddbmm do not broadcast: batch2 must be [b, k, *] for batch1 [b, n, k] (torch's
// check and wording; a symbolic batch the meta function could not compare gets here).
absl::Status CheckBatched(const HostTensor& a, const HostTensor& b) {
  if (a.shape()[0] == b.shape()[0] && a.shape()[2] == b.shape()[1]) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "Expected size for first two dimensions of batch2 tensor to be: [", a.shape()[0], ", ",
      a.shape()[2], "] but got: [", b.shape()[0], ", ", b.shape()[1], "]."));
}

absl::StatusOr<std::vector<HostTensor>> MatmulKernel(const KernelContext& ctx) {
  absl::StatusOr<Product> p = MatmulProduct(ctx.inputs[0], ctx.inputs[1]);
  if (!p.ok()) return p.status();
  HostTensor out = HostTensor::Zeros(ctx.output_dtypes[0], ctx.output_shapes[0]);
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (IsIntegerLike(out.dtype())) {
      out.StoreInt(i, p->i[i]);
    } else {
      out.StoreDouble(i, p->f[i]);
    }
  }
  return std::vector<HostTensor>{out};
}

// out = beta * bias + alpha * product, with bias broadcast to the output; beta == 0 ignores
// the bias (its NaNs included), as PyTorch. Integer outputs truncate beta and alpha.
std::vector<HostTensor> Combine(const Product& p, const HostTensor* bias, double beta,
                                double alpha, const KernelContext& ctx) {
  HostTensor out = HostTensor::Zeros(ctx.output_dtypes[0], ctx.output_shapes[0]);
  HostTensor b;
  if (bias != nullptr && beta != 0) b = BroadcastTo(*bias, out.shape());
  bool integral = IsIntegerLike(out.dtype());
  int64_t ibeta = static_cast<int64_t>(beta), ialpha = static_cast<int64_t>(alpha);
  int64_t flat = 0;
  ForEachIndex(out.shape(), [&](absl::Span<const int64_t> idx) {
    if (integral) {
      int64_t v = WrapMul(ialpha, p.i[flat]);
      if (b.defined()) v = WrapAdd(v, WrapMul(ibeta, b.GetInt(idx)));
      out.StoreInt(flat, v);
    } else {
      double v = alpha * p.f[flat];
      if (b.defined()) v += beta * b.GetDouble(idx);
      out.StoreDouble(flat, v);
    }
    ++flat;
  });
  return {out};
}

absl::StatusOr<std::vector<HostTensor>> AddMatmulKernel(const KernelContext& ctx) {
  absl::StatusOr<Product> p = MatmulProduct(ctx.inputs[1], ctx.inputs[2]);
  if (!p.ok()) return p.status();
  return Combine(*p, &ctx.inputs[0], *GetFloat(ctx.attrs, "beta"), *GetFloat(ctx.attrs, "alpha"),
                 ctx);
}

absl::StatusOr<std::vector<HostTensor>> LinearKernel(const KernelContext& ctx) {
  const HostTensor& w = ctx.inputs[1];
  absl::StatusOr<Product> p =
      MatmulProduct(ctx.inputs[0], w.rank() == 2 ? Transpose(w, 0, 1) : w);
  if (!p.ok()) return p.status();
  const HostTensor* bias = ctx.inputs.size() > 2 ? &ctx.inputs[2] : nullptr;
  return Combine(*p, bias, 1.0, 1.0, ctx);
}

absl::StatusOr<std::vector<HostTensor>> OuterKernel(const KernelContext& ctx) {
  HostTensor out = HostTensor::Zeros(ctx.output_dtypes[0], ctx.output_shapes[0]);
  const HostTensor& a = ctx.inputs[0];
  const HostTensor& b = ctx.inputs[1];
  int64_t flat = 0;
  for (int64_t i = 0; i < a.shape()[0]; ++i) {
    for (int64_t j = 0; j < b.shape()[0]; ++j, ++flat) {
      if (IsBool(out.dtype())) {
        out.StoreInt(flat, a.GetInt({i}) != 0 && b.GetInt({j}) != 0);
      } else if (IsIntegral(out.dtype())) {
        out.StoreInt(flat, WrapMul(a.GetInt({i}), b.GetInt({j})));
      } else {
        out.StoreDouble(flat, a.GetDouble({i}) * b.GetDouble({j}));
      }
    }
  }
  return std::vector<HostTensor>{out};
}

}  // namespace

void RegisterMatmulKernels(ReferenceKernels& k) {
  for (const char* op : {"aten.mm", "aten.matmul", "aten.dot", "aten.mv"}) {
    k.Register(op, MatmulKernel);
  }
  k.Register("aten.bmm", [](const KernelContext& ctx) -> absl::StatusOr<std::vector<HostTensor>> {
    if (absl::Status s = CheckBatched(ctx.inputs[0], ctx.inputs[1]); !s.ok()) return s;
    return MatmulKernel(ctx);
  });
  k.Register("aten.addmm", AddMatmulKernel);
  k.Register("aten.baddbmm",
             [](const KernelContext& ctx) -> absl::StatusOr<std::vector<HostTensor>> {
               if (absl::Status s = CheckBatched(ctx.inputs[1], ctx.inputs[2]); !s.ok()) return s;
               return AddMatmulKernel(ctx);
             });
  k.Register("aten.linear", LinearKernel);
  k.Register("aten.outer", OuterKernel);
}

}  // namespace nn_kernels

void RegisterNnKernels(ReferenceKernels& k) {
  nn_kernels::RegisterMatmulKernels(k);
  nn_kernels::RegisterConvKernels(k);
  nn_kernels::RegisterPoolKernels(k);
  nn_kernels::RegisterAttentionKernels(k);
  nn_kernels::RegisterUpsampleKernels(k);
}

}  // namespace coil

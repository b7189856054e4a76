// Reference kernel of aten.scaled_dot_product_attention (the op of
// ir/ops/nn_ops_attention.cc), with the dropout of its weights (train=true, dropout_p > 0): the
// mask aten.dropout's kernel draws, over the weights' row-major [batch..., L, S] positions.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/reference/nn_kernels_internal.h"
#include "runtime/reference/philox.h"

namespace coil::nn_kernels {
namespace {

absl::StatusOr<std::vector<HostTensor>> Sdpa(const KernelContext& ctx) {
  double dropout = *GetFloat(ctx.attrs, "dropout_p");
  // train, seed and offset have defaults (true, -1, 0): a node built without them has them.
  if (!GetBool(ctx.attrs, "train").value_or(true)) dropout = 0;
  const int64_t seed = GetInt(ctx.attrs, "seed").value_or(-1);
  const int64_t offset = ctx.attrs.contains("offset") ? *GetInt(ctx.attrs, "offset") : 0;
  if (dropout > 0 && dropout < 1 && (seed < 0 || offset < 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("scaled_dot_product_attention: dropout_p = ", dropout,
                     " needs seed >= 0 and offset >= 0, got ", seed, ", ", offset));
  }
  // A weight is kept where its uniform is below this (aten.dropout's kernel's test).
  const float keep_below = static_cast<float>(1 - dropout);
  const double keep_scale = dropout < 1 ? 1 / (1 - dropout) : 0.0;
  bool causal = *GetBool(ctx.attrs, "is_causal");
  const std::vector<int64_t>& out_shape = ctx.output_shapes[0];
  int64_t br = static_cast<int64_t>(out_shape.size()) - 2;
  std::vector<int64_t> batch(out_shape.begin(), out_shape.begin() + br);
  const HostTensor& q0 = ctx.inputs[0];
  const HostTensor& k0 = ctx.inputs[1];
  const HostTensor& v0 = ctx.inputs[2];
  int64_t l = q0.shape()[q0.rank() - 2], e = q0.shape().back();
  int64_t s = k0.shape()[k0.rank() - 2], ev = v0.shape().back();
  if (absl::Status st = CheckSize(e, k0.shape().back(), "query and key embedding sizes");
      !st.ok()) {
    return st;
  }
  if (absl::Status st = CheckSize(s, v0.shape()[v0.rank() - 2], "key and value sequence sizes");
      !st.ok()) {
    return st;
  }
  auto with = [&](int64_t a, int64_t b) {
    std::vector<int64_t> shape = batch;
    shape.push_back(a);
    shape.push_back(b);
    return shape;
  };
  HostTensor q = BroadcastTo(q0, with(l, e)), k = BroadcastTo(k0, with(s, e));
  HostTensor v = BroadcastTo(v0, with(s, ev));
  HostTensor mask;
  if (ctx.inputs.size() > 3) mask = BroadcastTo(ctx.inputs[3], with(l, s));
  double scale = *GetFloat(ctx.attrs, "scale");
  if (scale == 0) scale = 1.0 / std::sqrt(static_cast<double>(e));

  HostTensor out = HostTensor::Zeros(ctx.output_dtypes[0], out_shape);
  const double kNegInf = -std::numeric_limits<double>::infinity();
  std::vector<int64_t> a(br + 2), b(br + 2);
  std::vector<double> p(s);
  int64_t flat = 0;
  int64_t weight = 0;  // row-major position of weight (batch, i, 0) in [batch..., L, S]
  ForEachIndex(batch, [&](absl::Span<const int64_t> bi) {
    std::copy(bi.begin(), bi.end(), a.begin());
    std::copy(bi.begin(), bi.end(), b.begin());
    for (int64_t i = 0; i < l; ++i) {
      double best = kNegInf;
      for (int64_t j = 0; j < s; ++j) {
        double dot = 0;
        a[br] = i;
        b[br] = j;
        for (int64_t c = 0; c < e; ++c) {
          a[br + 1] = c;
          b[br + 1] = c;
          dot += q.GetDouble(a) * k.GetDouble(b);
        }
        double score = dot * scale;
        a[br + 1] = j;  // a = [batch, i, j] indexes the mask
        if (causal && j > i) score = kNegInf;
        if (mask.defined()) {
          if (IsBool(mask.dtype())) {
            if (mask.GetInt(a) == 0) score = kNegInf;
          } else {
            score += mask.GetDouble(a);
          }
        }
        p[j] = score;
        if (score > best || std::isnan(score)) best = score;
      }
      // Softmax; a row without any finite score (fully masked) is NaN, as PyTorch's.
      double total = 0;
      for (int64_t j = 0; j < s; ++j) {
        p[j] = std::exp(p[j] - best);
        total += p[j];
      }
      for (int64_t j = 0; j < s; ++j) {
        p[j] /= total;
        if (dropout == 1) {
          p[j] = 0;
        } else if (dropout > 0) {
          p[j] = PhiloxUniformAt(seed, offset + weight + j) < keep_below ? p[j] * keep_scale : 0;
        }
      }
      weight += s;
      for (int64_t c = 0; c < ev; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < s; ++j) {
          b[br] = j;
          b[br + 1] = c;
          acc += p[j] * v.GetDouble(b);
        }
        out.StoreDouble(flat++, acc);
      }
    }
  });
  return std::vector<HostTensor>{out};
}

}  // namespace

void RegisterAttentionKernels(ReferenceKernels& k) {
  k.Register("aten.scaled_dot_product_attention", Sdpa);
}

}  // namespace coil::nn_kernels

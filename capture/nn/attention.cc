// nn::MultiheadAttention.
#include "capture/nn/attention.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

namespace coil::nn {
namespace {

// Rows [part * E, (part + 1) * E) of a packed projection.
Tensor Part(const Tensor& packed, int64_t part, int64_t e) {
  return slice(packed, 0, part * e, (part + 1) * e);
}

// [B, T, E] -> [B, H, T, D].
Tensor SplitHeads(const Tensor& x, int64_t heads) {
  SymInt b = x.size(0), t = x.size(1);
  int64_t d = x.size(2).hint() / heads;
  return x.reshape({b, t, SymInt(heads), SymInt(d)}).transpose(1, 2);
}

}  // namespace

MultiheadAttention::MultiheadAttention(int64_t e, int64_t h, uint64_t seed,
                                       MultiheadAttentionOptions opts)
    : embed_dim(e),
      num_heads(h),
      options(opts),
      out_proj(e, e, SubSeed(seed, 2), opts.bias) {
  if (h <= 0 || e % h != 0) {
    throw Error(absl::InvalidArgumentError(absl::StrCat(
        "nn::MultiheadAttention: embed_dim ", e, " is not divisible by num_heads ", h)));
  }
  if (!(opts.dropout >= 0 && opts.dropout <= 1)) {
    throw Error(absl::InvalidArgumentError(absl::StrCat(
        "nn::MultiheadAttention: dropout must be in [0, 1], got ", opts.dropout)));
  }
  in_proj_weight = UniformInit({3 * e, e}, std::sqrt(6.0 / (4.0 * e)), SubSeed(seed, 0));
  if (opts.bias) {
    in_proj_bias = Tensor::Zeros({3 * e});
    out_proj.bias = Tensor::Zeros({e});
  }
}

Tensor MultiheadAttention::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                   const Tensor& attn_mask) const {
  const int64_t e = embed_dim;
  bool self_attention = query.impl() == key.impl() && key.impl() == value.impl();
  Tensor q, k, v;
  if (self_attention) {
    Tensor x = options.batch_first ? query : query.transpose(0, 1);
    Tensor qkv = linear(x, in_proj_weight, Opt(in_proj_bias));
    std::vector<Tensor> parts = qkv.chunk(3, -1);
    q = parts[0], k = parts[1], v = parts[2];
  } else {
    const Tensor* inputs[3] = {&query, &key, &value};
    Tensor* outs[3] = {&q, &k, &v};
    for (int64_t i = 0; i < 3; ++i) {
      Tensor x = options.batch_first ? *inputs[i] : inputs[i]->transpose(0, 1);
      std::optional<Tensor> b;
      if (in_proj_bias.defined()) b = Part(in_proj_bias, i, e);
      *outs[i] = linear(x, Part(in_proj_weight, i, e), b);
    }
  }
  SymInt b = q.size(0), l = q.size(1), s = k.size(1);
  q = SplitHeads(q, num_heads);
  k = SplitHeads(k, num_heads);
  v = SplitHeads(v, num_heads);

  // torch's mask (True = masked, or additive) as an additive or sdpa-style bool mask.
  Tensor mask;
  if (attn_mask.defined()) {
    mask = attn_mask;
    if (mask.dim() == 3) mask = mask.reshape({b, SymInt(num_heads), l, s});
  }
  Tensor out;
  const double p = training ? options.dropout : 0.0;
  if (options.use_sdpa) {
    if (mask.defined() && mask.dtype() == proto::BOOL) mask = logical_not(mask);
    if (mask.defined() && options.causal) {
      // sdpa takes either a mask or is_causal: fold the causal part into the mask.
      Tensor keep = triu(ones({l, s}, proto::BOOL), 1).logical_not();
      if (mask.dtype() == proto::BOOL) {
        mask = logical_and(mask, keep);
      } else {
        mask = masked_fill(mask, keep.logical_not(), -std::numeric_limits<double>::infinity());
      }
      out = scaled_dot_product_attention(q, k, v, mask, p);
    } else if (mask.defined()) {
      out = scaled_dot_product_attention(q, k, v, mask, p);
    } else {
      out = scaled_dot_product_attention(q, k, v, std::nullopt, p, options.causal);
    }
  } else {
    const double inf = std::numeric_limits<double>::infinity();
    double scale = 1.0 / std::sqrt(static_cast<double>(e / num_heads));
    Tensor scores = q.matmul(k.transpose(-2, -1)) * scale;
    if (options.causal) scores = masked_fill(scores, triu(ones({l, s}, proto::BOOL), 1), -inf);
    if (mask.defined()) {
      scores = mask.dtype() == proto::BOOL ? masked_fill(scores, mask, -inf) : scores + mask;
    }
    Tensor weights = softmax(scores, -1);
    if (p > 0) {  // sdpa's mask: the weights over [B, num_heads, L, S]
      weights = coil::dropout(weights.expand({b, SymInt(num_heads), l, s}), p, true);
    }
    out = weights.matmul(v);
  }
  out = out.transpose(1, 2).reshape({b, l, SymInt(e)});
  out = out_proj(out);
  return options.batch_first ? out : out.transpose(0, 1);
}

NamedTensorList MultiheadAttention::NamedTensors(const std::string& prefix) {
  NamedTensorList out = {{prefix + "in_proj_weight", &in_proj_weight}};
  if (in_proj_bias.defined()) out.push_back({prefix + "in_proj_bias", &in_proj_bias});
  AppendChild(prefix, "out_proj", out_proj, out);
  return out;
}

}  // namespace coil::nn

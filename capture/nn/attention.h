// nn::MultiheadAttention: torch.nn.MultiheadAttention's forward (the attention weights are not
// returned), with torch's `dropout` of the attention weights in training mode.
//
//   nn::MultiheadAttention attn(/*embed_dim=*/64, /*num_heads=*/4, /*seed=*/0,
//                               {.batch_first = true, .causal = true});
//   Tensor y = attn(x);            // self-attention, x [B, L, 64]
//   Tensor z = attn(q, kv, kv);    // cross-attention
//
// The projections use one packed in_proj_weight as torch does (so torch's state_dict loads
// as is); heads are computed by aten.scaled_dot_product_attention, or by explicit
// matmul/softmax when `use_sdpa` is false. With `dropout` > 0 and `training`, the weights are
// dropped from the default generator (capture/random.h) over [B, num_heads, L, S] either way,
// so both forms draw the same mask from the same generator state.
#ifndef COIL_CAPTURE_NN_ATTENTION_H_
#define COIL_CAPTURE_NN_ATTENTION_H_

#include <cstdint>

#include "capture/nn/linear.h"
#include "capture/nn/module.h"
#include "capture/tensor.h"

namespace coil::nn {

struct MultiheadAttentionOptions {
  bool bias = true;
  // Inputs and output are [batch, seq, embed] (true) or [seq, batch, embed] (false, torch's
  // default).
  bool batch_first = false;
  // Query i attends to keys 0..i only (torch: attn_mask = triu(ones(L, S), 1) as bool).
  bool causal = false;
  // aten.scaled_dot_product_attention (true) or explicit matmul + softmax (false).
  bool use_sdpa = true;
  // Probability of dropping each attention weight in training mode (torch's `dropout`), in
  // [0, 1]; anything else throws coil::Error.
  double dropout = 0.0;
};

class MultiheadAttention : public Module {
 public:
  // torch's init: in_proj_weight xavier_uniform, in_proj_bias and out_proj.bias zeros,
  // out_proj.weight as a Linear's; deterministic in `seed`. embed_dim % num_heads must be 0.
  MultiheadAttention(int64_t embed_dim, int64_t num_heads, uint64_t seed = 0,
                     MultiheadAttentionOptions options = {});

  // Self-attention.
  Tensor forward(const Tensor& x) const { return forward(x, x, x); }
  // query [B, L, E], key and value [B, S, E] (or sequence-first). `attn_mask` (optional, as
  // torch's): [L, S] or [B * num_heads, L, S]; bool True = not attended, or a float mask added
  // to the scores. It combines with `causal`.
  Tensor forward(const Tensor& query, const Tensor& key, const Tensor& value,
                 const Tensor& attn_mask = Tensor()) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  Tensor operator()(const Tensor& query, const Tensor& key, const Tensor& value,
                    const Tensor& attn_mask = Tensor()) const {
    return forward(query, key, value, attn_mask);
  }
  NamedTensorList NamedTensors(const std::string& prefix = "") override;

  int64_t embed_dim;
  int64_t num_heads;
  MultiheadAttentionOptions options;
  bool training = true;  // torch's default mode; eval(): false (no dropout)
  Tensor in_proj_weight;  // [3 * embed_dim, embed_dim]: query, key, value projections
  Tensor in_proj_bias;    // [3 * embed_dim]; undefined without bias
  Linear out_proj;
};

}  // namespace coil::nn

#endif  // COIL_CAPTURE_NN_ATTENTION_H_

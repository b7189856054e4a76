// A GPT-style decoder block written with coil's eager API (an example model, compiled by
// examples_test.cc): pre-LayerNorm, causal multi-head self-attention, a GELU MLP, residuals.
//
//   examples::GptBlock block(/*embed_dim=*/64, /*num_heads=*/4, /*seed=*/0);
//   Tensor y = block(x);                        // x [B, L, 64] -> [B, L, 64]
//   auto f = coil::compile([&](const Tensor& x) { return block(x); });
//
// Parameter names follow the torch twin in examples_cases.py (ln1.weight, attn.in_proj_weight,
// fc.bias, ...), so a torch state_dict loads with LoadParameters.
#ifndef COIL_CAPTURE_EXAMPLES_GPT_BLOCK_H_
#define COIL_CAPTURE_EXAMPLES_GPT_BLOCK_H_

#include <cstdint>

#include "capture/nn/nn.h"
#include "capture/tensor.h"

namespace coil::examples {

class GptBlock : public nn::Module {
 public:
  GptBlock(int64_t embed_dim, int64_t num_heads, uint64_t seed = 0);

  // x + attn(ln1(x)), then + proj(gelu_tanh(fc(ln2(x)))); x is [batch, seq, embed_dim].
  Tensor forward(const Tensor& x) const;
  Tensor operator()(const Tensor& x) const { return forward(x); }
  nn::NamedTensorList NamedTensors(const std::string& prefix = "") override;

  nn::LayerNorm ln1;
  nn::MultiheadAttention attn;  // batch_first, causal
  nn::LayerNorm ln2;
  nn::Linear fc;    // embed_dim -> 4 * embed_dim
  nn::GELU act;     // tanh approximation, as GPT-2
  nn::Linear proj;  // 4 * embed_dim -> embed_dim
};

}  // namespace coil::examples

#endif  // COIL_CAPTURE_EXAMPLES_GPT_BLOCK_H_

// A tiny GPT-style language model written with coil's eager API (an example model, trained by
// tests/training and the main job, timed by `coil bench train`): a token embedding, one
// GptBlock (gpt_block.h) and a linear LM head.
//
//   examples::GptDecoder model(/*vocab=*/16, /*embed_dim=*/16, /*num_heads=*/2);
//   Tensor logits = model(tokens);              // tokens i64 [B, L] -> [B, L, vocab]
//
// Parameter names follow a torch twin with modules tok, block, head (tok.weight,
// block.ln1.weight, ..., head.bias), so a torch state_dict loads with LoadParameters.
#ifndef COIL_CAPTURE_EXAMPLES_GPT_DECODER_H_
#define COIL_CAPTURE_EXAMPLES_GPT_DECODER_H_

#include <cstdint>
#include <string>

#include "capture/examples/gpt_block.h"
#include "capture/nn/nn.h"
#include "capture/tensor.h"

namespace coil::examples {

class GptDecoder : public nn::Module {
 public:
  GptDecoder(int64_t vocab, int64_t embed_dim, int64_t num_heads)
      : tok(vocab, embed_dim, 1), block(embed_dim, num_heads, 2), head(embed_dim, vocab, 3) {}

  Tensor operator()(const Tensor& tokens) const { return head(block(tok(tokens))); }
  nn::NamedTensorList NamedTensors(const std::string& prefix = "") override {
    nn::NamedTensorList out;
    nn::AppendChild(prefix, "tok", tok, out);
    nn::AppendChild(prefix, "block", block, out);
    nn::AppendChild(prefix, "head", head, out);
    return out;
  }

  nn::Embedding tok;
  GptBlock block;
  nn::Linear head;
};

}  // namespace coil::examples

#endif  // COIL_CAPTURE_EXAMPLES_GPT_DECODER_H_

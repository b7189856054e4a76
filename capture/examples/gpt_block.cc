// examples::GptBlock.
#include "capture/examples/gpt_block.h"

namespace coil::examples {

GptBlock::GptBlock(int64_t e, int64_t h, uint64_t seed)
    : ln1({e}),
      attn(e, h, nn::SubSeed(seed, 0), {.batch_first = true, .causal = true}),
      ln2({e}),
      fc(e, 4 * e, nn::SubSeed(seed, 1)),
      act("tanh"),
      proj(4 * e, e, nn::SubSeed(seed, 2)) {}

Tensor GptBlock::forward(const Tensor& x) const {
  Tensor h = x + attn(ln1(x));
  return h + proj(act(fc(ln2(h))));
}

nn::NamedTensorList GptBlock::NamedTensors(const std::string& prefix) {
  nn::NamedTensorList out;
  nn::AppendChild(prefix, "ln1", ln1, out);
  nn::AppendChild(prefix, "attn", attn, out);
  nn::AppendChild(prefix, "ln2", ln2, out);
  nn::AppendChild(prefix, "fc", fc, out);
  nn::AppendChild(prefix, "proj", proj, out);
  return out;
}

}  // namespace coil::examples

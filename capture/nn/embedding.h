// nn::Embedding: a lookup table of `num_embeddings` rows (torch.nn.Embedding).
//
//   nn::Embedding emb(/*num_embeddings=*/1000, /*embedding_dim=*/64, /*seed=*/0);
//   Tensor h = emb(ids);  // int64 ids [B, L] -> [B, L, 64]
#ifndef COIL_CAPTURE_NN_EMBEDDING_H_
#define COIL_CAPTURE_NN_EMBEDDING_H_

#include <cstdint>
#include <optional>

#include "capture/nn/module.h"
#include "capture/tensor.h"

namespace coil::nn {

class Embedding : public Module {
 public:
  // torch's init: weight standard normal (deterministic in `seed`), the padding_idx row zero.
  Embedding(int64_t num_embeddings, int64_t embedding_dim, uint64_t seed = 0,
            std::optional<int64_t> padding_idx = std::nullopt);

  // `indices`: an integer tensor of any shape; the output appends embedding_dim.
  Tensor forward(const Tensor& indices) const;
  Tensor operator()(const Tensor& indices) const { return forward(indices); }
  NamedTensorList NamedTensors(const std::string& prefix = "") override;

  Tensor weight;  // [num_embeddings, embedding_dim]
  std::optional<int64_t> padding_idx;
};

}  // namespace coil::nn

#endif  // COIL_CAPTURE_NN_EMBEDDING_H_

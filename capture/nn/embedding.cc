// nn::Embedding.
#include "capture/nn/embedding.h"

#include "absl/strings/str_cat.h"

namespace coil::nn {

Embedding::Embedding(int64_t num_embeddings, int64_t embedding_dim, uint64_t seed,
                     std::optional<int64_t> pad)
    : padding_idx(pad) {
  if (padding_idx && *padding_idx < 0) *padding_idx += num_embeddings;
  if (padding_idx && (*padding_idx < 0 || *padding_idx >= num_embeddings)) {
    throw Error(absl::InvalidArgumentError(absl::StrCat(
        "nn::Embedding: padding_idx ", *pad, " is out of range for ", num_embeddings,
        " embeddings")));
  }
  HostTensor w = Tensor::Randn({num_embeddings, embedding_dim}, seed).host();
  if (padding_idx) {
    for (int64_t j = 0; j < embedding_dim; ++j) w.SetDouble({*padding_idx, j}, 0.0);
  }
  weight = Tensor::FromHost(w);
}

Tensor Embedding::forward(const Tensor& indices) const {
  return embedding(weight, indices, padding_idx.value_or(-1));
}

NamedTensorList Embedding::NamedTensors(const std::string& prefix) {
  return {{prefix + "weight", &weight}};
}

}  // namespace coil::nn

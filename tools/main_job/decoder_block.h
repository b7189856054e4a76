// A GPT-style decoder block built with coil's GraphBuilder: the main job's model until the
// ONNX frontend and the compiled backends land.
//
//   x -> layer_norm -> q,k,v linears -> causal scaled_dot_product_attention -> out linear
//     -> residual add -> layer_norm -> linear -> gelu -> linear -> residual add
//     -> vocabulary linear -> softmax
//
// The batch dimension is the symbol "batch", so one graph serves every batch size.
#ifndef COIL_TOOLS_MAIN_JOB_DECODER_BLOCK_H_
#define COIL_TOOLS_MAIN_JOB_DECODER_BLOCK_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace coil::main_job {

struct DecoderConfig {
  int64_t seq = 16;
  int64_t d_model = 64;
  int64_t d_ff = 256;
  int64_t vocab = 128;
  uint64_t seed = 0;  // weights are seeded random, scaled like PyTorch's default init
};

absl::StatusOr<Graph> BuildDecoderBlock(const DecoderConfig& config);

}  // namespace coil::main_job

#endif  // COIL_TOOLS_MAIN_JOB_DECODER_BLOCK_H_

// Copying a strided view's elements into row-major order with the element size fixed at
// compile time: what a permute, a broadcast or a reshape of a non-contiguous tensor costs in
// the reference interpreter (constant folding evaluates them on whole weights: a transposed
// 16M-element bf16 weight went through per-element index arithmetic and double conversion at
// ~23 ns an element).
//
// Rows along the last dim are copied with its stride (memcpy when it is 1). When the last dim is
// strided and another dim is the source's unit-stride one (a transpose), that pair is copied in
// square tiles so that both the reads and the writes stay within a few cache lines.
#ifndef COIL_RUNTIME_STRIDED_COPY_H_
#define COIL_RUNTIME_STRIDED_COPY_H_

#include <cstdint>

#include "absl/types/span.h"

namespace coil {

// Writes the elements of the view (shape, strides in elements, both of one rank; element size
// 1, 2, 4 or 8 bytes) at `src` to `dst` in row-major order: numel x element_size bytes. `src`
// points at the view's element [0, ..., 0]; strides may be 0 (broadcast) or negative. The
// regions must not overlap.
void CopyStridedToRowMajor(const uint8_t* src, absl::Span<const int64_t> shape,
                           absl::Span<const int64_t> strides, int64_t element_size,
                           uint8_t* dst);

}  // namespace coil

#endif  // COIL_RUNTIME_STRIDED_COPY_H_

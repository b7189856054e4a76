// Channels-last activations in a Schedule: the contract between inductor's channels_last pass
// (inductor/passes/channels_last.h), which stores some 4-D buffers as [N, H, W, C] instead of
// [N, C, H, W], and the runtimes that run an aten.convolution extern over such buffers.
//
// A convolution extern whose input 0 or output buffer is stored channels-last carries the
// attribute kChannelsLastAttr = IntList{input0, output} (1: that buffer's shape is the
// permuted [N, H, W, C] of the convolution's logical [N, C, H, W]). It is not an attribute of
// the op's schema: a runtime takes it out (TakeChannelsLast) before checking the remaining
// attributes, and one that does not know it refuses the extern as an unknown attribute.
//
//   absl::StatusOr<ChannelsLast> cl = TakeChannelsLast(attrs);  // attrs now without it
//   std::vector<int64_t> nchw = FromChannelsLast(x.shape);      // when cl->input
#ifndef COIL_IR_CHANNELS_LAST_H_
#define COIL_IR_CHANNELS_LAST_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ir/attribute.h"

namespace coil {

inline constexpr char kChannelsLastAttr[] = "coil.channels_last";

// Which of a convolution extern's activations are stored channels-last.
struct ChannelsLast {
  bool input = false;
  bool output = false;
  bool any() const { return input || output; }
};

// [N, C, H, W] -> [N, H, W, C] (any element type: shapes, SymExprs, indices).
template <typename T>
std::vector<T> ToChannelsLast(const std::vector<T>& nchw) {
  return {nchw[0], nchw[2], nchw[3], nchw[1]};
}

// [N, H, W, C] -> [N, C, H, W].
template <typename T>
std::vector<T> FromChannelsLast(const std::vector<T>& nhwc) {
  return {nhwc[0], nhwc[3], nhwc[1], nhwc[2]};
}

// Removes kChannelsLastAttr from `attrs` and returns its flags (both false when absent).
// InvalidArgument when it is not a list of two 0/1 values.
inline absl::StatusOr<ChannelsLast> TakeChannelsLast(AttrMap& attrs) {
  ChannelsLast cl;
  auto it = attrs.find(kChannelsLastAttr);
  if (it == attrs.end()) return cl;
  absl::StatusOr<IntList> v = GetInts(attrs, kChannelsLastAttr);
  if (!v.ok() || v->size() != 2 || ((*v)[0] != 0 && (*v)[0] != 1) ||
      ((*v)[1] != 0 && (*v)[1] != 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("attribute '", kChannelsLastAttr,
                     "' must be a list of two flags (input, output), each 0 or 1"));
  }
  cl.input = (*v)[0] == 1;
  cl.output = (*v)[1] == 1;
  attrs.erase(it);
  return cl;
}

}  // namespace coil

#endif  // COIL_IR_CHANNELS_LAST_H_

// Channels-last copies (channels_last_copy.h): strided views of a contiguous tensor, copied.
#include "runtime/channels_last_copy.h"

#include <cstdint>
#include <vector>

#include "ir/check.h"

namespace coil {

HostTensor FromChannelsLastTensor(const HostTensor& nhwc) {
  COIL_CHECK(nhwc.rank() == 4) << nhwc.TypeString();
  const HostTensor c = nhwc.Contiguous();
  const std::vector<int64_t>& s = c.shape();  // n, h, w, ch
  const int64_t n = s[0], h = s[1], w = s[2], ch = s[3];
  return c.View({n, ch, h, w}, {h * w * ch, 1, w * ch, ch}, c.offset()).Contiguous();
}

HostTensor ToChannelsLastTensor(const HostTensor& nchw) {
  COIL_CHECK(nchw.rank() == 4) << nchw.TypeString();
  const HostTensor c = nchw.Contiguous();
  const std::vector<int64_t>& s = c.shape();  // n, ch, h, w
  const int64_t n = s[0], ch = s[1], h = s[2], w = s[3];
  return c.View({n, h, w, ch}, {ch * h * w, w, 1, h * w}, c.offset()).Contiguous();
}

}  // namespace coil

// Copies between a 4-D tensor's [N, C, H, W] and channels-last [N, H, W, C] memory, for the
// runtimes' reference-kernel path of a convolution extern whose activations inductor stored
// channels-last (ir/channels_last.h): the reference kernel computes in NCHW, so its input is
// copied out of channels-last and its result back into it. Not the fast path (runtime/cpu's
// oneDNN convolutions read the layout directly).
//
//   HostTensor nchw = FromChannelsLastTensor(nhwc);   // shape [N, C, H, W]
//   HostTensor back = ToChannelsLastTensor(nchw);     // shape [N, H, W, C]
#ifndef COIL_RUNTIME_CHANNELS_LAST_COPY_H_
#define COIL_RUNTIME_CHANNELS_LAST_COPY_H_

#include "runtime/host_tensor.h"

namespace coil {

// `nhwc` (rank 4) as [N, C, H, W]: element (n, c, h, w) = nhwc(n, h, w, c).
HostTensor FromChannelsLastTensor(const HostTensor& nhwc);

// `nchw` (rank 4) as [N, H, W, C]: element (n, h, w, c) = nchw(n, c, h, w).
HostTensor ToChannelsLastTensor(const HostTensor& nchw);

}  // namespace coil

#endif  // COIL_RUNTIME_CHANNELS_LAST_COPY_H_

// The derivatives of coil's eager ops (capture/autograd.h's EagerDerivatives) from autograd/'s
// rules: one op becomes a one-node graph, its joint graph (autograd/joint_graph.h) runs on the
// reference interpreter with the saved inputs and the incoming gradients. Joint graphs are
// cached by op, attributes, input types and which gradients flow. //:coil registers it at
// startup, so eager tensors that require grad have backward() in programs linking //:coil.
//
//   coil::SetEagerDerivatives(driver::AutogradEagerDerivatives());
#ifndef COIL_TOOLS_DRIVER_EAGER_DERIVATIVES_H_
#define COIL_TOOLS_DRIVER_EAGER_DERIVATIVES_H_

#include <memory>

#include "capture/autograd.h"

namespace coil::driver {

std::shared_ptr<const EagerDerivatives> AutogradEagerDerivatives();

}  // namespace coil::driver

#endif  // COIL_TOOLS_DRIVER_EAGER_DERIVATIVES_H_

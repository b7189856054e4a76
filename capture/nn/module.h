// nn::Module: what every coil::nn building block shares: named parameters and buffers (named
// as in torch's state_dict) and loading them from values exported by PyTorch.
//
//   nn::Linear fc(64, 10, /*seed=*/0);               // torch's default init, deterministic
//   absl::Status s = fc.LoadParameters(values);      // {"weight": ..., "bias": ...}
//   Tensor y = fc(x);
//
// Modules are small value classes whose parameters are public Tensors; a composite module
// lists its children's tensors under a prefix (NamedTensors("block.")), so a whole model
// loads from one torch state_dict. Parameters take part in autograd when set to require grad;
// the only training-mode switch is BatchNorm2d::training (batch statistics).
#ifndef COIL_CAPTURE_NN_MODULE_H_
#define COIL_CAPTURE_NN_MODULE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "capture/tensor.h"
#include "runtime/host_tensor.h"

namespace coil::nn {

// (name, tensor) pairs; the pointers refer to a module's members.
using NamedTensorList = std::vector<std::pair<std::string, Tensor*>>;

class Module {
 public:
  virtual ~Module() = default;

  // Every parameter and buffer, named like torch's state_dict keys with `prefix` prepended
  // ("weight", "bias", "running_mean", "out_proj.weight", ...). Absent optional parameters
  // (a Linear without bias) are not listed.
  virtual NamedTensorList NamedTensors(const std::string& prefix = "") = 0;

  // Replaces every tensor of NamedTensors(prefix) with values[name] (sharing its storage).
  // Errors (InvalidArgument) name the key: a missing key, a shape or dtype different from the
  // parameter's, or a key that starts with `prefix` but names no tensor of this module. On
  // error nothing is changed.
  absl::Status LoadParameters(const std::map<std::string, HostTensor>& values,
                              const std::string& prefix = "");
};

// Appends `child`'s tensors, named `prefix` + `name` + "." + key, to `out`.
void AppendChild(const std::string& prefix, const std::string& name, Module& child,
                 NamedTensorList& out);

// An optional op input from a member that may be undefined (an absent bias).
inline std::optional<Tensor> Opt(const Tensor& t) {
  return t.defined() ? std::optional<Tensor>(t) : std::nullopt;
}

// Uniform(-bound, bound) in `shape`, deterministic in `seed` (f32).
Tensor UniformInit(std::vector<int64_t> shape, double bound, uint64_t seed);

// Seeds for the parameters of one module: the i-th parameter of a module built with `seed`.
uint64_t SubSeed(uint64_t seed, uint64_t i);

}  // namespace coil::nn

#endif  // COIL_CAPTURE_NN_MODULE_H_

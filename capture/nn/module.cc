// nn::Module's parameter loading and the shared init helpers.
#include "capture/nn/module.h"

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace coil::nn {
absl::Status Module::LoadParameters(const std::map<std::string, HostTensor>& values,
                                    const std::string& prefix) {
  NamedTensorList named = NamedTensors(prefix);
  std::set<std::string> known;
  std::vector<std::pair<Tensor*, HostTensor>> updates;
  for (auto& [name, tensor] : named) {
    known.insert(name);
    auto it = values.find(name);
    if (it == values.end()) {
      return absl::InvalidArgumentError(absl::StrCat("LoadParameters: no value for '", name, "'"));
    }
    const HostTensor& v = it->second;
    std::vector<int64_t> want;
    for (const SymInt& s : tensor->sizes()) want.push_back(s.hint());
    if (v.shape() != want || v.dtype() != tensor->dtype()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "LoadParameters: '", name, "' is ", v.TypeString(), ", the module expects ",
          tensor->TypeString()));
    }
    updates.emplace_back(tensor, v);
  }
  for (const auto& [name, v] : values) {
    if (absl::StartsWith(name, prefix) && !known.count(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("LoadParameters: '", name, "' names no parameter of this module"));
    }
  }
  for (auto& [tensor, v] : updates) *tensor = Tensor::FromHost(v);
  return absl::OkStatus();
}

void AppendChild(const std::string& prefix, const std::string& name, Module& child,
                 NamedTensorList& out) {
  for (auto& entry : child.NamedTensors(absl::StrCat(prefix, name, "."))) {
    out.push_back(std::move(entry));
  }
}

Tensor UniformInit(std::vector<int64_t> shape, double bound, uint64_t seed) {
  return Tensor::Rand(std::move(shape), seed) * (2 * bound) - bound;
}

uint64_t SubSeed(uint64_t seed, uint64_t i) {
  // splitmix64 of (seed, i): distinct parameters get unrelated streams.
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace coil::nn

// The decomposition table: one entry per aten op, found by name, plus the list of externs
// (aten ops kept whole for backends to hand to libraries).
//
//   const DecompositionFn* fn = DecompositionRegistry::Global().Find("aten.softmax");
//
// Entries live in prims/decompositions/*.cc, one file per op family; each is a short
// function written with the language in prims/emitter.h.
#ifndef COIL_PRIMS_DECOMPOSITION_REGISTRY_H_
#define COIL_PRIMS_DECOMPOSITION_REGISTRY_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "prims/emitter.h"

namespace coil::prims {

class DecompositionRegistry {
 public:
  // Every decomposition coil defines, registered on first use.
  static const DecompositionRegistry& Global();

  // CHECK-fails on a duplicate.
  void Add(std::string op, DecompositionFn fn);
  const DecompositionFn* Find(absl::string_view op) const;
  std::vector<std::string> Ops() const;  // sorted

 private:
  absl::flat_hash_map<std::string, DecompositionFn> table_;
};

// Whether `op` is a prim (`prims.*`).
bool IsPrim(absl::string_view op);
// The aten ops every backend supports whole: matmul (`aten.mm`, `aten.bmm`) and
// `aten.convolution`.
bool IsExtern(absl::string_view op);
const std::vector<std::string>& ExternOps();

}  // namespace coil::prims

#endif  // COIL_PRIMS_DECOMPOSITION_REGISTRY_H_

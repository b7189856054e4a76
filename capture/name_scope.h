// NameScope: the module path that captured ops are named with (provenance, as torch's
// nn_module_stack): every op traced while scopes are open gets the path of the open scopes,
// joined by ".", as its node name. Prims, autograd and inductor keep the name (docs/inspector.md),
// so the inspector finds a captured op's decomposition and kernel by it.
//
//   {
//     coil::NameScope block("blocks.0");
//     coil::NameScope attn("attn");
//     y = x.matmul(w);        // the aten.matmul node is named "blocks.0.attn"
//   }
//
// Scopes are per thread and must nest (destroyed in reverse order of creation).
#ifndef COIL_CAPTURE_NAME_SCOPE_H_
#define COIL_CAPTURE_NAME_SCOPE_H_

#include <string>

namespace coil {

class NameScope {
 public:
  explicit NameScope(const std::string& name);
  ~NameScope();
  NameScope(const NameScope&) = delete;
  NameScope& operator=(const NameScope&) = delete;

  // The path of the scopes open on this thread ("" when none).
  static const std::string& CurrentPath();

 private:
  size_t previous_size_;
};

}  // namespace coil

#endif  // COIL_CAPTURE_NAME_SCOPE_H_

// The op registry: one schema + meta function per op, found by name.
//
// A schema says what an op takes (tensor inputs, typed attributes with defaults) and its meta
// function says what it produces (output dtypes and symbolic shapes) without touching data.
// Other concerns of an op live in their own packages and registries, keyed by the same name:
// reference kernels in runtime/, decompositions in prims/, derivatives in autograd/.
//
//   const OpSchema* add = OpRegistry::Global().Find("aten.add");
//   AttrMap attrs;
//   absl::StatusOr<std::vector<TensorType>> out = InferOutputTypes(*add, {a, b}, attrs);
//
// Ops follow PyTorch's semantics (broadcasting, type promotion, default attribute values);
// where coil differs, the op's `doc` says so.
#ifndef COIL_IR_OP_REGISTRY_H_
#define COIL_IR_OP_REGISTRY_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/attribute.h"
#include "ir/tensor_type.h"

namespace coil {

struct OpInput {
  std::string name;
  // Optional inputs come last and may be left off (e.g. a convolution's bias).
  bool optional = false;
  // A variadic input takes every remaining tensor (e.g. cat's tensors); at most one, last.
  bool variadic = false;
};

struct AttrSpec {
  std::string name;
  AttrKind kind;
  // nullopt: the attribute is required.
  std::optional<Attribute> default_value;
  // Integers that size things are limited to [-2^40, 2^40] (NormalizeAttrs); false for those
  // that do not (a random op's seed and counter offset), which take any int64.
  bool size_like = true;
};

enum class OpClass {
  kElementwise,
  kReduction,
  kNormalization,
  kShape,       // views, reshapes, concatenation, padding
  kIndexing,    // gather, index_select, embedding, ...
  kMatmul,
  kConvolution,
  kPooling,
  kCreation,
  kAttention,
  kRandom,
};

// Infers output types. `attrs` has every schema attribute (defaults filled in) and nothing
// else; inputs match the schema's arity. Errors are InvalidArgument describing the problem
// (the caller adds which node).
using MetaFn = std::function<absl::StatusOr<std::vector<TensorType>>(
    absl::Span<const TensorType> inputs, const AttrMap& attrs)>;

struct OpSchema {
  std::string name;  // "aten.add"
  std::vector<OpInput> inputs;
  std::vector<AttrSpec> attrs;
  OpClass op_class = OpClass::kElementwise;
  MetaFn meta;
  // One line: the PyTorch op it mirrors and any difference.
  std::string doc;
  // In-place ops (`aten.add_`): the input this op writes; its output aliases that input.
  // -1 for ops without side effects. Only graphs before prims::Functionalize contain them.
  int mutated_input = -1;
  // View ops (`aten.slice`, `aten.permute`, ...): in eager semantics output 0 may share input
  // 0's storage, so a later in-place op on either is seen through both.
  bool is_view = false;

  int min_inputs() const;
  int max_inputs() const;  // INT_MAX when variadic
  const AttrSpec* FindAttr(absl::string_view name) const;
};

class OpRegistry {
 public:
  // Every op coil defines, registered on first use.
  static const OpRegistry& Global();

  // CHECK-fails on a duplicate name or a schema without a meta function.
  void Register(OpSchema schema);
  const OpSchema* Find(absl::string_view name) const;
  // For registration functions only (RegisterAllOps), to set flags on schemas another family
  // registered (inplace_ops.cc marks the view ops). nullptr when unknown.
  OpSchema* FindMutable(absl::string_view name);
  // All schemas, sorted by name.
  std::vector<const OpSchema*> All() const;

 private:
  absl::flat_hash_map<std::string, std::unique_ptr<OpSchema>> ops_;
};

// Whether an attribute of kind `got` is accepted where a schema declares `spec`: the same
// kind, or an int where a float/sym is declared (Python ints are valid floats; the kind is
// kept because PyTorch's promotion distinguishes them), ints for syms/floats lists.
bool AttrKindAccepts(AttrKind spec, AttrKind got);

// Checks `attrs` against the schema (unknown names, wrong kinds, missing required ones) and
// fills in defaults.
absl::Status NormalizeAttrs(const OpSchema& schema, AttrMap& attrs);

// Checks arity, normalizes attributes and runs the meta function.
absl::StatusOr<std::vector<TensorType>> InferOutputTypes(const OpSchema& schema,
                                                         absl::Span<const TensorType> inputs,
                                                         AttrMap& attrs);

}  // namespace coil

#endif  // COIL_IR_OP_REGISTRY_H_

// The reference interpreter: runs any Graph on the CPU with the reference kernels.
//
// It is coil's oracle. Symbols are bound from the input shapes, constants are loaded (inline
// or from external data files), nodes run in order, and each value is freed after its last
// use. In float64 mode every floating value is computed and returned as float64.
//
// Semantics are eager PyTorch's: view ops return views sharing storage (where torch's would)
// and in-place ops write through them, so an in-place op on a graph input changes the
// caller's tensor (in float64 mode too: the final values are written back, rounded).
//
//   absl::StatusOr<std::vector<HostTensor>> out = Interpret(graph, {x});
#ifndef COIL_RUNTIME_INTERPRETER_H_
#define COIL_RUNTIME_INTERPRETER_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/graph.h"
#include "runtime/host_tensor.h"

namespace coil {

struct InterpreterOptions {
  // Compute every floating-point value in float64 (the oracle mode).
  bool float64 = false;
  // Folder that external constant data paths are relative to.
  std::string external_data_dir;
};

// Errors: wrong number of inputs, an input whose dtype or shape does not match the graph
// (naming the input and dimension), a missing kernel (naming the op and node), or a kernel's
// data-dependent error (naming the node).
absl::StatusOr<std::vector<HostTensor>> Interpret(const Graph& graph,
                                                  absl::Span<const HostTensor> inputs,
                                                  const InterpreterOptions& options = {});

// Checks the inputs (count, dtypes, ranks, sizes) and binds the graph's symbols from their
// shapes. Every runner calls it first, so all report bad inputs alike. Errors name the input
// and dimension.
absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> BindSymbols(
    const Graph& graph, absl::Span<const HostTensor> inputs);

// Replaces every sym / syms attribute by its value under the symbol bindings (so kernels see
// constants). Errors name the attribute and the unbound symbol.
absl::Status BindSymAttrs(AttrMap& attrs, const absl::flat_hash_map<std::string, int64_t>& bindings);

// Loads a constant's data (inline or external) as a tensor. External data is read with
// ir/io/data_path.h's ReadDataFile relative to `external_data_dir`: a path outside that folder
// is InvalidArgument, a missing file NotFound, anything but a regular file InvalidArgument, a
// file too short DataLoss; each message starts "constant %ID: ".
absl::StatusOr<HostTensor> LoadConstant(const Value& constant,
                                        const std::string& external_data_dir);

}  // namespace coil

#endif  // COIL_RUNTIME_INTERPRETER_H_

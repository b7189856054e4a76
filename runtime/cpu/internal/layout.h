// The per-binding layout of a CpuExecutable's run: every shape, byte size, arena offset,
// parallel split and extern call that depends on the symbol values only, computed once per
// distinct binding (executable.cc keeps the last one).
// Not an API: used by executable.cc.
//
//   std::vector<int64_t> key = LayoutKey(graph, bindings);
//   absl::StatusOr<Layout> l = ComputeLayout(validated, std::move(key), bindings, threads);
#ifndef COIL_RUNTIME_CPU_INTERNAL_LAYOUT_H_
#define COIL_RUNTIME_CPU_INTERNAL_LAYOUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ir/attribute.h"
#include "ir/graph.h"
#include "runtime/cpu/externs.h"
#include "runtime/cpu/internal/schedule_validation.h"

namespace coil::cpu {

// An EXTERN kernel's call under one binding: shapes and bound attributes; data pointers are
// set per run.
struct ExternCall {
  std::vector<ExternTensor> inputs;
  // Per input, the bytes from its buffer's start to its data (a view's offset; else 0).
  std::vector<int64_t> input_offsets;
  ExternTensor output;
  AttrMap attrs;
};

// Everything that depends on the symbol values only.
struct Layout {
  std::vector<int64_t> key;  // the bound symbols, in graph order (INT64_MIN: unbound)
  std::vector<std::vector<int64_t>> shapes;  // by buffer index
  std::vector<int64_t> bytes;
  std::vector<int64_t> offsets;  // INTERMEDIATE
  int64_t arena_bytes = 0;
  std::vector<int64_t> parallel;  // P per kernel (0: nothing to run)
  std::vector<int64_t> grain;
  std::vector<ExternCall> externs;  // by kernel index (empty for non-EXTERN kernels)
};

// The bound symbols of `bindings` in `graph`'s symbol order (INT64_MIN: unbound): a layout's key.
std::vector<int64_t> LayoutKey(const Graph& graph,
                               const absl::flat_hash_map<std::string, int64_t>& bindings);

// The layout of `schedule` under `bindings` (whose LayoutKey is `key`). Errors
// (InvalidArgument naming the buffer or kernel): sizes that do not evaluate, are negative or
// overflow; intermediates outside the arena; extern attributes that do not bind.
// `threads`: the pool's, which sets how small a kernel runs on the calling thread alone.
absl::StatusOr<Layout> ComputeLayout(const ValidatedSchedule& schedule, std::vector<int64_t> key,
                                     const absl::flat_hash_map<std::string, int64_t>& bindings,
                                     int threads);

}  // namespace coil::cpu

#endif  // COIL_RUNTIME_CPU_INTERNAL_LAYOUT_H_

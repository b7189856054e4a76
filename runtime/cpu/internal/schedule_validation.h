// A Schedule checked for the CPU executable: every buffer and kernel of it resolved once at
// Create (symbolic shapes parsed, inputs and constants found in the graph, constant bytes
// placed, kernel functions and extern ops looked up), so that runs only evaluate symbols.
// Not an API: used by executable.cc and layout.cc.
//
//   absl::StatusOr<ValidatedSchedule> v =
//       ValidateSchedule(schedule, graph, table, dense_constants, external_data_dir);
#ifndef COIL_RUNTIME_CPU_INTERNAL_SCHEDULE_VALIDATION_H_
#define COIL_RUNTIME_CPU_INTERNAL_SCHEDULE_VALIDATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ir/attribute.h"
#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/proto/schedule.pb.h"
#include "ir/sym_expr.h"
#include "runtime/cpu/kernel_abi.h"
#include "runtime/host_tensor.h"

namespace coil::cpu {

struct BufferInfo {
  const proto::Buffer* proto = nullptr;
  DType dtype = proto::DTYPE_UNSPECIFIED;
  int64_t elem_size = 0;
  std::vector<SymExpr> shape;
  SymExpr arena_offset;
  int input_pos = -1;     // INPUT: the graph input it holds
  bool written = false;   // INPUT: some kernel stores into it
  // CONSTANT: its contiguous bytes, borrowed from the schedule's dense constant (see
  // Impl::constants_from) or owned by `constant` (a copy, or external data).
  const char* constant_data = nullptr;
  HostTensor constant;
  std::string Describe() const {
    return absl::StrCat("buffer ", proto->id(), " ('", proto->name(), "')");
  }
};

struct KernelInfo {
  const proto::Kernel* proto = nullptr;
  std::string where;  // "kernel 3 'fused_add'"
  std::vector<SymExpr> ranges;
  std::vector<std::vector<SymExpr>> loop_ranges;
  CoilKernelFn fn = nullptr;  // the body, or the extern's epilogue
  // EXTERN.
  AttrMap attrs;  // normalized; sym attributes still symbolic when `symbolic_attrs`
  bool symbolic_attrs = false;
};

// The checked schedule: buffers in schedule order, kernels in program order.
struct ValidatedSchedule {
  std::vector<BufferInfo> buffers;
  std::vector<int> index_of_id;  // buffer id -> index in `buffers`, or -1
  std::vector<KernelInfo> kernels;
  SymExpr arena_bytes;
};

// Checks `schedule` against `graph` (its graph with dense constants stood in for) and the
// kernel table (kernel id -> function). `dense`: the dense constant bytes by graph value id
// (used in place when 16-byte aligned, else copied); other constants are loaded from
// `external_data_dir`. The result points into `schedule` and `dense`'s strings, which must
// outlive it. Errors (InvalidArgument naming the buffer or kernel): bad ids, dtypes, shapes or
// kinds, inputs and constants the graph lacks, intermediates without a memory plan, unknown
// outputs, duplicate kernel ids, kernels without functions or with functions the schedule does
// not have, unknown extern ops or attributes; Unimplemented: an extern op without an
// implementation.
absl::StatusOr<ValidatedSchedule> ValidateSchedule(
    const proto::Schedule& schedule, const Graph& graph,
    const absl::flat_hash_map<int, CoilKernelFn>& table,
    const absl::flat_hash_map<int64_t, const std::string*>& dense,
    const std::string& external_data_dir);

}  // namespace coil::cpu

#endif  // COIL_RUNTIME_CPU_INTERNAL_SCHEDULE_VALIDATION_H_

// A Schedule kernel's loops compiled for interpretation: expression ids become value slots,
// loop variables and _v<id> become slots of an int64 array, and every index SymExpr an
// IndexProgram. Not an API: used by runtime/schedule_interpreter.cc only.
//
//   absl::StatusOr<CompiledKernel> k = CompileKernel(kernel_proto, bindings, buffers);
//   absl::Status s = RunCompiledKernel(*k);   // runs `loops` over `ranges`
#ifndef COIL_RUNTIME_INTERNAL_SCHEDULE_KERNEL_H_
#define COIL_RUNTIME_INTERNAL_SCHEDULE_KERNEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/dtype.h"
#include "ir/proto/schedule.pb.h"
#include "ir/sym_expr.h"
#include "runtime/internal/index_program.h"
#include "runtime/internal/raw_value.h"
#include "runtime/reference/prims_scalar.h"

namespace coil::schedule_internal {

// A buffer's memory while the schedule runs: contiguous row-major at `data`.
struct BufferMem {
  int id = 0;
  std::string name;
  proto::Buffer::Kind kind = proto::Buffer::KIND_UNSPECIFIED;
  DType dtype = proto::DTYPE_UNSPECIFIED;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // in elements
  int64_t numel = 0;
  int64_t elem_size = 0;
  uint8_t* data = nullptr;
  int64_t size_bytes() const { return numel * elem_size; }
};

// One buffer access: a buffer and one IndexProgram per dim.
struct Access {
  BufferMem* buf = nullptr;
  std::vector<IndexProgram> index;
};

enum class RedOp : uint8_t { kSum, kProd, kMax, kMin, kArgMax, kArgMin };

// One expression, ready to run.
struct Instr {
  proto::Expr::Kind kind = proto::Expr::KIND_UNSPECIFIED;
  int expr_id = 0;
  DType dtype = proto::DTYPE_UNSPECIFIED;
  int dst = -1;  // value slot
  int args[3] = {-1, -1, -1};
  int nargs = 0;
  // APPLY: the compute dtype (the last operand's; convert_element_type: the source).
  bool convert = false;
  ScalarOp op = ScalarOp::kAdd;
  DType in_dtype = proto::DTYPE_UNSPECIFIED;
  bool in_fp = false;
  bool in_bool = false;
  DType arg_dtypes[3] = {};
  // LOAD / STORE.
  int access = -1;
  int mask = -1;  // value slot of the mask
  // LITERAL, masked-off LOAD.
  Val literal;
  // INDEX / RANDOM: the IndexProgram; RANDOM's seed.
  int program = -1;
  int64_t seed = 0;
  // REDUCE: the reduction's state.
  int reduce = -1;
  // Variable slot that takes this value as an integer (_v<id>), or -1.
  int v_slot = -1;
};

struct ReduceSpec {
  RedOp op = RedOp::kSum;
  DType dtype = proto::DTYPE_UNSPECIFIED;
  DType in_dtype = proto::DTYPE_UNSPECIFIED;
  bool in_fp = false;
  int arg = -1;  // value slot
  int dst = -1;  // value slot of the result
  int v_slot = -1;
  int expr_id = 0;
};

struct CompiledLoop {
  std::vector<int64_t> ranges;
  int64_t count = 1;
  std::vector<Instr> body;
  std::vector<int> reduces;  // ReduceSpec indices
};

struct CompiledKernel {
  int id = 0;
  std::string name;
  std::vector<int64_t> ranges;
  int64_t count = 1;
  std::vector<CompiledLoop> loops;
  std::vector<Access> accesses;
  std::vector<IndexProgram> programs;
  std::vector<ReduceSpec> reduces;
  int num_vars = 0;
  int num_values = 0;
  int r_base = 0;  // slot of _r0
  // "kernel 3 'fused_exp_add'", for messages.
  std::string where;
};

// Compiles `kernel`'s ranges and loops. `bindings`: shape symbols to constants; `buffers`: by
// id (index 0 unused). Errors (InvalidArgument naming the kernel): malformed or out-of-scope
// expression ids, unknown buffers or ops, unbound symbols, rank mismatches.
absl::StatusOr<CompiledKernel> CompileKernel(
    const proto::Kernel& kernel, const absl::flat_hash_map<std::string, SymExpr>& bindings,
    const std::vector<BufferMem*>& buffers);

// Runs the loops over every outer index. Errors (InvalidArgument naming the kernel): an index
// out of its buffer's range, integer division by zero, an empty max/min/arg reduction.
absl::Status RunCompiledKernel(const CompiledKernel& kernel);

// A SymExpr proto with the shape symbols substituted; an error names a malformed expression.
absl::StatusOr<SymExpr> BindExpr(const proto::SymExpr& e,
                                 const absl::flat_hash_map<std::string, SymExpr>& bindings);
// The value of a SymExpr proto that must be constant once the shape symbols are bound.
absl::StatusOr<int64_t> EvalConstant(const proto::SymExpr& e,
                                     const absl::flat_hash_map<std::string, SymExpr>& bindings);

}  // namespace coil::schedule_internal

#endif  // COIL_RUNTIME_INTERNAL_SCHEDULE_KERNEL_H_

// Index expressions (ir SymExpr protos) as CUDA C++ text, and the interval analysis that decides
// whether a kernel's index math fits in 32 bits. Not an API: used by kernel_source.cc.
//
// Names in the text: loop variables _i<d> -> i<d>, _r<d> -> r<d>, _v<id> -> v<id>; a graph shape
// symbol at position p of Schedule.graph.symbols -> s<p>. floordiv / mod follow Python
// (coil_floordiv / coil_mod of the prelude; positive constant divisors inline).
//
//   absl::StatusOr<std::string> c = IndexSource(expr, symbols, "int");   // "((i0 * 64) + i1)"
#ifndef COIL_CODEGEN_CUDA_INTERNAL_INDEX_SOURCE_H_
#define COIL_CODEGEN_CUDA_INTERNAL_INDEX_SOURCE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "ir/proto/graph.pb.h"
#include "ir/proto/schedule.pb.h"

namespace coil::codegen_cuda_internal {

// `e` as a C expression of type `type` ("int" or "i64"). `symbols`: graph symbol name ->
// position. Errors: a malformed expression, an unknown symbol name.
absl::StatusOr<std::string> IndexSource(const proto::SymExpr& e,
                                        const absl::flat_hash_map<std::string, int>& symbols,
                                        const std::string& type);

// Closed interval of an integer expression.
struct Interval {
  __int128 lo = 0;
  __int128 hi = 0;
};

// Bounds of `e` and of every subexpression's value, given loop variable ranges (`vars`: "_i0"
// -> [0, n-1]...). nullopt when some value is unbounded (a shape symbol, a _v<id>, a division
// by a non-constant): then 64-bit math is needed.
std::optional<Interval> IndexBounds(const proto::SymExpr& e,
                                    const absl::flat_hash_map<std::string, Interval>& vars);

// Whether every value in `iv` fits in int32 with room for a grid stride.
bool FitsInt32(const Interval& iv);

// The constant value of `e`, if it has no symbols.
std::optional<int64_t> ConstantValue(const proto::SymExpr& e);

// Whether `e` mentions a _v<id> (an index computed from data).
bool MentionsDataValue(const proto::SymExpr& e);

// Every SymExpr kernel `k` evaluates (ranges, Loop ranges, indices, INDEX / RANDOM values).
void ForEachSymExpr(const proto::Kernel& k, absl::FunctionRef<void(const proto::SymExpr&)> f);

// Whether all of `k`'s index math fits 32-bit integers: every range constant, the outer and
// each Loop's iteration counts, the sizes of buffers `bufs` (ids into `buffers`) and every
// index value's interval (IndexBounds) within FitsInt32.
bool IndexMathFitsInt32(const proto::Kernel& k,
                        const absl::flat_hash_map<int, const proto::Buffer*>& buffers,
                        const absl::flat_hash_set<int>& bufs);

}  // namespace coil::codegen_cuda_internal

#endif  // COIL_CODEGEN_CUDA_INTERNAL_INDEX_SOURCE_H_

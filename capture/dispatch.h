// Eager dispatch: the one entry point every generated op function (ops_generated.cc) calls.
// Internal to capture/.
//
// Dispatch sends an op to the active trace (inside coil::compile) or runs it eagerly: output
// types from the op's meta function, values from its reference kernel on the inputs' concrete
// data. View ops return tensors sharing storage with input 0; an in-place op writes into its
// mutated input and returns that very Tensor (same TensorImpl). Errors throw coil::Error
// naming the op, the problem and the call site ("file.cc:12").
//
//   std::vector<Tensor> out = capture_internal::Dispatch("aten.add", {a, b}, attrs, loc);
#ifndef COIL_CAPTURE_DISPATCH_H_
#define COIL_CAPTURE_DISPATCH_H_

#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ir/attribute.h"

namespace coil {
class Tensor;
class SymInt;
struct RandomState;
}  // namespace coil

namespace coil::capture_internal {

// Runs (or records) `op`; returns every output.
std::vector<Tensor> Dispatch(absl::string_view op, std::vector<Tensor> inputs, AttrMap attrs,
                             const std::source_location& loc);

// Dispatch, returning output 0 only.
Tensor DispatchOne(absl::string_view op, std::vector<Tensor> inputs, AttrMap attrs,
                   const std::source_location& loc);

// Runs `op` eagerly on concrete tensors (never records), for the tracer's eager fallback.
std::vector<Tensor> RunEager(absl::string_view op, const std::vector<Tensor>& inputs,
                             AttrMap attrs, const std::source_location& loc);

class Trace;
// A random op given no seed (aten.dropout with train, 0 < p < 1 and seed < 0; likewise
// aten.scaled_dot_product_attention with its dropout_p) draws its seed and counter offset from
// the default generator (random.h), which advances by the element count of what it drops (the
// input; attention's weights [batch..., L, S]); under `trace` the offset is a run-time input
// (Trace::RuntimeInt).
void DrawRandomAttrs(absl::string_view op, const std::vector<Tensor>& inputs, AttrMap& attrs,
                     Trace* trace);
// The default generator's state, advanced by `n` counters (a cached compiled call's draw).
RandomState DrawCounters(int64_t n);

// Helpers for generated code.
// Appends an optional input; one given after a missing one is an error (schemas only allow
// trailing optional inputs to be left off). `missing` tracks the first missing input.
void AddOptional(std::vector<Tensor>& inputs, const std::optional<Tensor>& t, const char* name,
                 const char*& missing, absl::string_view op, const std::source_location& loc);
// SymInt attributes pass their SymExpr (symbolic while tracing).
Attribute SymAttr(const SymInt& s);
Attribute SymsAttr(const std::vector<SymInt>& s);

// "file.cc:12" of a call site (the file's base path as the compiler gave it).
std::string Where(const std::source_location& loc);
// A coil::Error "<op>: <message> (at file.cc:12)" with the status code of `status`.
[[noreturn]] void ThrowOpError(absl::string_view op, const absl::Status& status,
                               const std::source_location& loc);

}  // namespace coil::capture_internal

#endif  // COIL_CAPTURE_DISPATCH_H_

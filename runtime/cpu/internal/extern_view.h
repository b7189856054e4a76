// Extern operands read as strided views of their buffers (schedule.proto's ExternView;
// inductor's [Note: extern operand views]): the view evaluated under one binding and
// normalized for a library (layout.cc), and the contiguous copy a declining implementation
// gets instead (externs.cc).
// Not an API: used by layout.cc and externs.cc.
//
//   absl::StatusOr<EvaluatedView> v = EvaluateView(proto_view, bindings, buffer_numel);
//   tensor.shape = v->shape; tensor.view = v->factors;  // empty when contiguous after all
#ifndef COIL_RUNTIME_CPU_INTERNAL_EXTERN_VIEW_H_
#define COIL_RUNTIME_CPU_INTERNAL_EXTERN_VIEW_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ir/proto/schedule.pb.h"
#include "runtime/cpu/externs.h"

namespace coil::cpu {

struct EvaluatedView {
  int64_t offset = 0;          // elements
  std::vector<int64_t> shape;  // the operand's
  // Per dim, size-1 factors dropped and neighbours that are one run of memory merged; empty
  // as a whole when the operand is the contiguous row-major run at `offset` (a reshape).
  std::vector<std::vector<ExternFactor>> factors;
};

// Errors (InvalidArgument): sizes or strides that do not evaluate or are negative, a dim whose
// sizes and strides differ in number, an element outside the buffer's `numel` elements.
absl::StatusOr<EvaluatedView> EvaluateView(
    const proto::ExternView& view, const absl::flat_hash_map<std::string, int64_t>& bindings,
    int64_t numel);

// Copies the viewed tensor `t` into `dst` (t.numel() elements, row-major).
void GatherView(const ExternTensor& t, char* dst);
// The reverse: `src` (t.numel() elements, row-major) written through `t`'s view (a result
// written through ExternView, schedule.proto's extern_output_view).
void ScatterView(const char* src, const ExternTensor& t);
// How many GatherView and ScatterView calls this process has made: a test's evidence that a
// library read or wrote a view in place (the count does not move) rather than through copies.
int64_t ViewCopiesForTesting();

}  // namespace coil::cpu

#endif  // COIL_RUNTIME_CPU_INTERNAL_EXTERN_VIEW_H_

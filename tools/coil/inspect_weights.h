// `coil inspect --export` without the weights: a CompileReport whose constants' bytes are
// replaced by references (content hash + length, ir/constant_refs.h), so the exported page
// stays small and still shows every constant's type and size. `--with-weights` keeps them.
//
//   WeightsDropped d;
//   absl::StatusOr<std::string> small = DropReportWeights(report_bytes, &d);
#ifndef COIL_TOOLS_COIL_INSPECT_WEIGHTS_H_
#define COIL_TOOLS_COIL_INSPECT_WEIGHTS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace coil::cli {

struct WeightsDropped {
  int64_t constants = 0;  // constants whose bytes were replaced by a reference
  int64_t bytes = 0;      // the bytes left out
};

// Constants of at least this many bytes are weights; smaller ones (scalars, shapes) stay.
inline constexpr int64_t kWeightBytes = 64;

// `report` (a serialized CompileReport) with the raw bytes of every constant of at least
// kWeightBytes, in every graph of every stage, replaced by a ConstantRef. Error: the bytes do
// not parse as a CompileReport.
absl::StatusOr<std::string> DropReportWeights(absl::string_view report, WeightsDropped* dropped);

}  // namespace coil::cli

#endif  // COIL_TOOLS_COIL_INSPECT_WEIGHTS_H_

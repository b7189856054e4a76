// The C++ header of an AOT package (`<name>.h`): what the object was compiled for, the model's
// inputs, symbols and outputs as comments and constants, and `coil_aot::<name>::Create()`.
// Not an API: aot.cc writes it next to the object.
//
//   absl::StatusOr<std::string> h = AotHeader(schedule, info);
#ifndef COIL_CODEGEN_CPU_INTERNAL_AOT_HEADER_H_
#define COIL_CODEGEN_CPU_INTERNAL_AOT_HEADER_H_

#include <string>

#include "absl/status/statusor.h"
#include "ir/proto/schedule.pb.h"

namespace coil::codegen_cpu_internal {

struct AotHeaderInfo {
  std::string name;  // a valid C identifier
  std::string target_triple;
  std::string cpu;
  std::string cpu_features;
  std::string compiler;
  std::string options;
  int num_kernels = 0;  // generated functions
};

// Errors: a schedule whose graph does not load (InvalidArgument).
absl::StatusOr<std::string> AotHeader(const proto::Schedule& schedule, const AotHeaderInfo& info);

}  // namespace coil::codegen_cpu_internal

#endif  // COIL_CODEGEN_CPU_INTERNAL_AOT_HEADER_H_

// WriteCudaPackage and LoadCudaPackage (cuda_package.h).
#include "runtime/cuda/cuda_package.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/io/read_file.h"
#include "ir/io/write_file.h"

namespace coil::cuda {
namespace {

absl::Status CheckModule(const proto::KernelModule& module, const std::string& path) {
  if (module.backend() != "cuda") {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a CUDA package (backend '",
                                                   module.backend(), "')"));
  }
  if (module.kernels_size() == 0 && module.schedule().kernels_size() > 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": a CUDA module without code"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteCudaPackage(const proto::KernelModule& module, const std::string& path) {
  if (absl::Status s = CheckModule(module, path); !s.ok()) return s;
  return WriteFileAtomically(path, module.SerializeAsString());
}

absl::StatusOr<std::unique_ptr<CudaExecutable>> LoadCudaPackage(
    const std::string& path, const CudaExecutableOptions& options) {
  absl::StatusOr<std::string> bytes = ReadRegularFile(path);
  if (!bytes.ok()) return bytes.status();
  proto::KernelModule module;
  if (!module.ParseFromString(*bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a CUDA package (unparsable)"));
  }
  if (absl::Status s = CheckModule(module, path); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<CudaExecutable>> exe =
      CudaExecutable::Create(std::move(module), options);
  if (!exe.ok()) {
    return absl::Status(exe.status().code(), absl::StrCat(path, ": ", exe.status().message()));
  }
  return exe;
}

}  // namespace coil::cuda

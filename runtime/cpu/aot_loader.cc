// AOT package loading: descriptor checks, the embedded Schedule, the kernel table.
#include "runtime/cpu/aot_loader.h"

#include <climits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "runtime/cpu/aot_cpu_features.h"

namespace coil::cpu {
namespace {

// "AOT object 'mlp'" (or without the name when the descriptor has none).
std::string Which(const CoilAotPackage& p) {
  if (p.name == nullptr) return "AOT object";
  return absl::StrCat("AOT object '", p.name, "'");
}

absl::Status CheckDescriptor(const CoilAotPackage& p) {
  if (p.magic != kAotMagic) {
    return absl::DataLossError(absl::StrCat(
        "not a coil AOT package descriptor (magic 0x", absl::Hex(p.magic), ", expected 0x",
        absl::Hex(kAotMagic), ")"));
  }
  if (p.abi_version != kAotAbiVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        Which(p), " has descriptor version ", p.abi_version, "; this runtime reads version ",
        kAotAbiVersion, ": regenerate the object with the coil this program is built with"));
  }
  const std::pair<const char*, const void*> fields[] = {
      {"name", p.name},         {"target_triple", p.target_triple},
      {"cpu", p.cpu},           {"cpu_features", p.cpu_features},
      {"compiler", p.compiler}, {"options", p.options},
  };
  for (const auto& [field, value] : fields) {
    if (value == nullptr) {
      return absl::DataLossError(absl::StrCat(Which(p), ": descriptor field '", field,
                                              "' is null"));
    }
  }
  if (p.schedule == nullptr || p.schedule_size == 0) {
    return absl::DataLossError(absl::StrCat(Which(p), ": no embedded schedule"));
  }
  if (p.kernels == nullptr && p.num_kernels > 0) {
    return absl::DataLossError(absl::StrCat(Which(p), ": descriptor field 'kernels' is null"));
  }
  return absl::OkStatus();
}

bool HostIsLinux() {
#if defined(__linux__)
  return true;
#else
  return false;
#endif
}

absl::Status CheckTarget(const CoilAotPackage& p) {
  std::vector<absl::string_view> parts = absl::StrSplit(p.target_triple, '-');
  const absl::string_view arch = parts[0];
  const bool linux_target = absl::StrContains(p.target_triple, "-linux");
  if (arch != HostArch() || linux_target != HostIsLinux()) {
    return absl::FailedPreconditionError(absl::StrCat(
        Which(p), " was compiled for ", p.target_triple[0] ? p.target_triple : "no target",
        "; this machine is ", HostArch(), HostIsLinux() ? " linux" : ""));
  }
  const CpuFeatureCheck check = CheckCpuFeatures(p.cpu_features);
  if (!check.missing.empty()) {
    const std::string missing = absl::StrJoin(check.missing, ", ");
    return absl::FailedPreconditionError(absl::StrCat(
        Which(p), " was compiled for CPU '", p.cpu, "' and needs ", missing, "; this CPU (",
        HostCpuBrand(), ") lacks ", check.missing.size() == 1 ? "it" : "them",
        ". Regenerate it for this CPU, or for a baseline CPU such as x86-64-v2"));
  }
  if (!check.unknown.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        Which(p), " was compiled for CPU '", p.cpu, "' and needs ",
        absl::StrJoin(check.unknown, ", "),
        ", which this runtime cannot detect; refusing to run it"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckAotPackage(const CoilAotPackage& package) {
  if (absl::Status s = CheckDescriptor(package); !s.ok()) return s;
  return CheckTarget(package);
}

absl::StatusOr<proto::Schedule> AotPackageSchedule(const CoilAotPackage& package) {
  if (absl::Status s = CheckDescriptor(package); !s.ok()) return s;
  if (package.schedule_size > static_cast<uint64_t>(INT_MAX)) {
    return absl::DataLossError(absl::StrCat(Which(package), ": embedded schedule of ",
                                            package.schedule_size,
                                            " bytes is larger than protobuf's 2 GiB limit"));
  }
  proto::Schedule schedule;
  if (!schedule.ParseFromArray(package.schedule, static_cast<int>(package.schedule_size))) {
    return absl::DataLossError(absl::StrCat(Which(package), ": the embedded schedule (",
                                            package.schedule_size, " bytes) does not parse"));
  }
  return schedule;
}

absl::StatusOr<std::unique_ptr<CpuExecutable>> CreateAotExecutable(
    const CoilAotPackage& package, const CpuExecutableOptions& options) {
  if (absl::Status s = CheckAotPackage(package); !s.ok()) return s;
  absl::StatusOr<proto::Schedule> schedule = AotPackageSchedule(package);
  if (!schedule.ok()) return schedule.status();
  KernelTable table;
  for (uint64_t i = 0; i < package.num_kernels; ++i) {
    const CoilAotKernel& k = package.kernels[i];
    const char* symbol = k.symbol != nullptr ? k.symbol : "?";
    if (k.fn == nullptr) {
      return absl::DataLossError(absl::StrCat(Which(package), ": kernel table entry ", i, " (",
                                              symbol, ") has no function"));
    }
    if (k.kernel_id < INT_MIN || k.kernel_id > INT_MAX ||
        !table.emplace(static_cast<int>(k.kernel_id), k.fn).second) {
      return absl::DataLossError(absl::StrCat(Which(package), ": kernel table entry ", i, " (",
                                              symbol, ") has a bad or repeated kernel id ",
                                              k.kernel_id));
    }
  }
  absl::StatusOr<std::unique_ptr<CpuExecutable>> exe =
      CpuExecutable::Create(*std::move(schedule), std::move(table), options);
  if (!exe.ok()) {
    return absl::Status(exe.status().code(),
                        absl::StrCat(Which(package), ": ", exe.status().message()));
  }
  return exe;
}

}  // namespace coil::cpu

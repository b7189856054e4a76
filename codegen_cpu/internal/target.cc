// Target machines and the host compatibility check.
#include "codegen_cpu/internal/target.h"

#include <algorithm>
#include <mutex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/Host.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Triple.h"

namespace coil::codegen_cpu_internal {
namespace {

llvm::StringMap<bool> HostFeatures() {
  llvm::StringMap<bool> f;
  llvm::sys::getHostCPUFeatures(f);
  return f;
}

}  // namespace

void InitializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(const std::string& cpu,
                                                                        int opt_level) {
  InitializeNativeTarget();
  const std::string triple = llvm::sys::getProcessTriple();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (target == nullptr) {
    return absl::InternalError(absl::StrCat("no LLVM target for ", triple, ": ", error));
  }
  const bool host = cpu.empty() || cpu == "native";
  std::string cpu_name = host ? llvm::sys::getHostCPUName().str() : cpu;
  std::string features;
  if (host) {
    std::vector<std::string> parts;
    for (const auto& f : HostFeatures()) {
      parts.push_back(absl::StrCat(f.second ? "+" : "-", f.first().str()));
    }
    std::sort(parts.begin(), parts.end());
    features = absl::StrJoin(parts, ",");
  } else {
    // Validate the name: an unknown CPU would silently fall back to generic code.
    std::unique_ptr<llvm::MCSubtargetInfo> sti(
        target->createMCSubtargetInfo(triple, cpu_name, ""));
    if (sti == nullptr || !sti->isCPUStringValid(cpu_name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown CPU '", cpu, "' for target ", triple));
    }
  }
  llvm::TargetOptions options;
  llvm::CodeGenOpt::Level level = opt_level <= 0   ? llvm::CodeGenOpt::None
                                  : opt_level == 1 ? llvm::CodeGenOpt::Less
                                  : opt_level == 2 ? llvm::CodeGenOpt::Default
                                                   : llvm::CodeGenOpt::Aggressive;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, cpu_name, features, options, llvm::Reloc::PIC_, std::nullopt, level));
  if (tm == nullptr) return absl::InternalError("could not create the LLVM TargetMachine");
  return tm;
}

std::string IsaFeatures(const llvm::TargetMachine& tm) {
  const llvm::MCSubtargetInfo* sti = tm.getMCSubtargetInfo();
  llvm::StringMap<bool> known = HostFeatures();
  std::vector<std::string> on;
  for (const auto& f : known) {
    // Only features the host detection knows (instruction sets, not tuning flags).
    const std::string plus = absl::StrCat("+", f.first().str());
    if (sti->checkFeatures(plus)) on.push_back(plus);
  }
  std::sort(on.begin(), on.end());
  return absl::StrJoin(on, ",");
}

bool HasAvx512(const llvm::TargetMachine& tm) {
  return tm.getTargetTriple().isX86() && tm.getMCSubtargetInfo()->checkFeatures("+avx512f");
}

int VectorRegisterBits(const llvm::TargetMachine& tm) {
  // TargetTransformInfo is per function: ask about an empty one in a scratch module.
  llvm::LLVMContext c;
  llvm::Module m("coil_probe", c);
  m.setDataLayout(tm.createDataLayout());
  llvm::Function* f = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(c), false), llvm::Function::ExternalLinkage,
      "coil_probe", m);
  if (HasAvx512(tm)) f->addFnAttr(kPreferVectorWidthAttr, "512");
  return static_cast<int>(
      tm.getTargetTransformInfo(*f)
          .getRegisterBitWidth(llvm::TargetTransformInfo::RGK_FixedWidthVector)
          .getFixedValue());
}

CpuDescription HostCpu() {
  return CpuDescription{llvm::sys::getProcessTriple(), llvm::sys::getHostCPUName().str(),
                        HostFeatures()};
}

absl::Status CheckRunsOn(const std::string& triple, const std::string& features,
                         const CpuDescription& cpu) {
  llvm::Triple want(triple), have(cpu.triple);
  const std::string arch = want.getArchName().str();
  if (want.getArch() != have.getArch() || want.getOS() != have.getOS()) {
    return absl::FailedPreconditionError(
        absl::StrCat("object code for ", triple.empty() ? "an unknown target" : triple,
                     ", this machine is ", have.str()));
  }
  std::vector<std::string> missing;
  for (absl::string_view f : absl::StrSplit(features, ',', absl::SkipEmpty())) {
    if (f[0] != '+') continue;
    std::string name(f.substr(1));
    // A feature this LLVM's host detection does not know cannot be shown present: missing.
    auto it = cpu.features.find(name);
    if (it == cpu.features.end() || !it->second) missing.push_back(name);
  }
  if (!missing.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("object code for ", arch, " with ", absl::StrJoin(missing, ", "),
                     ", this CPU (", cpu.name, ") lacks ", absl::StrJoin(missing, ", ")));
  }
  return absl::OkStatus();
}

absl::Status CheckRunsOnHost(const std::string& triple, const std::string& features) {
  return CheckRunsOn(triple, features, HostCpu());
}

}  // namespace coil::codegen_cpu_internal

// GenerateCpu: emit every kernel, verify, run the O3 pipeline, print per-function IR, emit the
// object file.
#include "codegen_cpu/codegen_cpu.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "codegen_cpu/internal/aot_hook.h"
#include "codegen_cpu/internal/kernel_emitter.h"
#include "codegen_cpu/internal/target.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

namespace coil {
namespace {

using codegen_cpu_internal::CreateTargetMachine;
using codegen_cpu_internal::EmitKernel;
using codegen_cpu_internal::IsaFeatures;
using codegen_cpu_internal::MakeScheduleInfo;
using codegen_cpu_internal::ScheduleInfo;

bool HasFunction(const proto::Kernel& k) {
  if (k.kind() == proto::Kernel::EXTERN) return k.loops_size() > 0;
  return k.kind() == proto::Kernel::POINTWISE || k.kind() == proto::Kernel::REDUCTION;
}

// The new pass manager's default per-module pipeline for `level`, with `tm`'s cost model.
void Optimize(llvm::Module& m, llvm::TargetMachine& tm, int level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = level >= 2;
  pto.SLPVectorization = level >= 2;
  // No loop unrolling: full unrolling of short constant-trip inner loops (a row of 40) would
  // run before the loop vectorizer and leave straight-line code that SLP cannot vectorize
  // (buffers may alias); the vectorizer interleaves on its own.
  pto.LoopUnrolling = false;
  llvm::PassBuilder pb(&tm, pto);
  // glibc's libmvec (exp, sin, cos, pow in 4/8 lanes, <= 4 ulp) lets the loop vectorizer
  // vectorize loops calling them; the JIT loads libmvec.so.1 to resolve them.
  llvm::TargetLibraryInfoImpl tlii(tm.getTargetTriple());
  tlii.addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86,
                                          tm.getTargetTriple());
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel ol = level <= 0   ? llvm::OptimizationLevel::O0
                               : level == 1 ? llvm::OptimizationLevel::O1
                               : level == 2 ? llvm::OptimizationLevel::O2
                                            : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager mpm = level <= 0 ? pb.buildO0DefaultPipeline(ol)
                                           : pb.buildPerModuleDefaultPipeline(ol);
  mpm.run(m, mam);
}

absl::StatusOr<std::string> EmitObject(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CGFT_ObjectFile)) {
    return absl::InternalError("the LLVM target cannot emit object files");
  }
  pm.run(m);
  return std::string(buffer.data(), buffer.size());
}

}  // namespace

std::string CpuKernelSymbol(const proto::Kernel& kernel) {
  std::string s = absl::StrCat("coil_k", kernel.id(), "_");
  for (char ch : kernel.name()) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '_';
    s.push_back(ok ? ch : '_');
  }
  return s;
}

absl::StatusOr<proto::KernelModule> GenerateCpu(const proto::Schedule& schedule,
                                                const CpuCodegenOptions& options) {
  return codegen_cpu_internal::GenerateCpuWithPreEmit(schedule, options, nullptr);
}

absl::StatusOr<proto::KernelModule> codegen_cpu_internal::GenerateCpuWithPreEmit(
    const proto::Schedule& schedule, const CpuCodegenOptions& options,
    const PreEmitHook& pre_emit) {
  absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> tm =
      CreateTargetMachine(options.cpu, options.opt_level);
  if (!tm.ok()) return tm.status();
  llvm::LLVMContext context;
  auto module = std::make_unique<llvm::Module>(
      schedule.graph().name().empty() ? "coil" : schedule.graph().name(), context);
  module->setTargetTriple((*tm)->getTargetTriple().str());
  module->setDataLayout((*tm)->createDataLayout());

  const ScheduleInfo info = MakeScheduleInfo(schedule);
  proto::KernelModule out;
  for (const proto::Kernel& k : schedule.kernels()) {
    if (!HasFunction(k)) continue;
    const std::string symbol = CpuKernelSymbol(k);
    if (module->getFunction(symbol) != nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("kernel ", k.id(), " '", k.name(),
                                                     "': duplicate kernel id"));
    }
    absl::StatusOr<llvm::Function*> f = EmitKernel(k, symbol, info, *module);
    if (!f.ok()) return f.status();
    proto::CompiledKernel* ck = out.add_kernels();
    ck->set_kernel_id(k.id());
    ck->set_name(k.name());
    ck->set_symbol(symbol);
  }
  std::string errors;
  llvm::raw_string_ostream es(errors);
  if (llvm::verifyModule(*module, &es)) {
    return absl::InternalError(absl::StrCat("codegen_cpu produced invalid LLVM IR: ", es.str()));
  }
  Optimize(*module, **tm, options.opt_level);
  for (proto::CompiledKernel& ck : *out.mutable_kernels()) {
    std::string ir;
    llvm::raw_string_ostream os(ir);
    module->getFunction(ck.symbol())->print(os);
    ck.set_source(os.str());
  }
  if (pre_emit) {
    if (absl::Status s = pre_emit(*module, **tm, out); !s.ok()) return s;
  }
  absl::StatusOr<std::string> object = EmitObject(*module, **tm);
  if (!object.ok()) return object.status();

  out.set_backend("cpu");
  *out.mutable_schedule() = schedule;
  out.set_object_code(*std::move(object));
  out.set_target_triple((*tm)->getTargetTriple().str());
  out.set_cpu((*tm)->getTargetCPU().str());
  out.set_cpu_features(IsaFeatures(**tm));
  out.set_compiler_version(absl::StrCat("LLVM ", LLVM_VERSION_STRING));
  out.set_options(absl::StrCat("opt_level=", options.opt_level, " cpu=", options.cpu));
  return out;
}

}  // namespace coil

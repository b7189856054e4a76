// GenerateCpu: every kernel emitted, verified, optimized (O3) and printed in a module of its own,
// on several threads; the modules linked into one; the object file emitted.
#include "codegen_cpu/codegen_cpu.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "codegen_cpu/internal/aot_hook.h"
#include "codegen_cpu/internal/compiler_remarks.h"
#include "codegen_cpu/internal/kernel_emitter.h"
#include "codegen_cpu/internal/loop_shapes.h"
#include "codegen_cpu/internal/streaming_stores.h"
#include "codegen_cpu/internal/target.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

namespace coil {
namespace {

using codegen_cpu_internal::CollectCompilerRemarks;
using codegen_cpu_internal::CreateTargetMachine;
using codegen_cpu_internal::EmitKernel;
using codegen_cpu_internal::IsaFeatures;
using codegen_cpu_internal::MakeScheduleInfo;
using codegen_cpu_internal::MarkStreamingStores;
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


// One kernel's function, compiled alone: emitted into a module of its own (its own
// LLVMContext, so kernels compile on several threads at once), verified, optimized, printed,
// and kept as bitcode until it is linked into the module that becomes the object file.
struct Unit {
  const proto::Kernel* kernel = nullptr;
  std::string symbol;
  std::string ir;       // the optimized function's LLVM IR text
  std::string bitcode;  // the optimized module
  std::vector<std::string> remarks;  // what LLVM said while optimizing it (compiler_remarks.h)
  absl::Status status;
  double ir_seconds = 0;        // emitting and verifying its LLVM IR
  double optimize_seconds = 0;  // optimizing, marking streaming stores, IR text and bitcode
};

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

absl::Status CompileUnit(Unit& u, const ScheduleInfo& info, llvm::TargetMachine& tm,
                         int opt_level) {
  const auto t0 = std::chrono::steady_clock::now();
  llvm::LLVMContext context;
  std::vector<std::string> llvm_errors;
  CollectCompilerRemarks(context, &u.remarks, &llvm_errors);
  llvm::Module module(u.symbol, context);
  module.setTargetTriple(tm.getTargetTriple().str());
  module.setDataLayout(tm.createDataLayout());
  absl::StatusOr<llvm::Function*> f = EmitKernel(*u.kernel, u.symbol, info, module);
  if (!f.ok()) return f.status();
  std::string errors;
  llvm::raw_string_ostream es(errors);
  if (llvm::verifyModule(module, &es)) {
    return absl::InternalError(absl::StrCat("codegen_cpu produced invalid LLVM IR for kernel ",
                                            u.kernel->id(), " '", u.kernel->name(),
                                            "': ", es.str()));
  }
  u.ir_seconds = SecondsSince(t0);
  const auto t1 = std::chrono::steady_clock::now();
  Optimize(module, tm, opt_level);
  if (!llvm_errors.empty()) {
    return absl::InternalError(absl::StrCat("LLVM failed to optimize kernel ", u.kernel->id(),
                                            " '", u.kernel->name(), "': ", llvm_errors.front()));
  }
  MarkStreamingStores(module);
  llvm::raw_string_ostream os(u.ir);
  module.getFunction(u.symbol)->print(os);
  os.flush();
  llvm::raw_string_ostream bs(u.bitcode);
  llvm::WriteBitcodeToFile(module, bs);
  bs.flush();
  u.optimize_seconds = SecondsSince(t1);
  return absl::OkStatus();
}

// Roughly how long a kernel takes to optimize: its expression count.
int64_t Cost(const proto::Kernel& k) {
  int64_t n = 1;
  for (const proto::Loop& l : k.loops()) n += l.body_size();
  return n;
}

// Compiles every unit, biggest first, on options.compile_threads threads (this one included),
// each with its own TargetMachine. Errors land in Unit::status.
void CompileUnits(std::vector<Unit>& units, const ScheduleInfo& info,
                  const CpuCodegenOptions& options) {
  std::vector<size_t> order(units.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return Cost(*units[a].kernel) > Cost(*units[b].kernel);
  });
  std::atomic<size_t> next{0};
  auto work = [&] {
    absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> tm =
        CreateTargetMachine(options.cpu, options.opt_level);
    for (size_t i = next++; i < order.size(); i = next++) {
      Unit& u = units[order[i]];
      u.status = tm.ok() ? CompileUnit(u, info, **tm, options.opt_level) : tm.status();
    }
  };
  int threads = options.compile_threads > 0
                    ? options.compile_threads
                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::max(1, std::min(threads, static_cast<int>(units.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

// Parses a unit's bitcode into `module`'s context and links it in.
absl::Status LinkUnit(const Unit& u, llvm::Module& module) {
  llvm::Expected<std::unique_ptr<llvm::Module>> m = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(u.bitcode, u.symbol), module.getContext());
  if (!m) {
    return absl::InternalError(absl::StrCat("cannot read back the bitcode of ", u.symbol, ": ",
                                            llvm::toString(m.takeError())));
  }
  if (llvm::Linker::linkModules(module, std::move(*m))) {
    return absl::InternalError(absl::StrCat("cannot link the module of ", u.symbol));
  }
  return absl::OkStatus();
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

absl::StatusOr<proto::KernelModule> GenerateCpu(proto::Schedule schedule,
                                                const CpuCodegenOptions& options,
                                                std::vector<CodegenPart>* parts) {
  return codegen_cpu_internal::GenerateCpuWithPreEmit(std::move(schedule), options, nullptr,
                                                      parts);
}

absl::StatusOr<proto::KernelModule> codegen_cpu_internal::GenerateCpuWithPreEmit(
    proto::Schedule schedule, const CpuCodegenOptions& options, const PreEmitHook& pre_emit,
    std::vector<CodegenPart>* parts) {
  auto clock = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> tm =
      CreateTargetMachine(options.cpu, options.opt_level);
  if (!tm.ok()) return tm.status();
  // How the runtime splits each kernel's outer dims is this backend's choice, recorded in the
  // module's copy of the schedule (a value that came with `schedule` is replaced).
  AssignParallelDims(schedule);
  const ScheduleInfo info = MakeScheduleInfo(schedule, **tm);

  // Every kernel is emitted, verified and optimized in a module of its own, on
  // options.compile_threads threads; the optimized modules are then linked into one, which
  // becomes the object file (one ELF object: the JIT and AOT packages load exactly one).
  std::vector<Unit> units;
  absl::flat_hash_set<std::string> symbols;
  for (const proto::Kernel& k : schedule.kernels()) {
    if (!HasFunction(k)) continue;
    Unit u;
    u.kernel = &k;
    u.symbol = CpuKernelSymbol(k);
    if (!symbols.insert(u.symbol).second) {
      return absl::InvalidArgumentError(absl::StrCat("kernel ", k.id(), " '", k.name(),
                                                     "': duplicate kernel id"));
    }
    units.push_back(std::move(u));
  }
  const double setup_seconds = SecondsSince(clock);
  clock = std::chrono::steady_clock::now();
  CompileUnits(units, info, options);
  for (const Unit& u : units) {
    if (!u.status.ok()) return u.status;
  }
  if (parts != nullptr) {
    // The kernels' wall time, divided in proportion to the summed thread times of each step.
    const double wall = SecondsSince(clock);
    double ir = 0, optimize = 0;
    for (const Unit& u : units) {
      ir += u.ir_seconds;
      optimize += u.optimize_seconds;
    }
    const double ir_share = ir + optimize > 0 ? ir / (ir + optimize) : 0;
    parts->push_back({"llvm_ir", setup_seconds + wall * ir_share});
    parts->push_back({"optimize", wall * (1 - ir_share)});
  }
  clock = std::chrono::steady_clock::now();

  llvm::LLVMContext context;
  // Remarks from the linked module's code generation are rare and name no kernel: dropped.
  std::vector<std::string> link_remarks, link_errors;
  CollectCompilerRemarks(context, &link_remarks, &link_errors);
  auto module = std::make_unique<llvm::Module>(
      schedule.graph().name().empty() ? "coil" : schedule.graph().name(), context);
  module->setTargetTriple((*tm)->getTargetTriple().str());
  module->setDataLayout((*tm)->createDataLayout());
  proto::KernelModule out;
  for (Unit& u : units) {
    if (absl::Status s = LinkUnit(u, *module); !s.ok()) return s;
    proto::CompiledKernel* ck = out.add_kernels();
    ck->set_kernel_id(u.kernel->id());
    ck->set_name(u.kernel->name());
    ck->set_symbol(u.symbol);
    ck->set_source(std::move(u.ir));
    for (std::string& r : u.remarks) ck->add_compiler_remarks(std::move(r));
  }
  if (pre_emit) {
    if (absl::Status s = pre_emit(*module, **tm, out); !s.ok()) return s;
  }
  if (parts != nullptr) parts->push_back({"link", SecondsSince(clock)});
  clock = std::chrono::steady_clock::now();
  absl::StatusOr<std::string> object = EmitObject(*module, **tm);
  if (!object.ok()) return object.status();
  if (parts != nullptr) parts->push_back({"machine_code", SecondsSince(clock)});
  if (!link_errors.empty()) {
    return absl::InternalError(absl::StrCat("LLVM failed to emit the object: ", link_errors.front()));
  }

  out.set_backend("cpu");
  *out.mutable_schedule() = std::move(schedule);
  out.set_object_code(*std::move(object));
  out.set_target_triple((*tm)->getTargetTriple().str());
  out.set_cpu((*tm)->getTargetCPU().str());
  out.set_cpu_features(IsaFeatures(**tm));
  out.set_compiler_version(absl::StrCat("LLVM ", LLVM_VERSION_STRING));
  out.set_options(absl::StrCat("opt_level=", options.opt_level, " cpu=", options.cpu));
  return out;
}

}  // namespace coil

// CpuProgram: GenerateCpu + CpuJitModule + CpuExecutable.
#include "codegen_cpu/cpu_program.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Host.h"

namespace coil {
namespace {

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The host CPU as code generation sees it: "<cpu name>;+a,+b,..." (enabled ISA features).
}  // namespace

const std::string& HostCpuDescription() {
  static const std::string* description = [] {
    llvm::StringMap<bool> features;
    llvm::sys::getHostCPUFeatures(features);
    std::vector<std::string> on;
    for (const auto& f : features) {
      if (f.second) on.push_back(absl::StrCat("+", f.first().str()));
    }
    std::sort(on.begin(), on.end());
    return new std::string(absl::StrCat(llvm::sys::getHostCPUName().str(), ";",
                                        absl::StrJoin(on, ",")));
  }();
  return *description;
}

namespace {

// Cache trouble is never fatal: one warning per process, then silence.
void WarnOnce(const std::string& message) {
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true)) {
    std::fprintf(stderr, "coil: compile cache: %s (continuing without it)\n", message.c_str());
  }
}

}  // namespace

inductor::Capabilities CpuCapabilities() {
  inductor::Capabilities c;
  c.extern_epilogues = {"aten.bmm", "aten.convolution", "aten.mm"};
  return c;
}

absl::StatusOr<std::unique_ptr<CpuProgram>> CpuProgram::Compile(
    const proto::Schedule& schedule, const CpuCodegenOptions& codegen,
    const cpu::CpuExecutableOptions& runtime) {
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<proto::KernelModule> module = GenerateCpu(schedule, codegen);
  if (!module.ok()) return module.status();
  double codegen_seconds = Since(start);
  absl::StatusOr<std::unique_ptr<CpuProgram>> program = Load(*std::move(module), runtime);
  if (program.ok()) (*program)->codegen_seconds_ = codegen_seconds;
  return program;
}

std::string CpuProgram::CacheKeyFor(const proto::Schedule& schedule,
                                    const CpuCodegenOptions& codegen) {
  const std::string options =
      absl::StrCat("opt_level=", codegen.opt_level, " cpu=", codegen.cpu, " compiler=LLVM ",
                   LLVM_VERSION_STRING, " triple=", llvm::sys::getProcessTriple());
  return CacheKey(schedule, options, HostCpuDescription());
}

absl::StatusOr<std::unique_ptr<CpuProgram>> CpuProgram::CompileCached(
    const proto::Schedule& schedule, CompileCache& cache, const CpuCodegenOptions& codegen,
    const cpu::CpuExecutableOptions& runtime) {
  if (!cache.enabled()) return Compile(schedule, codegen, runtime);
  const std::string key = CacheKeyFor(schedule, codegen);
  absl::StatusOr<std::optional<proto::KernelModule>> cached = cache.Lookup(key);
  if (!cached.ok()) {
    WarnOnce(std::string(cached.status().message()));
  } else if (cached->has_value()) {
    // The entry was stored under this full 128-bit key (the cache checks it), which covers
    // the schedule's bytes: no second serialization to compare.
    proto::KernelModule& module = **cached;
    if (module.backend() == "cpu") {
      absl::StatusOr<std::unique_ptr<CpuProgram>> program = Load(std::move(module), runtime);
      if (program.ok()) {
        (*program)->cache_hit_ = true;
        return program;
      }
      std::fprintf(stderr, "coil: cached module %s does not load (%s); rebuilding\n",
                   cache.EntryPath(key).c_str(),
                   std::string(program.status().message()).c_str());
    } else {
      std::fprintf(stderr, "coil: cached module %s is not a CPU module; rebuilding\n",
                   cache.EntryPath(key).c_str());
    }
  }
  absl::StatusOr<std::unique_ptr<CpuProgram>> program = Compile(schedule, codegen, runtime);
  if (!program.ok()) return program;
  if (absl::Status stored = cache.Store(key, (*program)->module()); !stored.ok()) {
    WarnOnce(std::string(stored.message()));
  }
  return program;
}

absl::StatusOr<std::unique_ptr<CpuProgram>> CpuProgram::Load(
    proto::KernelModule module, const cpu::CpuExecutableOptions& runtime) {
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<CpuProgram> p(new CpuProgram());
  // The program owns the module first: the executable borrows its schedule's constants.
  p->module_ = std::move(module);
  absl::StatusOr<std::unique_ptr<CpuJitModule>> jit = CpuJitModule::Load(p->module_);
  if (!jit.ok()) return jit.status();
  cpu::KernelTable table;
  for (const proto::Kernel& k : p->module_.schedule().kernels()) {
    if (CoilKernelFn fn = (*jit)->Find(k.id()); fn != nullptr) table[k.id()] = fn;
  }
  absl::StatusOr<std::unique_ptr<cpu::CpuExecutable>> executable =
      cpu::CpuExecutable::CreateBorrowing(&p->module_.schedule(), std::move(table), runtime);
  if (!executable.ok()) return executable.status();
  p->jit_ = *std::move(jit);
  p->executable_ = *std::move(executable);
  p->load_seconds_ = Since(start);
  return p;
}

}  // namespace coil

// NVRTC through dlopen (see nvrtc.h).
#include "codegen_cuda/nvrtc.h"

#include <dlfcn.h>

#include <type_traits>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace coil::codegen_cuda {
namespace {

using Program = void*;
// nvrtcResult is an int enum; 0 is NVRTC_SUCCESS.
struct Api {
  int (*Version)(int*, int*);
  const char* (*GetErrorString)(int);
  int (*CreateProgram)(Program*, const char*, const char*, int, const char* const*,
                       const char* const*);
  int (*DestroyProgram)(Program*);
  int (*CompileProgram)(Program, int, const char* const*);
  int (*GetProgramLogSize)(Program, size_t*);
  int (*GetProgramLog)(Program, char*);
  int (*GetCUBINSize)(Program, size_t*);
  int (*GetCUBIN)(Program, char*);
  int (*GetPTXSize)(Program, size_t*);
  int (*GetPTX)(Program, char*);
};

absl::StatusOr<const Api*> LoadApi() {
  static absl::StatusOr<const Api*>* api = [] {
    const char* kNames[] = {"libnvrtc.so.13", "libnvrtc.so",
                            "/usr/local/cuda/lib64/libnvrtc.so.13",
                            "/usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.13"};
    void* h = nullptr;
    std::string tried;
    for (const char* n : kNames) {
      h = dlopen(n, RTLD_NOW | RTLD_LOCAL);
      if (h != nullptr) break;
      absl::StrAppend(&tried, tried.empty() ? "" : ", ", n);
    }
    if (h == nullptr) {
      return new absl::StatusOr<const Api*>(absl::FailedPreconditionError(absl::StrCat(
          "NVRTC not found (tried ", tried, "): install the CUDA 13 toolkit's libnvrtc")));
    }
    auto* a = new Api;
    std::string missing;
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
      if (fn == nullptr) absl::StrAppend(&missing, " ", name);
    };
    sym(a->Version, "nvrtcVersion");
    sym(a->GetErrorString, "nvrtcGetErrorString");
    sym(a->CreateProgram, "nvrtcCreateProgram");
    sym(a->DestroyProgram, "nvrtcDestroyProgram");
    sym(a->CompileProgram, "nvrtcCompileProgram");
    sym(a->GetProgramLogSize, "nvrtcGetProgramLogSize");
    sym(a->GetProgramLog, "nvrtcGetProgramLog");
    sym(a->GetCUBINSize, "nvrtcGetCUBINSize");
    sym(a->GetCUBIN, "nvrtcGetCUBIN");
    sym(a->GetPTXSize, "nvrtcGetPTXSize");
    sym(a->GetPTX, "nvrtcGetPTX");
    if (!missing.empty()) {
      return new absl::StatusOr<const Api*>(absl::FailedPreconditionError(
          absl::StrCat("libnvrtc lacks the functions", missing)));
    }
    return new absl::StatusOr<const Api*>(a);
  }();
  return *api;
}

// "Compiling entry function 'coil_k3' for 'sm_90'" ... "Used 18 registers, used 1 barriers,
// 1024 bytes smem".
void ParsePtxasLog(const std::string& log, NvrtcResult& r) {
  std::string fn;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    size_t p = line.find("entry function '");
    if (p != absl::string_view::npos) {
      line.remove_prefix(p + 16);
      fn = std::string(line.substr(0, line.find('\'')));
      continue;
    }
    p = line.find("Used ");
    if (p == absl::string_view::npos || fn.empty()) continue;
    absl::string_view rest = line.substr(p + 5);
    int regs = 0;
    if (absl::SimpleAtoi(rest.substr(0, rest.find(' ')), &regs)) r.registers[fn] = regs;
    size_t s = rest.find(" bytes smem");
    if (s != absl::string_view::npos) {
      size_t b = rest.rfind(' ', s - 1);
      int smem = 0;
      if (b != absl::string_view::npos && absl::SimpleAtoi(rest.substr(b + 1, s - b - 1), &smem)) {
        r.shared_bytes[fn] = smem;
      }
    }
  }
}

}  // namespace

absl::StatusOr<NvrtcResult> CompileCudaSource(const std::string& source, const std::string& name,
                                              const std::string& arch) {
  absl::StatusOr<const Api*> loaded = LoadApi();
  if (!loaded.ok()) return loaded.status();
  const Api& api = **loaded;
  Program prog = nullptr;
  int rc = api.CreateProgram(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr);
  if (rc != 0) {
    return absl::InternalError(absl::StrCat("nvrtcCreateProgram: ", api.GetErrorString(rc)));
  }
  const std::string arch_opt = absl::StrCat("--gpu-architecture=", arch);
  std::vector<const char*> opts = {arch_opt.c_str(), "-std=c++17", "--ptxas-options=-v"};
  rc = api.CompileProgram(prog, static_cast<int>(opts.size()), opts.data());
  NvrtcResult r;
  size_t n = 0;
  if (api.GetProgramLogSize(prog, &n) == 0 && n > 1) {
    r.log.resize(n);
    api.GetProgramLog(prog, r.log.data());
    r.log.resize(n - 1);
  }
  if (rc != 0) {
    api.DestroyProgram(&prog);
    return absl::InternalError(absl::StrCat("NVRTC failed to compile ", name, " for ", arch,
                                            " (", api.GetErrorString(rc), "):\n", r.log));
  }
  if (api.GetCUBINSize(prog, &n) == 0 && n > 0) {
    r.cubin.resize(n);
    api.GetCUBIN(prog, r.cubin.data());
  }
  if (api.GetPTXSize(prog, &n) == 0 && n > 0) {
    r.ptx.resize(n);
    api.GetPTX(prog, r.ptx.data());
    if (!r.ptx.empty() && r.ptx.back() == '\0') r.ptx.pop_back();
  }
  api.DestroyProgram(&prog);
  if (r.cubin.empty()) {
    return absl::InternalError(absl::StrCat("NVRTC produced no CUBIN for ", name, " (", arch, ")"));
  }
  ParsePtxasLog(r.log, r);
  return r;
}

absl::StatusOr<std::string> NvrtcVersion() {
  absl::StatusOr<const Api*> loaded = LoadApi();
  if (!loaded.ok()) return loaded.status();
  int major = 0, minor = 0;
  (*loaded)->Version(&major, &minor);
  return absl::StrCat(major, ".", minor);
}

}  // namespace coil::codegen_cuda

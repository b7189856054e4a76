// cuBLASLt through dlopen (see cublaslt.h).
#include "runtime/cuda/cublaslt.h"

#include <dlfcn.h>

#include <type_traits>

#include "absl/strings/str_cat.h"

namespace coil::cuda {

absl::StatusOr<const CublasLt*> CublasLt::Load(const std::vector<std::string>& names) {
  void* h = nullptr;
  std::string tried, path;
  for (const std::string& n : names) {
    h = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h != nullptr) {
      path = n;
      break;
    }
    const char* why = dlerror();
    absl::StrAppend(&tried, tried.empty() ? "" : "; ", why != nullptr ? why : n);
  }
  if (h == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("no cuBLASLt (", tried, ")"));
  }
  auto* lt = new CublasLt;
  std::string missing;
  auto sym = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
    if (fn == nullptr) absl::StrAppend(&missing, " ", name);
  };
  sym(lt->Create, "cublasLtCreate");
  sym(lt->Destroy, "cublasLtDestroy");
  sym(lt->GetVersion, "cublasLtGetVersion");
  sym(lt->Matmul, "cublasLtMatmul");
  sym(lt->MatmulDescCreate, "cublasLtMatmulDescCreate");
  sym(lt->MatmulDescDestroy, "cublasLtMatmulDescDestroy");
  sym(lt->MatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute");
  sym(lt->MatrixLayoutCreate, "cublasLtMatrixLayoutCreate");
  sym(lt->MatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy");
  sym(lt->MatrixLayoutSetAttribute, "cublasLtMatrixLayoutSetAttribute");
  sym(lt->MatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate");
  sym(lt->MatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy");
  sym(lt->MatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute");
  sym(lt->MatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic");
  sym(lt->GetStatusName, "cublasLtGetStatusName");
  if (!missing.empty()) {
    delete lt;
    dlclose(h);
    return absl::FailedPreconditionError(
        absl::StrCat("no cuBLASLt (", path, " lacks", missing, ")"));
  }
  lt->version = lt->GetVersion();
  lt->path = path;
  return lt;
}

absl::StatusOr<const CublasLt*> CublasLt::Get() {
  static const absl::StatusOr<const CublasLt*>* lt = new absl::StatusOr<const CublasLt*>(
      Load({"libcublasLt.so.13", "libcublasLt.so", "/usr/local/cuda/lib64/libcublasLt.so.13",
            "/usr/local/cuda/targets/x86_64-linux/lib/libcublasLt.so.13"}));
  return *lt;
}

absl::Status CublasLt::Check(lt::Status s, const char* call, const std::string& where) const {
  if (s == lt::kSuccess) return absl::OkStatus();
  const char* name = GetStatusName != nullptr ? GetStatusName(s) : nullptr;
  return absl::InternalError(absl::StrCat(call, " for ", where, ": ",
                                          name != nullptr ? name : absl::StrCat("status ", s)));
}

}  // namespace coil::cuda

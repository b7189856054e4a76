// cuDNN through dlopen (see cudnn.h).
#include "runtime/cuda/cudnn.h"

#include <dlfcn.h>

#include <type_traits>

#include "absl/strings/str_cat.h"

namespace coil::cuda {

absl::StatusOr<const Cudnn*> Cudnn::Load(const std::vector<std::string>& names) {
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
  if (h == nullptr) return absl::FailedPreconditionError(absl::StrCat("no cuDNN (", tried, ")"));
  auto* dnn = new Cudnn;
  std::string missing;
  auto sym = [&](auto& fn, const char* name, bool required = true) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
    if (fn == nullptr && required) absl::StrAppend(&missing, " ", name);
  };
  sym(dnn->GetVersion, "cudnnGetVersion");
  sym(dnn->Create, "cudnnCreate");
  sym(dnn->Destroy, "cudnnDestroy");
  sym(dnn->SetStream, "cudnnSetStream");
  sym(dnn->GetErrorString, "cudnnGetErrorString");
  sym(dnn->GetLastErrorString, "cudnnGetLastErrorString", /*required=*/false);
  sym(dnn->BackendCreateDescriptor, "cudnnBackendCreateDescriptor");
  sym(dnn->BackendDestroyDescriptor, "cudnnBackendDestroyDescriptor");
  sym(dnn->BackendFinalize, "cudnnBackendFinalize");
  sym(dnn->BackendSetAttribute, "cudnnBackendSetAttribute");
  sym(dnn->BackendGetAttribute, "cudnnBackendGetAttribute");
  sym(dnn->BackendExecute, "cudnnBackendExecute");
  std::string bad;
  if (!missing.empty()) {
    bad = absl::StrCat(path, " lacks", missing);
  } else if (dnn->version = dnn->GetVersion(); dnn->version / 10000 != 9) {
    bad = absl::StrCat(path, " is cuDNN ", dnn->version, ", not 9.x");
  }
  if (!bad.empty()) {
    delete dnn;
    dlclose(h);
    return absl::FailedPreconditionError(absl::StrCat("no cuDNN (", bad, ")"));
  }
  dnn->path = path;
  return dnn;
}

absl::StatusOr<const Cudnn*> Cudnn::Get() {
  static const absl::StatusOr<const Cudnn*>* dnn = new absl::StatusOr<const Cudnn*>(
      Load({"libcudnn.so.9", "libcudnn.so", "/usr/local/cuda/lib64/libcudnn.so.9",
            "/usr/local/cuda/targets/x86_64-linux/lib/libcudnn.so.9",
            "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"}));
  return *dnn;
}

absl::Status Cudnn::Check(dnn::Status s, const char* call, const std::string& where) const {
  if (s == dnn::kSuccess) return absl::OkStatus();
  const char* name = GetErrorString != nullptr ? GetErrorString(s) : nullptr;
  std::string detail;
  if (GetLastErrorString != nullptr) {
    char buf[512] = {0};
    GetLastErrorString(buf, sizeof(buf) - 1);
    if (buf[0] != 0) detail = absl::StrCat(" (", buf, ")");
  }
  return absl::InternalError(absl::StrCat(call, " for ", where, ": ",
                                          name != nullptr ? name : absl::StrCat("status ", s),
                                          detail));
}

}  // namespace coil::cuda

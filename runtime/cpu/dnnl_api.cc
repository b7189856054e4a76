// Dnnl(): dlopen of libdnnl.so.2 under OMP_WAIT_POLICY=passive (unless set), the function
// table, one engine.
#include "runtime/cpu/dnnl_api.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <type_traits>

#include "absl/strings/str_cat.h"

namespace coil::cpu {
namespace {

constexpr char kLibrary[] = "libdnnl.so.2";

// Pools on OpenMP's team unless COIL_CPU_POOL says otherwise. Off: on the 16-core Xeon the team
// was 22-63% slower at 16 threads (docs/benchmarks.md, "Tried: one thread team").
constexpr bool kOpenMpTeamByDefault = false;
// libgomp's spins before a waiting team thread sleeps, in team mode (about 100 per us by
// libgomp's estimate; a `pause` takes longer on recent Intel cores).
constexpr char kTeamSpinCount[] = "3000";

void Unavailable(const std::string& why) {
  std::fprintf(stderr,
               "coil: oneDNN is not available (%s); aten.mm, aten.bmm and aten.convolution run "
               "the reference kernels\n",
               why.c_str());
}

const DnnlApi* Load() {
  // libgomp reads the policy in its initializer, which runs inside dlopen. Setting it only
  // around dlopen keeps the program's environment (and its children's) as it was.
  const bool set_policy = std::getenv("OMP_WAIT_POLICY") == nullptr;
  // With one team the spinning threads are the only ones: a short spin keeps back-to-back
  // kernels from paying a futex wake-up each.
  const bool set_spin =
      set_policy && UseOpenMpTeam() && std::getenv("GOMP_SPINCOUNT") == nullptr;
  if (set_policy) setenv("OMP_WAIT_POLICY", "passive", 1);
  if (set_spin) setenv("GOMP_SPINCOUNT", kTeamSpinCount, 1);
  void* lib = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (set_policy) unsetenv("OMP_WAIT_POLICY");
  if (set_spin) unsetenv("GOMP_SPINCOUNT");
  if (lib == nullptr) {
    const char* error = dlerror();
    Unavailable(error != nullptr ? error : kLibrary);
    return nullptr;
  }
  auto api = std::make_unique<DnnlApi>();
  std::string missing;
  auto bind = [&](auto& fn, const char* name) {
    void* p = dlsym(lib, name);
    if (p == nullptr) absl::StrAppend(&missing, missing.empty() ? "" : ", ", name);
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
  bind(api->memory_desc_init_by_tag, "dnnl_memory_desc_init_by_tag");
  bind(api->memory_desc_init_by_strides, "dnnl_memory_desc_init_by_strides");
  bind(api->memory_desc_equal, "dnnl_memory_desc_equal");
  bind(api->memory_desc_get_size, "dnnl_memory_desc_get_size");
  bind(api->memory_create, "dnnl_memory_create");
  bind(api->memory_set_data_handle, "dnnl_memory_set_data_handle");
  bind(api->memory_destroy, "dnnl_memory_destroy");
  bind(api->dilated_convolution_forward_desc_init, "dnnl_dilated_convolution_forward_desc_init");
  bind(api->dilated_deconvolution_forward_desc_init,
       "dnnl_dilated_deconvolution_forward_desc_init");
  bind(api->dilated_convolution_backward_weights_desc_init,
       "dnnl_dilated_convolution_backward_weights_desc_init");
  bind(api->matmul_desc_init, "dnnl_matmul_desc_init");
  bind(api->primitive_desc_create, "dnnl_primitive_desc_create");
  bind(api->reorder_primitive_desc_create, "dnnl_reorder_primitive_desc_create");
  bind(api->primitive_desc_query, "dnnl_primitive_desc_query");
  bind(api->primitive_desc_query_md, "dnnl_primitive_desc_query_md");
  bind(api->primitive_desc_destroy, "dnnl_primitive_desc_destroy");
  bind(api->primitive_create, "dnnl_primitive_create");
  bind(api->primitive_execute, "dnnl_primitive_execute");
  bind(api->primitive_destroy, "dnnl_primitive_destroy");
  bind(api->stream_create, "dnnl_stream_create");
  bind(api->stream_wait, "dnnl_stream_wait");
  bind(api->stream_destroy, "dnnl_stream_destroy");
  bind(api->sgemm, "dnnl_sgemm");
  bind(api->primitive_attr_create, "dnnl_primitive_attr_create");
  bind(api->primitive_attr_destroy, "dnnl_primitive_attr_destroy");
  bind(api->primitive_attr_set_post_ops, "dnnl_primitive_attr_set_post_ops");
  bind(api->post_ops_create, "dnnl_post_ops_create");
  bind(api->post_ops_destroy, "dnnl_post_ops_destroy");
  bind(api->post_ops_append_eltwise, "dnnl_post_ops_append_eltwise");
  bind(api->post_ops_append_binary, "dnnl_post_ops_append_binary");
  bind(api->post_ops_append_sum, "dnnl_post_ops_append_sum");
  bind(api->omp_set_num_threads, "omp_set_num_threads");
  // Optional: without it the pools keep their own threads. dlsym on oneDNN's handle also
  // searches its dependencies, libgomp among them.
  api->gomp_parallel = reinterpret_cast<decltype(api->gomp_parallel)>(dlsym(lib, "GOMP_parallel"));
  decltype(&dnnl_engine_create) engine_create = nullptr;
  bind(engine_create, "dnnl_engine_create");
  if (!missing.empty()) {
    Unavailable(absl::StrCat(kLibrary, " lacks ", missing));
    return nullptr;
  }
  if (dnnl_status_t s = engine_create(&api->engine, dnnl_cpu, 0); s != dnnl_success) {
    Unavailable(absl::StrCat("no CPU engine: status ", s));
    return nullptr;
  }
  return api.release();  // lives as long as the process, as the library does
}

}  // namespace

const DnnlApi* Dnnl() {
  static const DnnlApi* api = Load();
  return api;
}

bool UseOpenMpTeam() {
  static const bool on = [] {
    const char* v = std::getenv("COIL_CPU_POOL");
    if (v == nullptr) return kOpenMpTeamByDefault;
    return std::string_view(v) == "omp" ? true
           : std::string_view(v) == "own" ? false
                                           : kOpenMpTeamByDefault;
  }();
  return on;
}

const ThreadTeam* OpenMpTeam() {
  static const ThreadTeam* team = []() -> const ThreadTeam* {
    if (!UseOpenMpTeam()) return nullptr;
    const DnnlApi* api = Dnnl();
    if (api == nullptr || api->gomp_parallel == nullptr) return nullptr;
    static ThreadTeam t;
    t.run = [](void (*fn)(void*), void* arg, unsigned threads) {
      Dnnl()->gomp_parallel(fn, arg, threads, 0);
    };
    return &t;
  }();
  return team;
}

absl::Status DnnlOk(dnnl_status_t status, absl::string_view what) {
  if (status == dnnl_success) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("oneDNN ", what, " failed (status ", status, ")"));
}

}  // namespace coil::cpu

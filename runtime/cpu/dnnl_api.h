// oneDNN for the CPU runtime's externs, loaded at run time (dlopen of libdnnl.so.2) instead of
// linked, so that the runtime decides how OpenMP behaves before OpenMP starts.
//
// Debian's oneDNN runs on libgomp, which reads OMP_WAIT_POLICY once, when it is loaded. Its
// default keeps idle threads spinning for ~3 ms after every parallel region and at every
// barrier; on a small or busy machine a barrier then waits for a descheduled thread while its
// partner spins, and the spinning threads hold the cores the runtime's own pool needs next:
// resnet18 at batch 1 on a busy 2-core machine ran 12-20x slower than with the passive policy
// (docs/cpu_backend.md, "Runtime performance"). A library linked into the program is loaded
// before main, too early to change that; so Dnnl() sets OMP_WAIT_POLICY=passive (unless the
// environment sets a policy: OMP_WAIT_POLICY=active keeps spinning, for dedicated machines)
// just while it loads oneDNN and with it libgomp, then restores the environment. If the
// program had loaded libgomp already, its settings stay as they were.
//
// One thread team (OpenMpTeam): with COIL_CPU_POOL=omp the executable's ThreadPool runs the
// generated kernels on libgomp's team too (GOMP_parallel), so that oneDNN and the generated
// code share one set of threads instead of two pools taking turns on the same cores; the
// team's idle threads then spin briefly before sleeping (GOMP_SPINCOUNT, set around dlopen
// like the policy, unless the environment sets it) as the runtime's own pool does.
//
// Without libdnnl.so.2 on the machine Dnnl() is nullptr (said once on stderr) and the externs
// run their reference kernels: slower, still correct.
//
//   const DnnlApi* dnnl = Dnnl();
//   if (dnnl == nullptr) return false;  // let the reference kernel run
//   dnnl->sgemm('N', 'N', m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
#ifndef COIL_RUNTIME_CPU_DNNL_API_H_
#define COIL_RUNTIME_CPU_DNNL_API_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "oneapi/dnnl/dnnl.h"
#include "runtime/cpu/thread_pool.h"

namespace coil::cpu {

// The oneDNN C API functions the externs use (declarations from oneapi/dnnl/dnnl.h), the
// OpenMP thread-count setter, and one CPU engine.
struct DnnlApi {
  decltype(&dnnl_memory_desc_init_by_tag) memory_desc_init_by_tag;
  decltype(&dnnl_memory_desc_init_by_strides) memory_desc_init_by_strides;
  decltype(&dnnl_memory_desc_equal) memory_desc_equal;
  decltype(&dnnl_memory_desc_get_size) memory_desc_get_size;
  decltype(&dnnl_memory_create) memory_create;
  decltype(&dnnl_memory_set_data_handle) memory_set_data_handle;
  decltype(&dnnl_memory_destroy) memory_destroy;
  decltype(&dnnl_dilated_convolution_forward_desc_init) dilated_convolution_forward_desc_init;
  decltype(&dnnl_dilated_deconvolution_forward_desc_init) dilated_deconvolution_forward_desc_init;
  decltype(&dnnl_dilated_convolution_backward_weights_desc_init)
      dilated_convolution_backward_weights_desc_init;
  decltype(&dnnl_matmul_desc_init) matmul_desc_init;
  decltype(&dnnl_primitive_desc_create) primitive_desc_create;
  decltype(&dnnl_reorder_primitive_desc_create) reorder_primitive_desc_create;
  decltype(&dnnl_primitive_desc_query) primitive_desc_query;
  decltype(&dnnl_primitive_desc_query_md) primitive_desc_query_md;
  decltype(&dnnl_primitive_desc_destroy) primitive_desc_destroy;
  decltype(&dnnl_primitive_create) primitive_create;
  decltype(&dnnl_primitive_execute) primitive_execute;
  decltype(&dnnl_primitive_destroy) primitive_destroy;
  decltype(&dnnl_stream_create) stream_create;
  decltype(&dnnl_stream_wait) stream_wait;
  decltype(&dnnl_stream_destroy) stream_destroy;
  decltype(&dnnl_sgemm) sgemm;
  // Post-ops (a convolution's fused epilogue: internal/dnnl_conv.cc).
  decltype(&dnnl_primitive_attr_create) primitive_attr_create;
  decltype(&dnnl_primitive_attr_destroy) primitive_attr_destroy;
  decltype(&dnnl_primitive_attr_set_post_ops) primitive_attr_set_post_ops;
  decltype(&dnnl_post_ops_create) post_ops_create;
  decltype(&dnnl_post_ops_destroy) post_ops_destroy;
  decltype(&dnnl_post_ops_append_eltwise) post_ops_append_eltwise;
  decltype(&dnnl_post_ops_append_binary) post_ops_append_binary;
  decltype(&dnnl_post_ops_append_sum) post_ops_append_sum;
  void (*omp_set_num_threads)(int);
  // libgomp's entry for `#pragma omp parallel` (nullptr when not found: no team).
  void (*gomp_parallel)(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags);
  dnnl_engine_t engine;
};

// The loaded library, or nullptr when it cannot be loaded. Thread-safe; loads once.
const DnnlApi* Dnnl();

// Whether the executables' pools run on OpenMP's team: COIL_CPU_POOL=omp (or =own: the pool's
// own threads; unset: the default) read once per process.
bool UseOpenMpTeam();

// libgomp's team as a ThreadTeam (loads oneDNN), or nullptr when !UseOpenMpTeam() or oneDNN
// (with its libgomp) is not available.
const ThreadTeam* OpenMpTeam();

// OK, or an InternalError naming `what` and the oneDNN status.
absl::Status DnnlOk(dnnl_status_t status, absl::string_view what);

// Owning handles (destroyed through Dnnl(), which must have been non-null to make them).
struct DnnlDeleter {
  void operator()(dnnl_memory_t m) const { Dnnl()->memory_destroy(m); }
  void operator()(dnnl_primitive_desc_t pd) const { Dnnl()->primitive_desc_destroy(pd); }
  void operator()(dnnl_primitive_t p) const { Dnnl()->primitive_destroy(p); }
  void operator()(dnnl_stream_t s) const { Dnnl()->stream_destroy(s); }
  void operator()(dnnl_primitive_attr_t a) const { Dnnl()->primitive_attr_destroy(a); }
  void operator()(dnnl_post_ops_t p) const { Dnnl()->post_ops_destroy(p); }
};
using DnnlMemory = std::unique_ptr<dnnl_memory, DnnlDeleter>;
using DnnlPrimitiveDesc = std::unique_ptr<dnnl_primitive_desc, DnnlDeleter>;
using DnnlPrimitive = std::unique_ptr<dnnl_primitive, DnnlDeleter>;
using DnnlStream = std::unique_ptr<dnnl_stream, DnnlDeleter>;
using DnnlAttr = std::unique_ptr<dnnl_primitive_attr, DnnlDeleter>;
using DnnlPostOps = std::unique_ptr<dnnl_post_ops, DnnlDeleter>;

}  // namespace coil::cpu

#endif  // COIL_RUNTIME_CPU_DNNL_API_H_

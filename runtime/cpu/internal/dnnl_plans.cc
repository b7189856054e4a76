// The shared oneDNN plumbing of dnnl_plans.h: checks, streams, scratch, C API helpers.
#include "runtime/cpu/internal/dnnl_plans.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_join.h"
#include "ir/dtype.h"

namespace coil::cpu::dnnl_internal {
namespace {

// ThreadsForCall's defaults (ParallelBounds), why: a call under 8 MFLOP runs on the calling
// thread alone, because waking OpenMP's sleeping workers and putting them back to sleep costs
// about as much as such a call (docs/cpu_backend.md, "Runtime performance"), unless it is
// memory-bound and large: then one thread per 256 KB of f32 inputs and output, when that is
// at least kMinByteThreads threads. The most a split gains is the threads it gets; on 2 or 3
// threads the measured wake-ups ate it (the 2-core CI machine keeps one thread), while on 16 a
// 1 MB call (mobilenet_v3_large's 14x14 depthwise convolutions) gets 4 threads and a 4 MB one
// all 16. At ~10 GB/s per core a thread's 256 KB is ~25 us of reading, several wake-ups.
constexpr int kMinByteThreads = 4;

// The bound from `variable` when it holds a number >= 0, else `fallback` (read once).
double Bound(const char* variable, double fallback) {
  const char* text = std::getenv(variable);
  if (text == nullptr) return fallback;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  return end != text && *end == '\0' && v >= 0 ? v : fallback;
}

}  // namespace

int ThreadsFor(const ExternArgs& a, double flops) {
  static const ParallelBounds bounds = [] {
    ParallelBounds b;
    b.min_flops = Bound("COIL_DNNL_MIN_PARALLEL_FLOPS", b.min_flops);
    b.min_bytes = Bound("COIL_DNNL_MIN_PARALLEL_BYTES", b.min_bytes);
    b.bytes_per_thread = Bound("COIL_DNNL_BYTES_PER_THREAD", b.bytes_per_thread);
    b.flops_per_thread = Bound("COIL_DNNL_FLOPS_PER_THREAD", b.flops_per_thread);
    return b;
  }();
  double bytes = static_cast<double>(ElementSize(a.output.dtype)) * a.output.numel();
  for (const ExternTensor& t : a.inputs) {
    bytes += static_cast<double>(ElementSize(t.dtype)) * t.numel();
  }
  return ThreadsForCall(flops, bytes, a.num_threads, bounds);
}

int ThreadsForCall(double flops, double bytes, int threads, const ParallelBounds& b) {
  const int all = std::max(1, threads);
  // An explicit byte bound (COIL_DNNL_MIN_PARALLEL_BYTES): at or above it, all threads.
  if (b.min_bytes > 0 && bytes >= b.min_bytes) return all;
  if (flops < b.min_flops) {
    if (b.bytes_per_thread <= 0) return 1;
    const double by_bytes = std::min(bytes / b.bytes_per_thread, static_cast<double>(all));
    return by_bytes >= kMinByteThreads ? static_cast<int>(by_bytes) : 1;
  }
  if (b.flops_per_thread <= 0) return all;
  return static_cast<int>(
      std::clamp(flops / b.flops_per_thread, 1.0, static_cast<double>(all)));
}

const DnnlApi& Api() { return *Dnnl(); }

void Check(dnnl_status_t status, const char* what) {
  if (status != dnnl_success) throw DnnlFailure{absl::StrCat(what, " (status ", status, ")")};
}

dnnl_memory_desc_t QueryMd(const_dnnl_primitive_desc_t pd, dnnl_query_t what) {
  const dnnl_memory_desc_t* m = Api().primitive_desc_query_md(pd, what, 0);
  if (m == nullptr) throw DnnlFailure{"primitive_desc_query_md"};
  return *m;
}

bool ExpandSpatial(const AttrMap& attrs, const char* name, size_t d, int64_t fallback,
                   std::vector<int64_t>& out) {
  if (attrs.find(name) == attrs.end()) {
    out.assign(d, fallback);
    return true;
  }
  absl::StatusOr<IntList> v = GetInts(attrs, name);
  if (!v.ok() || (v->size() != 1 && v->size() != d)) return false;
  out = v->size() == 1 ? std::vector<int64_t>(d, (*v)[0]) : *v;
  return true;
}

dnnl_stream_t Stream() {
  thread_local DnnlStream stream = [] {
    dnnl_stream_t s = nullptr;
    Check(Api().stream_create(&s, Api().engine, dnnl_stream_default_flags), "stream_create");
    return DnnlStream(s);
  }();
  return stream.get();
}

void* Scratch(ScratchSlot slot, size_t bytes) {
  struct Buffer {
    std::unique_ptr<char, decltype(&std::free)> data{nullptr, &std::free};
    size_t size = 0;
  };
  thread_local Buffer buffers[kNumScratch];
  Buffer& b = buffers[slot];
  if (b.size < bytes) {
    const size_t size = (bytes + 4095) / 4096 * 4096;
    b.data.reset(static_cast<char*>(std::aligned_alloc(64, size)));
    if (b.data == nullptr) throw std::bad_alloc();
    b.size = size;
  }
  return b.data.get();
}

dnnl_memory_desc_t Desc(absl::Span<const int64_t> dims, dnnl_format_tag_t tag,
                        dnnl_data_type_t type) {
  dnnl_memory_desc_t md;
  dnnl_dims_t d;
  std::copy(dims.begin(), dims.end(), d);
  Check(Api().memory_desc_init_by_tag(&md, static_cast<int>(dims.size()), d, type, tag),
        "memory_desc_init_by_tag");
  return md;
}

bool Same(const dnnl_memory_desc_t& a, const dnnl_memory_desc_t& b) {
  return Api().memory_desc_equal(&a, &b) != 0;
}

DnnlMemory Memory(const dnnl_memory_desc_t& md, void* handle) {
  dnnl_memory_t m = nullptr;
  Check(Api().memory_create(&m, &md, Api().engine, handle), "memory_create");
  return DnnlMemory(m);
}

void SetData(dnnl_memory_t m, void* data) {
  Check(Api().memory_set_data_handle(m, data), "memory_set_data_handle");
}

DnnlPrimitive Primitive(const void* op_desc) {
  dnnl_primitive_desc_t pd = nullptr;
  Check(Api().primitive_desc_create(&pd, op_desc, nullptr, Api().engine, nullptr),
        "primitive_desc_create");
  DnnlPrimitiveDesc owned(pd);
  dnnl_primitive_t p = nullptr;
  Check(Api().primitive_create(&p, pd), "primitive_create");
  return DnnlPrimitive(p);
}

// The primitive's layout for one of its arguments.
dnnl_memory_desc_t QueryDesc(const void* op_desc, dnnl_query_t what, DnnlPrimitive& out) {
  dnnl_primitive_desc_t pd = nullptr;
  Check(Api().primitive_desc_create(&pd, op_desc, nullptr, Api().engine, nullptr),
        "primitive_desc_create");
  DnnlPrimitiveDesc owned(pd);
  if (out == nullptr) {
    dnnl_primitive_t p = nullptr;
    Check(Api().primitive_create(&p, pd), "primitive_create");
    out.reset(p);
  }
  const dnnl_memory_desc_t* md = Api().primitive_desc_query_md(pd, what, 0);
  if (md == nullptr) throw DnnlFailure{"primitive_desc_query_md"};
  return *md;
}

std::string ImplName(const_dnnl_primitive_desc_t pd) {
  const char* name = nullptr;
  if (Api().primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name) != dnnl_success ||
      name == nullptr) {
    return "?";
  }
  return name;
}

DnnlPrimitiveDesc FastPrimitiveDesc(const void* op_desc, const_dnnl_primitive_attr_t attr,
                                    std::string* impl) {
  dnnl_primitive_desc_t raw = nullptr;
  if (Api().primitive_desc_create(&raw, op_desc, attr, Api().engine, nullptr) != dnnl_success) {
    return nullptr;
  }
  DnnlPrimitiveDesc pd(raw);
  std::string name = ImplName(pd.get());
  // oneDNN's reference kernels (plain loops; for bf16 the only ones before AVX-512) are no
  // faster than coil's own reference kernel.
  if (name.rfind("ref", 0) == 0) return nullptr;
  if (impl != nullptr) *impl = std::move(name);
  return pd;
}

DnnlPrimitive Reorder(const dnnl_memory_desc_t& from, const dnnl_memory_desc_t& to) {
  dnnl_primitive_desc_t pd = nullptr;
  Check(Api().reorder_primitive_desc_create(&pd, &from, Api().engine, &to, Api().engine,
                                            nullptr),
        "reorder_primitive_desc_create");
  DnnlPrimitiveDesc owned(pd);
  dnnl_primitive_t p = nullptr;
  Check(Api().primitive_create(&p, pd), "primitive_create (reorder)");
  return DnnlPrimitive(p);
}

void Execute(dnnl_primitive_t p, absl::Span<const dnnl_exec_arg_t> args) {
  Check(Api().primitive_execute(p, Stream(), static_cast<int>(args.size()), args.data()),
        "primitive_execute");
}

void RunReorder(dnnl_primitive_t reorder, dnnl_memory_t from, dnnl_memory_t to) {
  Execute(reorder, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
}

dnnl_memory_t Weights(Operand& w, const ExternTensor& t, WeightCache* cache) {
  if (w.blocked != nullptr && t.constant && cache != nullptr) return cache->Get(w, t.data);
  w.Bind(t.data, kScratchWeights);
  w.Fill();
  return w.inner();
}

void AppendKey(PlanKey& key, absl::Span<const int64_t> values) {
  key.push_back(static_cast<int64_t>(values.size()));
  key.insert(key.end(), values.begin(), values.end());
}

bool AllF32(const ExternArgs& a) {
  if (a.output.dtype != proto::FLOAT32) return false;
  for (const ExternTensor& t : a.inputs) {
    if (t.dtype != proto::FLOAT32) return false;
  }
  return true;
}

dnnl_data_type_t DnnlType(DType t) {
  switch (t) {
    case proto::FLOAT32:
      return dnnl_f32;
    case proto::BFLOAT16:
      return dnnl_bf16;
    default:
      return dnnl_data_type_undef;
  }
}

bool GetPrimitiveTypes(const ExternArgs& a, PrimitiveTypes& types) {
  if (a.inputs.size() < 2) return false;
  types.src = DnnlType(a.inputs[0].dtype);
  types.dst = DnnlType(a.output.dtype);
  types.bias = a.inputs.size() > 2 ? DnnlType(a.inputs[2].dtype) : types.src;
  if (DnnlType(a.inputs[1].dtype) != types.src) return false;
  if (types.src == dnnl_f32) return types.dst == dnnl_f32 && types.bias == dnnl_f32;
  return types.src == dnnl_bf16 && (types.dst == dnnl_f32 || types.dst == dnnl_bf16) &&
         (types.bias == dnnl_f32 || types.bias == dnnl_bf16);
}

std::string Shape(const ExternTensor& t) {
  return absl::StrCat("[", absl::StrJoin(t.shape, ", "), "]");
}

absl::Status ShapeError(absl::string_view op, const ExternArgs& a) {
  std::vector<std::string> ins;
  for (const ExternTensor& t : a.inputs) ins.push_back(Shape(t));
  return absl::InvalidArgumentError(absl::StrCat(op, " of ", absl::StrJoin(ins, ", "),
                                                 " cannot produce ", Shape(a.output)));
}

}  // namespace coil::cpu::dnnl_internal

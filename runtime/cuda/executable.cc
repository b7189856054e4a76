// The CUDA executable (see executable.h).
#include "runtime/cuda/executable.h"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/attribute.h"
#include "ir/channels_last.h"
#include "ir/graph.h"
#include "ir/op_registry.h"
#include "runtime/cpu/externs.h"
#include "runtime/cuda/attention_runner.h"
#include "runtime/cuda/conv_runner.h"
#include "runtime/cuda/cublaslt.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cuda_graphs.h"
#include "runtime/cuda/gemm_runner.h"
#include "runtime/cuda/kernel_error.h"
#include "runtime/cuda/size_eval.h"
#include "runtime/cuda/kernel_abi.h"
#include "runtime/interpreter.h"

namespace coil::cuda {
namespace {

std::string KernelWhere(const proto::Kernel& k) {
  return absl::StrCat("kernel ", k.id(), " '", k.name(), "'");
}

// COIL_CUDA_TIMING_PROBE (diagnostics of the device time, read once): "warm" runs the kernels
// once before the timed pass; "gateMS" (e.g. gate2) holds the stream on a host function
// sleeping MS ms while the timed kernels are enqueued.
struct TimingProbe {
  bool warm = false;
  int gate_ms = 0;
};
const TimingProbe& ReadTimingProbe() {
  static const TimingProbe probe = [] {
    TimingProbe p;
    const char* e = std::getenv("COIL_CUDA_TIMING_PROBE");
    const std::string v = e == nullptr ? "" : e;
    p.warm = v == "warm";
    if (v.rfind("gate", 0) == 0) p.gate_ms = std::max(1, std::atoi(v.c_str() + 4));
    return p;
  }();
  return probe;
}
void SleepHostFunc(void* ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(*static_cast<int*>(ms)));
}

}  // namespace

struct CudaExecutable::Impl {
  const CudaDriver* d = nullptr;
  CudaExecutableOptions options;
  proto::KernelModule module;
  Graph graph;
  CUdevice device = 0;
  CUcontext ctx = nullptr;
  CUstream stream = nullptr;
  CUmodule mod = nullptr;           // image 0: object_code / ptx (and the conv bias kernels)
  std::vector<CUmodule> more_mods;  // KernelModule.images
  std::string device_name;
  int max_id = 0;
  absl::flat_hash_map<int, const proto::Buffer*> buffers;
  absl::flat_hash_map<int, CUfunction> functions;  // kernel id -> entry
  absl::flat_hash_map<int, bool> rows;             // kernel id -> a block (or warp) per row
  // kernel id -> rows per block (kernel_abi.h's CudaGridFor) and block dimensions.
  absl::flat_hash_map<int, int> rows_per_block;
  absl::flat_hash_map<int, std::pair<unsigned, unsigned>> block_dims;
  absl::flat_hash_map<int, int> items_per_thread;  // pointwise kernels: from the symbol
  absl::flat_hash_map<int, AttrMap> extern_attrs;  // kernel id -> normalized attrs
  absl::flat_hash_set<int> written;                // buffer ids some kernel writes
  absl::flat_hash_map<int, CUdeviceptr> constants;
  CUdeviceptr arena = 0;
  int64_t arena_capacity = 0;
  CUdeviceptr table = 0;  // buffer pointers, then symbols, then the kernels' slot tables
  // Kernel id -> where its slot table starts in `table` (entries), and the buffer of each slot
  // (CompiledKernel.buffers; kernel_abi.h). Kernels without slots get the buffer pointers.
  absl::flat_hash_map<int, int> slot_offset;
  absl::flat_hash_map<int, std::vector<int>> slot_buffers;
  CUdeviceptr error = 0;
  std::vector<uint64_t> host_table;
  std::unique_ptr<GemmRunner> gemms;  // aten.mm / aten.bmm through cuBLASLt (gemm_runner.h)
  CudaExecutable::GemmCounts gemm_counts;
  std::unique_ptr<ConvRunner> convs;  // aten.convolution through cuDNN (conv_runner.h)
  CudaExecutable::GemmCounts conv_counts;
  std::unique_ptr<AttentionRunner> attention;  // fused attention kernels (attention_runner.h)
  CudaExecutable::GemmCounts attention_counts;  // fused: on the GPU; host: on the host
  // Input and output buffers, kept from run to run: buffer id -> (address, capacity).
  absl::flat_hash_map<int, std::pair<CUdeviceptr, int64_t>> io;
  // Pinned host buffers of large inputs (options.pinned_inputs): buffer id -> (address, capacity).
  absl::flat_hash_map<int, std::pair<void*, int64_t>> pinned;
  bool pinned_refused = false;
  // Timing events: before the input copies, before the first kernel, after the last one; with
  // profiling, one before every kernel (and one after the last) and the sums per kernel.
  CUevent ev_begin = nullptr, ev_kernels = nullptr, ev_end = nullptr;
  std::vector<CUevent> ev_kernel;
  CudaExecutable::RunTimes last_times;
  bool profiling = false;
  int timed_passes = 1;  // SetTimedPasses
  std::unique_ptr<CudaGraphs> graphs;  // options.cuda_graphs
  std::vector<CudaExecutable::KernelTime> profile;  // in schedule order

  ~Impl() {
    if (d == nullptr) return;
    if (ctx != nullptr) d->CtxSetCurrent(ctx);
    for (CUevent e : {ev_begin, ev_kernels, ev_end}) {
      if (e != nullptr) d->EventDestroy(e);
    }
    for (CUevent e : ev_kernel) d->EventDestroy(e);
    graphs.reset();
    for (auto& [id, p] : io) d->MemFree(p.first);
    for (auto& [id, p] : pinned) d->MemFreeHost(p.first);
    gemms.reset();
    convs.reset();
    for (auto& [id, p] : constants) d->MemFree(p);
    if (arena != 0) d->MemFree(arena);
    if (table != 0) d->MemFree(table);
    if (error != 0) d->MemFree(error);
    if (mod != nullptr) d->ModuleUnload(mod);
    for (CUmodule m : more_mods) d->ModuleUnload(m);
    if (stream != nullptr) d->StreamDestroy(stream);
    if (ctx != nullptr) d->DevicePrimaryCtxRelease(device);
  }

  absl::Status Check(CUresult r, const char* call, const std::string& where) const {
    return d->Check(r, call, where);
  }

  absl::StatusOr<CUdeviceptr> Alloc(size_t bytes, const std::string& where) {
    CUdeviceptr p = 0;
    if (absl::Status s = Check(d->MemAlloc(&p, std::max<size_t>(bytes, 1)), "cuMemAlloc", where);
        !s.ok()) {
      return s;
    }
    return p;
  }

  absl::Status Setup();
  // The device buffer of INPUT/OUTPUT buffer `id`, at least `bytes` large (kept between runs).
  absl::StatusOr<CUdeviceptr> IoBuffer(int id, int64_t bytes, const std::string& where);
  // Copies input buffer `id`'s `bytes` from `src` to `dst` through its pinned buffer (chunks
  // copied on the host, each then sent asynchronously); false when there is none to use.
  absl::StatusOr<bool> PinnedCopyIn(int id, CUdeviceptr dst, const char* src, int64_t bytes, const std::string& where);
  // Event a - event b in ms (both recorded and complete).
  double Elapsed(CUevent a, CUevent b) const {
    float ms = 0;
    return d->EventElapsedTime(&ms, a, b) == 0 ? ms : 0.0;
  }
  absl::StatusOr<std::vector<HostTensor>> Run(absl::Span<const HostTensor> inputs);
  absl::Status KernelError(const CoilCudaError& e) const { return KernelErrorStatus(module.schedule(), e); }
};

absl::Status CudaExecutable::Impl::Setup() {
  const proto::Schedule& s = module.schedule();
  absl::StatusOr<Graph> g = Graph::FromProto(s.graph());
  if (!g.ok()) return absl::InvalidArgumentError(absl::StrCat("schedule graph: ", g.status().message()));
  graph = *std::move(g);
  if (absl::Status st = Check(d->DeviceGet(&device, options.device), "cuDeviceGet", "the GPU"); !st.ok()) return st;
  char name[256] = {0};
  d->DeviceGetName(name, sizeof(name) - 1, device);
  int major = 0, minor = 0;
  d->DeviceGetAttribute(&major, kAttrComputeCapabilityMajor, device);
  d->DeviceGetAttribute(&minor, kAttrComputeCapabilityMinor, device);
  device_name = absl::StrCat(name, " (sm_", major, minor, ")");
  if (absl::Status st = Check(d->DevicePrimaryCtxRetain(&ctx, device), "cuDevicePrimaryCtxRetain", device_name); !st.ok()) return st;
  if (absl::Status st = Check(d->CtxSetCurrent(ctx), "cuCtxSetCurrent", device_name); !st.ok()) return st;
  if (absl::Status st = Check(d->StreamCreate(&stream, 0), "cuStreamCreate", device_name); !st.ok()) return st;
  for (CUevent* e : {&ev_begin, &ev_kernels, &ev_end}) {
    if (absl::Status st = Check(d->EventCreate(e, 0), "cuEventCreate", device_name); !st.ok()) return st;
  }
  // The CUBIN runs on its own architecture; elsewhere the driver JIT-compiles the PTX.
  const bool native = absl::StrCat("sm_", major, minor) == module.cpu();
  const std::string& image = native || module.ptx().empty() ? module.object_code() : module.ptx();
  if (absl::Status st = Check(d->ModuleLoadData(&mod, image.c_str()), "cuModuleLoadData",
                              absl::StrCat("the module (", module.cpu(), ") on ", device_name));
      !st.ok()) {
    return st;
  }
  for (int i = 0; i < module.images_size(); ++i) {
    const proto::ObjectImage& im = module.images(i);
    const std::string& code = native || im.ptx().empty() ? im.object_code() : im.ptx();
    CUmodule m = nullptr;
    if (absl::Status st = Check(d->ModuleLoadData(&m, code.c_str()), "cuModuleLoadData",
                                absl::StrCat("image ", i + 1, " of the module (", module.cpu(), ") on ", device_name));
        !st.ok()) {
      return st;
    }
    more_mods.push_back(m);
  }
  for (const proto::Buffer& b : s.buffers()) {
    if (b.id() <= 0 || buffers.contains(b.id())) {
      return absl::InvalidArgumentError(absl::StrCat("buffer id ", b.id(), " is invalid or repeated"));
    }
    buffers[b.id()] = &b;
    max_id = std::max(max_id, b.id());
  }
  int slots = 0;
  for (const proto::CompiledKernel& ck : module.kernels()) {
    if (ck.image() < 0 || ck.image() > module.images_size()) {
      return absl::InvalidArgumentError(absl::StrCat("kernel ", ck.kernel_id(), " '", ck.name(), "': image ", ck.image(), " does not exist"));
    }
    for (int id : ck.buffers()) {
      if (!buffers.contains(id)) return absl::InvalidArgumentError(absl::StrCat("kernel ", ck.kernel_id(), " '", ck.name(), "': unknown buffer ", id));
    }
    if (ck.buffers_size() > 0) {
      slot_offset[ck.kernel_id()] = slots;
      slot_buffers[ck.kernel_id()].assign(ck.buffers().begin(), ck.buffers().end());
      slots += ck.buffers_size();
    }
    CUfunction f = nullptr;
    CUmodule in = ck.image() == 0 ? mod : more_mods[ck.image() - 1];
    if (absl::Status st = Check(d->ModuleGetFunction(&f, in, ck.symbol().c_str()),
                                "cuModuleGetFunction", absl::StrCat("kernel ", ck.kernel_id(), " '", ck.name(), "'"));
        !st.ok()) {
      return st;
    }
    functions[ck.kernel_id()] = f;
    items_per_thread[ck.kernel_id()] = CudaItemsPerThread(ck.symbol());
    // {256}, or {32, rows} for a warp per row (codegen_cuda decides; kernel_abi.h).
    const proto::LaunchConfig& l = ck.launch();
    if (l.block_size() == 2) {
      if (l.block(0) != 32 || l.block(1) < 1 || l.block(0) * l.block(1) != kCudaBlockThreads) {
        return absl::InvalidArgumentError(absl::StrCat("kernel ", ck.kernel_id(), " '", ck.name(), "': unexpected block ", l.ShortDebugString()));
      }
      block_dims[ck.kernel_id()] = {32u, static_cast<unsigned>(l.block(1))};
      rows_per_block[ck.kernel_id()] = static_cast<int>(l.block(1));
    } else {
      block_dims[ck.kernel_id()] = {static_cast<unsigned>(kCudaBlockThreads), 1u};
    }
  }
  for (const proto::Kernel& k : s.kernels()) {
    bool r = false;
    for (const proto::Loop& l : k.loops()) {
      r = r || l.ranges_size() > 0;
      for (const proto::Expr& e : l.body()) {
        if (e.kind() == proto::Expr::STORE) written.insert(e.buffer());
      }
    }
    rows[k.id()] = r;
    if (!rows_per_block.contains(k.id())) rows_per_block[k.id()] = r ? 1 : 0;
    const bool needs_code = k.kind() != proto::Kernel::EXTERN || k.loops_size() > 0;
    if (needs_code && !functions.contains(k.id())) {
      return absl::InvalidArgumentError(absl::StrCat(KernelWhere(k), " has no compiled function"));
    }
    if (k.kind() == proto::Kernel::EXTERN) {
      // A package's Schedule too: the externs here read and write whole buffers.
      if (k.extern_input_views_size() > 0 || k.extern_output_shape_size() > 0 || k.extern_output_view().dims_size() > 0) {
        return absl::InvalidArgumentError(absl::StrCat(KernelWhere(k), ": operand views, which the CUDA runtime does not read"));
      }
      written.insert(k.extern_output());
      const OpSchema* schema = OpRegistry::Global().Find(k.extern_op());
      if (schema == nullptr) return absl::InvalidArgumentError(absl::StrCat(KernelWhere(k), ": unknown extern op '", k.extern_op(), "'"));
      AttrMap attrs;
      for (const proto::NamedAttribute& a : k.extern_attrs()) {
        absl::StatusOr<Attribute> v = AttrFromProto(a.value());
        if (!v.ok()) return absl::InvalidArgumentError(absl::StrCat(KernelWhere(k), ": attribute '", a.name(), "': ", v.status().message()));
        attrs[a.name()] = *std::move(v);
      }
      // The channels-last layout attribute is no schema attribute (ir/channels_last.h): kept
      // for the host path's extern; cuDNN's plan reads it from the kernel (conv_plan.h).
      absl::StatusOr<ChannelsLast> cl = TakeChannelsLast(attrs);
      if (!cl.ok()) return absl::InvalidArgumentError(absl::StrCat(KernelWhere(k), ": ", cl.status().message()));
      if (absl::Status st = NormalizeAttrs(*schema, attrs); !st.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(KernelWhere(k), ": ", st.message()));
      }
      if (cl->any()) attrs[kChannelsLastAttr] = Attribute(IntList{cl->input, cl->output});
      extern_attrs[k.id()] = std::move(attrs);
    }
  }
  // Constants, once.
  for (const proto::Buffer& b : s.buffers()) {
    if (b.kind() != proto::Buffer::CONSTANT) continue;
    const Value* v = graph.FindValue(b.graph_value());
    if (v == nullptr || v->kind() != Value::Kind::kConstant) {
      return absl::InvalidArgumentError(absl::StrCat("buffer ", b.id(), " ('", b.name(), "'): graph value %", b.graph_value(), " is not a constant"));
    }
    absl::StatusOr<HostTensor> t = LoadConstant(*v, options.external_data_dir);
    if (!t.ok()) return t.status();
    const std::string bytes = t->Bytes();
    const std::string where = absl::StrCat("constant buffer ", b.id(), " ('", b.name(), "')");
    absl::StatusOr<CUdeviceptr> p = Alloc(bytes.size(), where);
    if (!p.ok()) return p.status();
    constants[b.id()] = *p;
    if (absl::Status st = Check(d->MemcpyHtoDAsync(*p, bytes.data(), bytes.size(), stream), "cuMemcpyHtoDAsync", where); !st.ok()) return st;
    if (absl::Status st = Check(d->StreamSynchronize(stream), "cuStreamSynchronize", where); !st.ok()) return st;
  }
  GemmRunnerOptions go;
  go.use_cublaslt = options.use_cublaslt;
  go.allow_tf32 = options.allow_tf32;
  go.workspace_bytes = options.gemm_workspace_bytes;
  go.forward = options.gemm_forward;
  go.transpose_b = options.gemm_transpose_b;
  go.pad_b = options.gemm_pad_b;
  go.pad_d = options.gemm_pad_d;
  go.tune = options.gemm_tune;
  absl::StatusOr<std::unique_ptr<GemmRunner>> gr =
      GemmRunner::Create(d, s, graph, options.external_data_dir, constants, mod, stream, go);
  if (!gr.ok()) return gr.status();
  gemms = *std::move(gr);
  absl::StatusOr<std::unique_ptr<ConvRunner>> cr = ConvRunner::Create(
      d, s, mod, stream, options.use_cudnn, options.allow_tf32, options.conv_workspace_bytes);
  if (!cr.ok()) return cr.status();
  convs = *std::move(cr);
  std::vector<CUmodule> images = {mod};
  images.insert(images.end(), more_mods.begin(), more_mods.end());
  absl::StatusOr<std::unique_ptr<AttentionRunner>> ar = AttentionRunner::Create(d, s, images, stream);
  if (!ar.ok()) return ar.status();
  attention = *std::move(ar);
  if (options.cuda_graphs) graphs = std::make_unique<CudaGraphs>(d, options.max_graphs);
  const int base = max_id + 1 + s.graph().symbols_size();
  for (auto& [id, off] : slot_offset) off += base;
  host_table.assign(base + slots, 0);
  absl::StatusOr<CUdeviceptr> t = Alloc(host_table.size() * 8, "the buffer table");
  if (!t.ok()) return t.status();
  table = *t;
  absl::StatusOr<CUdeviceptr> e = Alloc(sizeof(CoilCudaError), "the error record");
  if (!e.ok()) return e.status();
  error = *e;
  return absl::OkStatus();
}

absl::StatusOr<CUdeviceptr> CudaExecutable::Impl::IoBuffer(int id, int64_t bytes, const std::string& where) {
  auto it = io.find(id);
  if (it != io.end()) {
    if (it->second.second >= bytes) return it->second.first;
    d->MemFree(it->second.first);
    io.erase(it);
  }
  absl::StatusOr<CUdeviceptr> p = Alloc(bytes, where);
  if (!p.ok()) return p.status();
  io[id] = {*p, bytes};
  return *p;
}

absl::StatusOr<bool> CudaExecutable::Impl::PinnedCopyIn(int id, CUdeviceptr dst, const char* src, int64_t bytes, const std::string& where) {
  constexpr int64_t kMin = int64_t{1} << 20, kChunk = int64_t{8} << 20;
  if (!options.pinned_inputs || pinned_refused || bytes < kMin || d->MemHostAlloc == nullptr || d->MemFreeHost == nullptr) return false;
  auto it = pinned.find(id);
  if (it == pinned.end() || it->second.second < bytes) {
    if (it != pinned.end()) {
      d->MemFreeHost(it->second.first);
      pinned.erase(it);
    }
    void* h = nullptr;
    if (d->MemHostAlloc(&h, static_cast<size_t>(bytes), 0) != 0 || h == nullptr) {
      pinned_refused = true;  // pageable copies from now on
      return false;
    }
    it = pinned.emplace(id, std::make_pair(h, bytes)).first;
  }
  char* h = static_cast<char*>(it->second.first);
  for (int64_t off = 0; off < bytes; off += kChunk) {
    const int64_t n = std::min(kChunk, bytes - off);
    std::memcpy(h + off, src + off, static_cast<size_t>(n));
    if (absl::Status st = Check(d->MemcpyHtoDAsync(dst + off, h + off, static_cast<size_t>(n), stream), "cuMemcpyHtoDAsync", where); !st.ok()) return st;
  }
  return true;
}

absl::StatusOr<std::vector<HostTensor>> CudaExecutable::Impl::Run(absl::Span<const HostTensor> inputs) {
  const proto::Schedule& s = module.schedule();
  absl::StatusOr<Bindings> bound = BindSymbols(graph, inputs);
  if (!bound.ok()) return bound.status();
  const Bindings& b = *bound;
  if (absl::Status st = Check(d->CtxSetCurrent(ctx), "cuCtxSetCurrent", device_name); !st.ok()) return st;
  // A run that failed may have left copies from the pinned buffers in flight.
  if (!pinned.empty()) {
    if (absl::Status st = Check(d->StreamSynchronize(stream), "cuStreamSynchronize", "the pinned inputs"); !st.ok()) return st;
  }
  if (absl::Status st = Check(d->EventRecord(ev_begin, stream), "cuEventRecord", "the run"); !st.ok()) return st;
  // Shapes and places of every buffer.
  absl::flat_hash_map<int, std::vector<int64_t>> shapes;
  absl::flat_hash_map<int, int64_t> sizes;
  absl::flat_hash_map<int, int> input_of;
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    for (const proto::Buffer& pb : s.buffers()) {
      if (pb.kind() == proto::Buffer::INPUT && pb.graph_value() == graph.inputs()[i]->id()) input_of[pb.id()] = static_cast<int>(i);
    }
  }
  absl::StatusOr<int64_t> arena_bytes = Eval(s.memory_plan().arena_bytes(), b);
  if (!arena_bytes.ok()) return arena_bytes.status();
  if (*arena_bytes > arena_capacity) {
    if (arena != 0) d->MemFree(arena);
    arena = 0;
    arena_capacity = 0;
    absl::StatusOr<CUdeviceptr> a = Alloc(*arena_bytes, "the arena");
    if (!a.ok()) return a.status();
    arena = *a;
    arena_capacity = *arena_bytes;
  }
  std::deque<HostTensor> staged;  // contiguous copies of strided inputs, alive until the end
  for (const proto::Buffer& pb : s.buffers()) {
    const std::string where = absl::StrCat("buffer ", pb.id(), " ('", pb.name(), "')");
    std::vector<int64_t> shape;
    int64_t bytes = ElementSize(pb.dtype());
    for (const proto::SymExpr& dim : pb.shape()) {
      absl::StatusOr<int64_t> v = Eval(dim, b);
      if (!v.ok()) return absl::InvalidArgumentError(absl::StrCat(where, " shape: ", v.status().message()));
      if (*v < 0 || __builtin_mul_overflow(bytes, *v, &bytes)) return absl::InvalidArgumentError(absl::StrCat(where, " has a bad size"));
      shape.push_back(*v);
    }
    shapes[pb.id()] = shape;
    sizes[pb.id()] = bytes;
    CUdeviceptr p = 0;
    switch (pb.kind()) {
      case proto::Buffer::INPUT: {
        auto it = input_of.find(pb.id());
        if (it == input_of.end()) return absl::InvalidArgumentError(absl::StrCat(where, " is not a graph input"));
        const HostTensor* in = &inputs[it->second];
        if (in->dtype() != pb.dtype() || in->numel() * static_cast<int64_t>(ElementSize(pb.dtype())) != bytes) {
          return absl::InvalidArgumentError(absl::StrCat(where, ": input ", it->second, " is ", in->TypeString(), ", not ", bytes, " bytes of ", DTypeName(pb.dtype())));
        }
        if (!in->IsContiguous()) {
          staged.push_back(in->Contiguous());
          in = &staged.back();
        }
        absl::StatusOr<CUdeviceptr> a = IoBuffer(pb.id(), bytes, where);
        if (!a.ok()) return a.status();
        p = *a;
        // From pageable memory the call returns once the bytes are staged (one host pass, as
        // torch's .cuda()).
        absl::StatusOr<bool> pinned_copy = PinnedCopyIn(pb.id(), p, reinterpret_cast<const char*>(in->RawData()), bytes, where);
        if (!pinned_copy.ok()) return pinned_copy.status();
        if (bytes > 0 && !*pinned_copy) {
          if (absl::Status st = Check(d->MemcpyHtoDAsync(p, in->RawData(), bytes, stream), "cuMemcpyHtoDAsync", where); !st.ok()) return st;
        }
        break;
      }
      case proto::Buffer::CONSTANT:
        p = constants.at(pb.id());
        break;
      case proto::Buffer::INTERMEDIATE: {
        absl::StatusOr<int64_t> off = Eval(pb.arena_offset(), b);
        if (!off.ok()) return off.status();
        if (*off < 0 || *off + bytes > *arena_bytes) return absl::InvalidArgumentError(absl::StrCat(where, " does not fit in the arena"));
        p = arena + *off;
        break;
      }
      case proto::Buffer::OUTPUT: {
        absl::StatusOr<CUdeviceptr> a = IoBuffer(pb.id(), bytes, where);
        if (!a.ok()) return a.status();
        p = *a;
        break;
      }
      default:
        return absl::InvalidArgumentError(absl::StrCat(where, " has no kind"));
    }
    host_table[pb.id()] = p;
  }
  for (int i = 0; i < s.graph().symbols_size(); ++i) {
    auto it = b.find(s.graph().symbols(i).name());
    host_table[max_id + 1 + i] = it == b.end() ? 0 : static_cast<uint64_t>(it->second);
  }
  for (const auto& [id, off] : slot_offset) {
    const std::vector<int>& slots = slot_buffers.at(id);
    for (size_t i = 0; i < slots.size(); ++i) host_table[off + i] = host_table[slots[i]];
  }
  if (absl::Status st = Check(d->MemcpyHtoDAsync(table, host_table.data(), host_table.size() * 8, stream), "cuMemcpyHtoDAsync", "the buffer table"); !st.ok()) return st;
  if (absl::Status st = Check(d->MemsetD8Async(error, 0, sizeof(CoilCudaError), stream), "cuMemsetD8Async", "the error record"); !st.ok()) return st;
  if (profiling && ev_kernel.size() != static_cast<size_t>(s.kernels_size()) + 1) {
    while (ev_kernel.size() < static_cast<size_t>(s.kernels_size()) + 1) {
      CUevent e = nullptr;
      if (absl::Status st = Check(d->EventCreate(&e, 0), "cuEventCreate", "the profile"); !st.ok()) return st;
      ev_kernel.push_back(e);
    }
  }
  std::vector<std::string> kinds(profiling ? s.kernels_size() : 0);
  CUdeviceptr bufs_arg = table, syms_arg = table + 8 * (max_id + 1), err_arg = error;
  void* params[] = {&bufs_arg, &syms_arg, &err_arg};
  // While capturing a CUDA graph, an extern that must run on the host ends the capture;
  // host_reason names the last extern that ran (or would run) on the host.
  bool capturing = false;
  std::string host_reason;
  auto read_error = [&](CoilCudaError* e, const std::string& where) -> absl::Status {
    if (absl::Status st = Check(d->MemcpyDtoHAsync(e, error, sizeof(*e), stream), "cuMemcpyDtoHAsync", where); !st.ok()) return st;
    return Check(d->StreamSynchronize(stream), "cuStreamSynchronize", where);
  };
  auto run_kernels = [&]() -> absl::Status {
  gemms->BeginRun();
  for (int ki = 0; ki < s.kernels_size(); ++ki) {
    const proto::Kernel& k = s.kernels(ki);
    const std::string where = KernelWhere(k);
    if (profiling) {
      if (absl::Status st = Check(d->EventRecord(ev_kernel[ki], stream), "cuEventRecord", where); !st.ok()) return st;
      kinds[ki] = k.kind() != proto::Kernel::EXTERN ? (rows_per_block[k.id()] > 1 ? "warp rows" : rows[k.id()] ? "block rows" : "pointwise")
                                                   : absl::StrCat("extern ", k.extern_op());
    }
    bool epilogue_done = false;
    const bool conv = convs->planned(k.id());
    const bool attn = attention->planned(k.id());
    absl::StatusOr<std::optional<bool>> on_gpu =
        k.kind() != proto::Kernel::EXTERN ? std::optional<bool>()
        : conv                            ? convs->Run(k, shapes, sizes, host_table, where)
        : attn                            ? attention->Run(k, shapes, sizes, host_table, where)
                                          : gemms->Run(k, shapes, sizes, host_table, where);
    if (!on_gpu.ok()) return on_gpu.status();
    if (attn) {
      ++(on_gpu->has_value() ? attention_counts.fused : attention_counts.host);
      if (profiling) absl::StrAppend(&kinds[ki], on_gpu->has_value() ? " (fused)" : " (host)");
    } else if (gemms->planned(k.id()) || conv) {
      CudaExecutable::GemmCounts& n = conv ? conv_counts : gemm_counts;
      ++(!on_gpu->has_value() ? n.host : **on_gpu ? n.fused : n.plain);
      if (profiling) {
        const char* lib = conv ? "cuDNN" : "cuBLASLt";
        absl::StrAppend(&kinds[ki], !on_gpu->has_value() ? " (host)" : absl::StrCat(" (", lib, **on_gpu ? ", fused)" : ")"));
      }
    } else if (profiling && k.kind() == proto::Kernel::EXTERN) {
      absl::StrAppend(&kinds[ki], " (host)");
    }
    if (on_gpu->has_value()) {
      epilogue_done = **on_gpu;
    } else if (k.kind() == proto::Kernel::EXTERN && capturing) {
      host_reason = absl::StrCat(where, " (extern ", k.extern_op(), ") runs on the host");
      return absl::AbortedError(host_reason);
    } else if (k.kind() == proto::Kernel::EXTERN) {
      // The host round trip (executable.h).
      host_reason = absl::StrCat(where, " (extern ", k.extern_op(), ") runs on the host");
      std::vector<std::string> host;
      std::vector<cpu::ExternTensor> ins;
      host.reserve(k.extern_inputs_size() + 1);
      for (int id : k.extern_inputs()) {
        if (!buffers.contains(id)) return absl::InvalidArgumentError(absl::StrCat(where, ": unknown buffer ", id));
        host.emplace_back(sizes[id], '\0');
        if (absl::Status st = Check(d->MemcpyDtoHAsync(host.back().data(), host_table[id], sizes[id], stream), "cuMemcpyDtoHAsync", where); !st.ok()) return st;
        ins.push_back(cpu::ExternTensor{buffers.at(id)->dtype(), shapes[id], host.back().data(), false});
      }
      const int out = k.extern_output();
      if (!buffers.contains(out)) return absl::InvalidArgumentError(absl::StrCat(where, ": unknown buffer ", out));
      host.emplace_back(sizes[out], '\0');
      if (absl::Status st = Check(d->StreamSynchronize(stream), "cuStreamSynchronize", where); !st.ok()) return st;
      cpu::ExternTensor result{buffers.at(out)->dtype(), shapes[out], host.back().data(), false};
      AttrMap attrs = extern_attrs.at(k.id());
      if (absl::Status st = BindSymAttrs(attrs, b); !st.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", st.message()));
      absl::Status st = cpu::RunExtern(k.extern_op(), cpu::ExternArgs{ins, result, attrs, 1, nullptr});
      if (!st.ok()) return absl::Status(st.code(), absl::StrCat(where, " (extern ", k.extern_op(), "): ", st.message()));
      if (absl::Status c = Check(d->MemcpyHtoDAsync(host_table[out], host.back().data(), sizes[out], stream), "cuMemcpyHtoDAsync", where); !c.ok()) return c;
      if (absl::Status c = Check(d->StreamSynchronize(stream), "cuStreamSynchronize", where); !c.ok()) return c;
    }
    auto fn = functions.find(k.id());
    if (fn == functions.end() || epilogue_done || gemms->forwarded(k.id())) continue;
    int64_t count = 1;
    for (const proto::SymExpr& r : k.ranges()) {
      absl::StatusOr<int64_t> v = Eval(r, b);
      if (!v.ok()) return absl::InvalidArgumentError(absl::StrCat(where, " range: ", v.status().message()));
      if (__builtin_mul_overflow(count, *v, &count)) return absl::InvalidArgumentError(absl::StrCat(where, ": ranges overflow"));
    }
    const int64_t grid = CudaGridFor(rows_per_block[k.id()], count, items_per_thread[k.id()]);
    if (grid == 0) continue;
    const auto [bx, by] = block_dims[k.id()];
    auto slots = slot_offset.find(k.id());
    bufs_arg = table + 8 * (slots == slot_offset.end() ? 0 : slots->second);
    if (absl::Status st = Check(d->LaunchKernel(fn->second, static_cast<unsigned>(grid), 1, 1, bx, by, 1, 0, stream, params, nullptr), "cuLaunchKernel", where); !st.ok()) return st;
    if (options.sync_each_kernel) {
      CoilCudaError e{};
      if (absl::Status st = read_error(&e, where); !st.ok()) return st;
      if (e.failed != 0) return KernelError(e);
    }
  }
  return absl::OkStatus();
  };
  // The device time starts here, right before the first launch (executable.h's RunTimes).
  const TimingProbe& probe = ReadTimingProbe();
  const bool eager = graphs == nullptr || profiling || options.sync_each_kernel;
  if (eager && probe.warm) {
    // Diagnostic (COIL_CUDA_TIMING_PROBE=warm): the kernels once more before the timed pass,
    // which then starts on a busy, warm GPU (no launch gap; results are overwritten, so not for
    // programs that update a buffer in place; the GEMM counts count both passes).
    if (absl::Status st = run_kernels(); !st.ok()) return st;
  }
  if (probe.gate_ms > 0 && d->LaunchHostFunc != nullptr) {
    // Diagnostic (COIL_CUDA_TIMING_PROBE=gateMS): the stream waits on a host function while the
    // event and the kernels are enqueued, so the timed span holds no launch latency.
    if (absl::Status st = Check(d->LaunchHostFunc(stream, &SleepHostFunc, const_cast<int*>(&probe.gate_ms)), "cuLaunchHostFunc", "the timing probe"); !st.ok()) return st;
  }
  // SetTimedPasses: the kernels `passes` times back to back between the events; once for a
  // program that updates one of its inputs (each pass would read the last one's result), when
  // profiling and when synchronizing after every kernel.
  bool writes_input = false;
  for (const auto& [id, pos] : input_of) writes_input = writes_input || written.contains(id);
  const int passes = writes_input || profiling || options.sync_each_kernel ? 1 : timed_passes;
  if (absl::Status st = Check(d->EventRecord(ev_kernels, stream), "cuEventRecord", "the run"); !st.ok()) return st;
  for (int pass = 0; pass < passes; ++pass) {
    if (eager) {
      if (absl::Status st = run_kernels(); !st.ok()) return st;
    } else {
      // Through a CUDA graph keyed by the whole table (addresses, symbols, slots).
      CudaGraphs::Tally counters{gemm_counts.fused, gemm_counts.plain, gemm_counts.host,
                                 conv_counts.fused, conv_counts.plain, conv_counts.host};
      const std::string key(reinterpret_cast<const char*>(host_table.data()), host_table.size() * 8);
      absl::Status st = graphs->Run(key, stream, counters, [&](bool capture, std::string* host) {
        gemm_counts = {counters[0], counters[1], counters[2]};
        conv_counts = {counters[3], counters[4], counters[5]};
        capturing = capture;
        host_reason.clear();
        absl::Status r = run_kernels();
        capturing = false;
        *host = host_reason;
        counters = {gemm_counts.fused, gemm_counts.plain, gemm_counts.host,
                    conv_counts.fused, conv_counts.plain, conv_counts.host};
        return r;
      });
      gemm_counts = {counters[0], counters[1], counters[2]};
      conv_counts = {counters[3], counters[4], counters[5]};
      if (!st.ok()) return st;
    }
  }
  if (profiling) {
    if (absl::Status st = Check(d->EventRecord(ev_kernel[s.kernels_size()], stream), "cuEventRecord", "the run"); !st.ok()) return st;
  }
  if (absl::Status st = Check(d->EventRecord(ev_end, stream), "cuEventRecord", "the run"); !st.ok()) return st;
  CoilCudaError e{};
  if (absl::Status st = read_error(&e, "the run's kernels"); !st.ok()) return st;
  if (e.failed != 0) return KernelError(e);
  last_times.copy_in_ms = Elapsed(ev_begin, ev_kernels);
  last_times.device_ms = Elapsed(ev_kernels, ev_end) / passes;
  last_times.passes = passes;
  if (profiling) {
    if (profile.size() != static_cast<size_t>(s.kernels_size())) {
      profile.assign(s.kernels_size(), {});
    }
    for (int ki = 0; ki < s.kernels_size(); ++ki) {
      CudaExecutable::KernelTime& t = profile[ki];
      if (t.kernel.empty()) t.kernel = absl::StrCat("k", s.kernels(ki).id(), "_", s.kernels(ki).name());
      t.kind = kinds[ki];
      ++t.calls;
      t.total_ms += Elapsed(ev_kernel[ki], ev_kernel[ki + 1]);
    }
  }
  const auto out_start = std::chrono::steady_clock::now();
  // Outputs (and inputs that kernels wrote) back to the host, straight into new tensors (one
  // pass over the bytes: from pageable memory the call returns when the copy is done).
  std::map<int, HostTensor> back;
  auto fetch = [&](int id) -> absl::Status {
    if (back.contains(id)) return absl::OkStatus();
    absl::StatusOr<HostTensor> h = HostTensor::Allocate(buffers.at(id)->dtype(), shapes[id], TensorStorage::kUninitialized);
    if (!h.ok()) return h.status();
    back[id] = *h;
    if (sizes[id] == 0) return absl::OkStatus();
    return Check(d->MemcpyDtoHAsync(h->RawData(), host_table[id], sizes[id], stream), "cuMemcpyDtoHAsync", absl::StrCat("output buffer ", id));
  };
  for (int id : s.outputs()) {
    if (!buffers.contains(id)) return absl::InvalidArgumentError(absl::StrCat("output buffer ", id, " does not exist"));
    if (!input_of.contains(id)) {
      if (absl::Status st = fetch(id); !st.ok()) return st;
    }
  }
  for (const auto& [id, pos] : input_of) {
    if (written.contains(id)) {
      if (absl::Status st = fetch(id); !st.ok()) return st;
    }
  }
  if (absl::Status st = Check(d->StreamSynchronize(stream), "cuStreamSynchronize", "the outputs"); !st.ok()) return st;
  for (const auto& [id, pos] : input_of) {
    if (!written.contains(id)) continue;
    const HostTensor* t = &back[id];
    HostTensor dst = inputs[pos];  // shares the caller's storage
    const bool fp = IsFloating(dst.dtype());
    int64_t i = 0;
    ForEachIndex(dst.shape(), [&](absl::Span<const int64_t> idx) {
      if (fp) dst.StoreDouble(dst.StorageOffset(idx), t->LoadDouble(i));
      else dst.StoreInt(dst.StorageOffset(idx), t->LoadInt(i));
      ++i;
    });
  }
  std::vector<HostTensor> outputs;
  for (int id : s.outputs()) {
    auto in = input_of.find(id);
    if (in != input_of.end()) {
      outputs.push_back(inputs[in->second]);
      continue;
    }
    outputs.push_back(back[id]);
  }
  last_times.copy_out_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - out_start).count();
  return outputs;
}

absl::Status CudaExecutable::DriverStatus() { return CudaDriver::Probe(); }

CudaExecutable::CudaExecutable(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaExecutable::~CudaExecutable() = default;

absl::StatusOr<std::unique_ptr<CudaExecutable>> CudaExecutable::Create(
    proto::KernelModule module, const CudaExecutableOptions& options) {
  if (module.backend() != "cuda") {
    return absl::InvalidArgumentError(absl::StrCat("a '", module.backend(), "' module is not a CUDA module"));
  }
  absl::StatusOr<const CudaDriver*> d = CudaDriver::Get();
  if (!d.ok()) return d.status();
  auto impl = std::make_unique<Impl>();
  impl->d = *d;
  impl->options = options;
  impl->module = std::move(module);
  if (absl::Status s = impl->Setup(); !s.ok()) return s;
  return std::unique_ptr<CudaExecutable>(new CudaExecutable(std::move(impl)));
}

absl::StatusOr<std::vector<HostTensor>> CudaExecutable::Run(absl::Span<const HostTensor> inputs) {
  absl::MutexLock lock(&mu_);
  return impl_->Run(inputs);
}

const std::string& CudaExecutable::device_name() const { return impl_->device_name; }

const std::string& CudaExecutable::gemm_library() const { return impl_->gemms->library(); }

bool CudaExecutable::gemm_on_host() const { return impl_->gemms->on_host(); }

CudaExecutable::GemmCounts CudaExecutable::gemm_counts() {
  absl::MutexLock lock(&mu_);
  return impl_->gemm_counts;
}

const std::string& CudaExecutable::conv_library() const { return impl_->convs->library(); }

CudaExecutable::GemmCounts CudaExecutable::conv_counts() {
  absl::MutexLock lock(&mu_);
  return impl_->conv_counts;
}

CudaExecutable::GemmCounts CudaExecutable::attention_counts() {
  absl::MutexLock lock(&mu_);
  return impl_->attention_counts;
}

std::string CudaExecutable::attention_why_not() {
  absl::MutexLock lock(&mu_);
  return impl_->attention->why_not();
}

std::string CudaExecutable::conv_why_not() {
  absl::MutexLock lock(&mu_);
  return impl_->convs->why_not();
}

CudaExecutable::RunTimes CudaExecutable::last_run_times() {
  absl::MutexLock lock(&mu_);
  return impl_->last_times;
}

CudaExecutable::GraphCounts CudaExecutable::graph_counts() {
  absl::MutexLock lock(&mu_);
  if (impl_->graphs == nullptr) return {};
  const CudaGraphs::Counts& c = impl_->graphs->counts();
  return GraphCounts{c.eager, c.captured, c.replayed, c.evicted};
}

std::string CudaExecutable::graphs_why_not() {
  absl::MutexLock lock(&mu_);
  return impl_->graphs == nullptr ? "cuda_graphs is off" : impl_->graphs->why_not();
}

void CudaExecutable::SetTimedPasses(int passes) {
  absl::MutexLock lock(&mu_);
  impl_->timed_passes = std::max(passes, 1);
}

int CudaExecutable::PassesForSample(double single_ms, double sample_ms) {
  if (!(single_ms > 0)) return kMaxTimedPasses;
  return static_cast<int>(std::clamp(std::ceil(sample_ms / single_ms), 1.0, double{kMaxTimedPasses}));
}

void CudaExecutable::SetProfiling(bool on) {
  absl::MutexLock lock(&mu_);
  impl_->profiling = on;
  impl_->profile.clear();
}

std::vector<CudaExecutable::KernelTime> CudaExecutable::Profile() {
  absl::MutexLock lock(&mu_);
  return impl_->profile;
}

}  // namespace coil::cuda

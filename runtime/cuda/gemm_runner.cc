// The CUDA executable's GEMMs (see gemm_runner.h).
#include "runtime/cuda/gemm_runner.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/cuda/cublaslt.h"
#include "runtime/cuda/kernel_abi.h"
#include "runtime/interpreter.h"

namespace coil::cuda {
namespace {

int ElementBytes(proto::DType t) {
  switch (t) {
    case proto::FLOAT16:
    case proto::BFLOAT16:
      return 2;
    case proto::FLOAT64:
      return 8;
    default:
      return 4;
  }
}

// `n` elements of `bytes` rounded up to whole 16-byte rows.
int64_t PaddedColumns(int64_t n, int bytes) {
  const int64_t per = 16 / bytes;
  return (n + per - 1) / per * per;
}

}  // namespace

absl::StatusOr<std::unique_ptr<GemmRunner>> GemmRunner::Create(
    const CudaDriver* d, const proto::Schedule& schedule, const Graph& graph,
    const std::string& external_data_dir, const absl::flat_hash_map<int, CUdeviceptr>& constants,
    CUmodule module, CUstream stream, const GemmRunnerOptions& options) {
  std::unique_ptr<GemmRunner> r(new GemmRunner);
  r->d_ = d;
  r->stream_ = stream;
  r->options_ = options;
  for (const proto::Kernel& k : schedule.kernels()) {
    std::optional<GemmPlan> p = PlanGemm(schedule, k);
    if (!p.has_value()) continue;
    if (options.forward < (p->forward_dtype == p->dtype ? 1 : 2)) p->forward_kernel = 0;
    p->transpose_b = p->transpose_b && options.transpose_b;
    p->pad_b = p->pad_b && options.pad_b;
    r->plans_[k.id()] = *p;
  }
  // The widening kernels of the f16 / bf16 GEMMs whose forwarded output is f32: codegen_cuda
  // emits them into the first image for every module with an f16 / bf16 mm. Only those are
  // asked for: asking a module for a kernel it lacks is a CUDA API error (compute-sanitizer
  // counts each one).
  for (const auto& [t, name] : {std::pair{proto::FLOAT16, "f16"}, std::pair{proto::BFLOAT16, "bf16"}}) {
    bool used = false;
    for (const auto& [id, p] : r->plans_) {
      used = used || (p.dtype == t && p.forward_kernel != 0 && p.forward_dtype == proto::FLOAT32);
    }
    CUfunction f = nullptr;
    if (used && module != nullptr &&
        d->ModuleGetFunction(&f, module, GemmWidenRowsSymbol(name).c_str()) == 0) {
      r->widen_[t] = f;
    }
  }
  if (r->plans_.empty()) return r;
  if (!options.use_cublaslt) {
    r->library_ = "none (use_cublaslt is off: aten.mm / aten.bmm run on the host)";
    return r;
  }
  absl::StatusOr<const CublasLt*> lt = CublasLt::Get();
  if (!lt.ok()) {
    r->library_ = absl::StrCat(lt.status().message(), ": aten.mm / aten.bmm run on the host");
    r->on_host_ = true;
    return r;
  }
  absl::StatusOr<CUdeviceptr> ws = r->Alloc(options.workspace_bytes, "cuBLASLt's workspace");
  if (!ws.ok()) return ws.status();
  r->workspace_ = *ws;
  absl::StatusOr<std::unique_ptr<CublasGemm>> g = CublasGemm::Create(
      *lt, r->workspace_, options.workspace_bytes, options.allow_tf32, options.tune, d);
  if (!g.ok()) return g.status();
  r->gemm_ = *std::move(g);
  r->library_ = r->gemm_->Describe();
  absl::flat_hash_map<int, const proto::Buffer*> buffers;
  for (const proto::Buffer& b : schedule.buffers()) buffers[b.id()] = &b;
  for (const auto& [id, p] : r->plans_) {
    if (!(p.transpose_b || p.pad_b) || !p.unsupported.empty() || r->aligned_b_.contains(p.b)) {
      continue;
    }
    auto c = constants.find(p.b);
    if (c == constants.end() || !buffers.contains(p.b)) continue;  // planned from the schedule
    if (absl::Status s = r->KeepAlignedB(p, *buffers.at(p.b), graph, external_data_dir, c->second);
        !s.ok()) {
      return s;
    }
  }
  return r;
}

GemmRunner::~GemmRunner() {
  gemm_.reset();
  if (d_ == nullptr) return;
  for (CUdeviceptr p : allocations_) d_->MemFree(p);
}

absl::StatusOr<CUdeviceptr> GemmRunner::Alloc(size_t bytes, const std::string& where) {
  CUdeviceptr p = 0;
  if (absl::Status s = d_->Check(d_->MemAlloc(&p, std::max<size_t>(bytes, 1)), "cuMemAlloc", where);
      !s.ok()) {
    return s;
  }
  allocations_.push_back(p);
  return p;
}

absl::Status GemmRunner::KeepAlignedB(const GemmPlan& p, const proto::Buffer& b,
                                      const Graph& graph, const std::string& external_data_dir,
                                      CUdeviceptr uploaded) {
  const std::string where = absl::StrCat("constant buffer ", p.b, " ('", b.name(), "') ",
                                         p.transpose_b ? "transposed" : "with padded rows");
  const int eb = ElementBytes(p.dtype);
  const Value* v = graph.FindValue(b.graph_value());
  if (v == nullptr || v->type().shape.size() != 2) return absl::OkStatus();
  if (p.transpose_b) {
    absl::StatusOr<HostTensor> t = LoadConstant(*v, external_data_dir);
    if (!t.ok()) return t.status();
    const std::string raw = t->Bytes();
    const int64_t rows = t->shape().at(0), cols = t->shape().at(1);
    if (static_cast<int64_t>(raw.size()) != rows * cols * eb) return absl::OkStatus();
    const std::string bytes = TransposeMatrix(raw, rows, cols, eb);
    absl::StatusOr<CUdeviceptr> bt = Alloc(bytes.size(), where);
    if (!bt.ok()) return bt.status();
    aligned_b_[p.b] = AlignedB{*bt, rows, true};
    if (absl::Status s = d_->Check(d_->MemcpyHtoDAsync(*bt, bytes.data(), bytes.size(), stream_),
                                   "cuMemcpyHtoDAsync", where);
        !s.ok()) {
      return s;
    }
    return d_->Check(d_->StreamSynchronize(stream_), "cuStreamSynchronize", where);
  }
  // Padded rows: the uploaded [K, N] copied row by row into rows of PaddedColumns(N).
  std::optional<std::vector<int64_t>> shape = v->type().StaticShape();
  if (!shape.has_value()) return absl::OkStatus();
  const int64_t* rows = &(*shape)[0];
  const int64_t* cols = &(*shape)[1];
  const int64_t ld = PaddedColumns(*cols, eb);
  absl::StatusOr<CUdeviceptr> padded = Alloc(static_cast<size_t>(*rows * ld * eb), where);
  if (!padded.ok()) return padded.status();
  CudaMemcpy2D copy;
  copy.src_device = uploaded;
  copy.src_pitch = static_cast<size_t>(*cols * eb);
  copy.dst_device = *padded;
  copy.dst_pitch = static_cast<size_t>(ld * eb);
  copy.width_bytes = copy.src_pitch;
  copy.height = static_cast<size_t>(*rows);
  if (absl::Status s = d_->Check(d_->MemsetD8Async(*padded, 0, *rows * ld * eb, stream_),
                                 "cuMemsetD8Async", where);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = d_->Check(d_->Memcpy2DAsync(&copy, stream_), "cuMemcpy2DAsync", where);
      !s.ok()) {
    return s;
  }
  aligned_b_[p.b] = AlignedB{*padded, ld, false};
  return d_->Check(d_->StreamSynchronize(stream_), "cuStreamSynchronize", where);
}

absl::StatusOr<bool> GemmRunner::RunInto(GemmCall call, const std::string& where) {
  const double flops = 2.0 * static_cast<double>(call.batch) * static_cast<double>(call.m) *
                       static_cast<double>(call.n) * static_cast<double>(call.k);
  const bool half = call.dtype == proto::FLOAT16 || call.dtype == proto::BFLOAT16;
  const bool widen = call.d_dtype == proto::FLOAT32 && half;
  auto w = widen_.find(call.dtype);
  if (!options_.pad_d || !half || call.batch != 1 || call.c != 0 || call.n % 8 == 0 ||
      flops < CublasGemm::kTuneMinFlops || (widen && w == widen_.end()) ||
      !(widen || call.d_dtype == proto::DTYPE_UNSPECIFIED || call.d_dtype == call.dtype)) {
    return gemm_->Run(call, stream_, where);
  }
  // The GEMM's own dtype into rows of PaddedColumns(n), then to D (gemm_runner.h).
  const int64_t ld = PaddedColumns(call.n, 2);
  const size_t bytes = static_cast<size_t>(call.m * ld * 2);
  if (bytes > scratch_bytes_) {
    absl::StatusOr<CUdeviceptr> s = Alloc(bytes, absl::StrCat(where, ": the padded GEMM output"));
    if (!s.ok()) return s.status();
    scratch_ = *s;
    scratch_bytes_ = bytes;
  }
  const CUdeviceptr d = call.d;
  const int64_t n = call.n;
  call.d = scratch_;
  call.ldd = ld;
  call.d_dtype = proto::DTYPE_UNSPECIFIED;
  // B's padded copy has zero columns up to the same width: the GEMM computes all ld columns
  // (zeros past n), an N of whole 16-byte rows as in Inductor's pad_mm (no bias: it has n).
  if (!call.b_transposed && call.ldb == ld && call.bias == 0) call.n = ld;
  absl::StatusOr<bool> ran = gemm_->Run(call, stream_, where);
  if (!ran.ok() || !*ran) return ran;
  if (widen) {
    CUdeviceptr src = scratch_;
    long long pitch = ld, rows = call.m, cols = n;
    void* args[] = {&src, &pitch, const_cast<CUdeviceptr*>(&d), &rows, &cols};
    const std::string name =
        GemmWidenRowsSymbol(call.dtype == proto::FLOAT16 ? "f16" : "bf16");
    const auto grid = static_cast<unsigned>(CudaGridFor(0, rows * cols, kCudaGemmWidenItems));
    if (absl::Status s = d_->Check(d_->LaunchKernel(w->second, grid, 1, 1,
                                                    kCudaBlockThreads, 1, 1, 0, stream_, args,
                                                    nullptr),
                                   "cuLaunchKernel", absl::StrCat(where, " (", name, ")"));
        !s.ok()) {
      return s;
    }
    return true;
  }
  CudaMemcpy2D copy;
  copy.src_device = scratch_;
  copy.src_pitch = static_cast<size_t>(ld * 2);
  copy.dst_device = d;
  copy.dst_pitch = static_cast<size_t>(n * 2);
  copy.width_bytes = copy.dst_pitch;
  copy.height = static_cast<size_t>(call.m);
  if (absl::Status s = d_->Check(d_->Memcpy2DAsync(&copy, stream_), "cuMemcpy2DAsync", where);
      !s.ok()) {
    return s;
  }
  return true;
}

absl::StatusOr<std::optional<bool>> GemmRunner::Run(
    const proto::Kernel& k, const absl::flat_hash_map<int, std::vector<int64_t>>& shapes,
    const absl::flat_hash_map<int, int64_t>& sizes, const std::vector<uint64_t>& address,
    const std::string& where) {
  auto it = plans_.find(k.id());
  if (gemm_ == nullptr || it == plans_.end() || !it->second.unsupported.empty()) {
    return std::nullopt;
  }
  const GemmPlan& p = it->second;
  const std::vector<int64_t>& a = shapes.at(p.a);
  const std::vector<int64_t>& b = shapes.at(p.b);
  GemmCall call;
  call.dtype = p.dtype;
  const size_t r = p.batched ? 1 : 0;
  if (p.batched) {
    if (a[0] != b[0]) return std::nullopt;  // the host kernel reports it
    call.batch = a[0];
  }
  call.m = a[r];
  call.k = a[r + 1];
  call.n = b[r + 1];
  if (b[r] != call.k) return std::nullopt;
  // Empty problems (K = 0 means zeros, then the epilogue) stay on the host path.
  if (call.batch == 0 || call.m == 0 || call.n == 0 || call.k == 0) return std::nullopt;
  const int64_t limit = int64_t{1} << 31;  // cuBLASLt's dimensions are 64-bit, but stay sane
  if (call.m >= limit || call.n >= limit || call.k >= limit) return std::nullopt;
  auto overlaps = [&](int x, int y) {
    const uint64_t px = address[x], py = address[y];
    return px < py + sizes.at(y) && py < px + sizes.at(x);
  };
  call.a = address[p.a];
  call.b = address[p.b];
  if (auto kept = aligned_b_.find(p.b); kept != aligned_b_.end()) {
    call.b = kept->second.address;
    call.b_transposed = kept->second.transposed;
    call.ldb = kept->second.ld;
  }
  if (p.forward_kernel != 0 && !overlaps(p.forward_d, p.a) && !overlaps(p.forward_d, p.b)) {
    GemmCall fwd = call;  // writes the copy's output (gemm_plan.h's forwarding)
    fwd.d = address[p.forward_d];
    fwd.d_dtype = p.forward_dtype;
    absl::StatusOr<bool> ran = RunInto(fwd, where);
    if (!ran.ok()) return ran.status();
    if (*ran) return forwarded_.insert(p.forward_kernel), true;
  }
  if (overlaps(p.out, p.a) || overlaps(p.out, p.b)) return std::nullopt;
  if (p.fused && !overlaps(p.d, p.a) && !overlaps(p.d, p.b) &&
      (p.bias == 0 || !overlaps(p.d, p.bias)) &&
      (p.c == 0 || address[p.c] == address[p.d] || !overlaps(p.d, p.c))) {
    GemmCall fused = call;
    fused.d = address[p.d];
    fused.c = p.c != 0 ? address[p.c] : 0;
    fused.bias = p.bias != 0 ? address[p.bias] : 0;
    fused.relu = p.relu;
    absl::StatusOr<bool> ran = RunInto(fused, where);
    if (!ran.ok()) return ran.status();
    if (*ran) return true;
  }
  call.d = address[p.out];
  absl::StatusOr<bool> ran = RunInto(call, where);
  if (!ran.ok()) return ran.status();
  if (!*ran) return std::nullopt;
  return false;
}

}  // namespace coil::cuda

// cuBLASLt GEMMs (see gemm.h).
#include "runtime/cuda/gemm.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace coil::cuda {
namespace {

int CudaType(proto::DType t) {
  switch (t) {
    case proto::FLOAT16:
      return lt::kR16F;
    case proto::BFLOAT16:
      return lt::kR16BF;
    case proto::FLOAT64:
      return lt::kR64F;
    default:
      return lt::kR32F;
  }
}

// The largest power of two up to 256 dividing the address.
int AlignmentOf(CUdeviceptr p) {
  int a = 256;
  while (a > 1 && p % a != 0) a /= 2;
  return a;
}

}  // namespace

struct CublasGemm::Problem {
  const CublasLt* lt = nullptr;
  lt::MatmulDesc desc = nullptr;
  lt::MatrixLayout a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  lt::Algo algo;
  bool has_algo = false;
  ~Problem() {
    for (lt::MatrixLayout l : {a, b, c, d}) {
      if (l != nullptr) lt->MatrixLayoutDestroy(l);
    }
    if (desc != nullptr) lt->MatmulDescDestroy(desc);
  }
};

CublasGemm::CublasGemm(const CublasLt* lt, lt::Handle handle, CUdeviceptr workspace, size_t bytes,
                       bool tf32)
    : lt_(lt), handle_(handle), workspace_(workspace), workspace_bytes_(bytes), allow_tf32_(tf32) {}

CublasGemm::~CublasGemm() {
  problems_.clear();
  lt_->Destroy(handle_);
}

absl::StatusOr<std::unique_ptr<CublasGemm>> CublasGemm::Create(const CublasLt* lt,
                                                               CUdeviceptr workspace,
                                                               size_t workspace_bytes,
                                                               bool allow_tf32,
                                                               int tune_candidates,
                                                               const CudaDriver* driver) {
  lt::Handle handle = nullptr;
  if (absl::Status s = lt->Check(lt->Create(&handle), "cublasLtCreate", "the executable"); !s.ok())
    return s;
  std::unique_ptr<CublasGemm> g(new CublasGemm(lt, handle, workspace, workspace_bytes, allow_tf32));
  g->tune_candidates_ = std::max(1, tune_candidates);
  g->driver_ = driver;
  return g;
}

std::string CublasGemm::Describe() const {
  return absl::StrCat("cuBLASLt ", lt_->version, " (", lt_->path, ")");
}

absl::StatusOr<CublasGemm::Problem*> CublasGemm::Prepare(const GemmCall& call, CUstream stream,
                                                         const std::string& where) {
  const Key key{call.dtype,
                call.batch,
                call.m,
                call.n,
                call.k,
                call.c != 0,
                call.bias != 0,
                call.relu,
                AlignmentOf(call.a),
                AlignmentOf(call.b),
                AlignmentOf(call.c != 0 ? call.c : call.d),
                AlignmentOf(call.d),
                call.d_dtype == proto::DTYPE_UNSPECIFIED ? call.dtype : call.d_dtype,
                call.b_transposed,
                call.ldb,
                call.ldd};
  auto it = problems_.find(key);
  if (it != problems_.end()) return it->second.get();
  auto p = std::make_unique<Problem>();
  p->lt = lt_;
  const int type = CudaType(call.dtype);
  const int d_type = CudaType(std::get<12>(key) == proto::DTYPE_UNSPECIFIED
                                  ? call.dtype
                                  : static_cast<proto::DType>(std::get<12>(key)));
  const bool f64 = call.dtype == proto::FLOAT64;
  const int compute = f64 ? lt::kCompute64F
                          : (allow_tf32_ && call.dtype == proto::FLOAT32 ? lt::kCompute32FFastTF32
                                                                         : lt::kCompute32F);
  const int scale = f64 ? lt::kR64F : lt::kR32F;
  auto check = [&](lt::Status s, const char* call_name) { return lt_->Check(s, call_name, where); };
  if (absl::Status s =
          check(lt_->MatmulDescCreate(&p->desc, compute, scale), "cublasLtMatmulDescCreate");
      !s.ok())
    return s;
  const uint32_t epilogue = call.bias != 0 ? (call.relu ? lt::kEpilogueReluBias : lt::kEpilogueBias)
                                           : (call.relu ? lt::kEpilogueRelu : lt::kEpilogueDefault);
  if (absl::Status s = check(
          lt_->MatmulDescSetAttribute(p->desc, lt::kDescEpilogue, &epilogue, sizeof(epilogue)),
          "cublasLtMatmulDescSetAttribute(EPILOGUE)");
      !s.ok())
    return s;
  if (call.bias != 0) {
    if (absl::Status s =
            check(lt_->MatmulDescSetAttribute(p->desc, lt::kDescBiasDataType, &type, sizeof(type)),
                  "cublasLtMatmulDescSetAttribute(BIAS_DATA_TYPE)");
        !s.ok())
      return s;
  }
  // Column-major view (gemm.h): cuBLASLt's A is our B ([N, K], ld N), its B our A ([K, M], ld K),
  // D and C are [N, M] with ld N.
  auto layout = [&](lt::MatrixLayout* l, int64_t rows, int64_t cols, int layout_type,
                    int64_t ld = 0) -> absl::Status {
    if (absl::Status s = check(lt_->MatrixLayoutCreate(l, layout_type, rows, cols, ld > 0 ? ld : rows),
                               "cublasLtMatrixLayoutCreate");
        !s.ok())
      return s;
    if (call.batch == 1) return absl::OkStatus();
    const int32_t count = static_cast<int32_t>(call.batch);
    const int64_t stride = (ld > 0 ? ld : rows) * cols;
    if (absl::Status s =
            check(lt_->MatrixLayoutSetAttribute(*l, lt::kLayoutBatchCount, &count, sizeof(count)),
                  "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)");
        !s.ok())
      return s;
    return check(
        lt_->MatrixLayoutSetAttribute(*l, lt::kLayoutStridedBatchOffset, &stride, sizeof(stride)),
        "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)");
  };
  // A transposed B is [N, K] row-major: cuBLASLt's A stored [K, N] (ld K), used transposed.
  if (call.b_transposed) {
    const int32_t op_t = lt::kOpT;
    if (absl::Status s =
            check(lt_->MatmulDescSetAttribute(p->desc, lt::kDescTransA, &op_t, sizeof(op_t)),
                  "cublasLtMatmulDescSetAttribute(TRANSA)");
        !s.ok())
      return s;
  }
  if (absl::Status s = call.b_transposed ? layout(&p->a, call.k, call.n, type, call.ldb)
                                         : layout(&p->a, call.n, call.k, type, call.ldb);
      !s.ok())
    return s;
  if (absl::Status s = layout(&p->b, call.k, call.m, type); !s.ok()) return s;
  if (absl::Status s = layout(&p->c, call.n, call.m, d_type, call.ldd); !s.ok()) return s;
  if (absl::Status s = layout(&p->d, call.n, call.m, d_type, call.ldd); !s.ok()) return s;

  lt::Preference pref = nullptr;
  if (absl::Status s = check(lt_->MatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
      !s.ok())
    return s;
  struct PrefGuard {
    const CublasLt* lt;
    lt::Preference p;
    ~PrefGuard() { lt->MatmulPreferenceDestroy(p); }
  } guard{lt_, pref};
  const uint64_t ws = workspace_bytes_;
  const uint32_t align[4] = {
      static_cast<uint32_t>(std::get<9>(key)), static_cast<uint32_t>(std::get<8>(key)),
      static_cast<uint32_t>(std::get<10>(key)), static_cast<uint32_t>(std::get<11>(key))};
  // cuBLASLt's A is our b, its B our a.
  const int which[4] = {lt::kPrefMinAlignmentA, lt::kPrefMinAlignmentB, lt::kPrefMinAlignmentC,
                        lt::kPrefMinAlignmentD};
  if (absl::Status s = check(
          lt_->MatmulPreferenceSetAttribute(pref, lt::kPrefMaxWorkspaceBytes, &ws, sizeof(ws)),
          "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
      !s.ok())
    return s;
  for (int i = 0; i < 4; ++i) {
    if (absl::Status s =
            check(lt_->MatmulPreferenceSetAttribute(pref, which[i], &align[i], sizeof(align[i])),
                  "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT)");
        !s.ok())
      return s;
  }
  // An f16 / bf16 output: split-K partial sums are added in f32, never rounded to the output
  // type first (in place or in the workspace), so a K split costs no precision: one rounding
  // of the f32 sum, as the CPU backend and the Schedule interpreter do.
  if (d_type == CudaType(proto::FLOAT16) || d_type == CudaType(proto::BFLOAT16)) {
    const uint32_t schemes = lt::kReductionSchemeComputeType;
    if (absl::Status s = check(lt_->MatmulPreferenceSetAttribute(pref, lt::kPrefReductionSchemeMask,
                                                                 &schemes, sizeof(schemes)),
                               "cublasLtMatmulPreferenceSetAttribute(REDUCTION_SCHEME_MASK)");
        !s.ok())
      return s;
  }
  if (call.bias != 0) {
    const void* bias = reinterpret_cast<const void*>(call.bias);
    if (absl::Status s =
            check(lt_->MatmulDescSetAttribute(p->desc, lt::kDescBiasPointer, &bias, sizeof(bias)),
                  "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
        !s.ok())
      return s;
  }
  const double flops = 2.0 * static_cast<double>(call.batch) * static_cast<double>(call.m) *
                       static_cast<double>(call.n) * static_cast<double>(call.k);
  const bool tune = tune_candidates_ > 1 && driver_ != nullptr && call.c == 0 &&
                    flops >= kTuneMinFlops;
  std::vector<lt::HeuristicResult> results(tune ? tune_candidates_ : 1);
  int found = 0;
  lt::Status hs = lt_->MatmulAlgoGetHeuristic(handle_, p->desc, p->a, p->b, p->c, p->d, pref,
                                              static_cast<int>(results.size()), results.data(),
                                              &found);
  // A failing heuristic (NOT_SUPPORTED, or INVALID_VALUE for an epilogue this dtype lacks) means
  // no algorithm for this problem: the caller runs it another way.
  std::vector<lt::Algo> usable;
  for (int i = 0; hs == lt::kSuccess && i < found && i < static_cast<int>(results.size()); ++i) {
    if (results[i].state == lt::kSuccess && results[i].workspace_size <= workspace_bytes_)
      usable.push_back(results[i].algo);
  }
  p->has_algo = !usable.empty();
  if (p->has_algo) p->algo = usable[0];
  if (usable.size() > 1) {
    absl::StatusOr<size_t> best = Fastest(*p, usable, call, stream, where);
    if (!best.ok()) return best.status();
    p->algo = usable[*best];
  }
  Problem* raw = p.get();
  problems_[key] = std::move(p);
  return raw;
}

lt::Status CublasGemm::Launch(const Problem& p, const lt::Algo& algo, const GemmCall& call,
                              CUstream stream) {
  const float one32 = 1, zero32 = 0;
  const double one64 = 1, zero64 = 0;
  const bool f64 = call.dtype == proto::FLOAT64;
  const void* alpha = f64 ? static_cast<const void*>(&one64) : &one32;
  const void* beta = call.c != 0 ? alpha : (f64 ? static_cast<const void*>(&zero64) : &zero32);
  const void* c = reinterpret_cast<const void*>(call.c != 0 ? call.c : call.d);
  return lt_->Matmul(handle_, p.desc, alpha, reinterpret_cast<const void*>(call.b), p.a,
                     reinterpret_cast<const void*>(call.a), p.b, beta, c, p.c,
                     reinterpret_cast<void*>(call.d), p.d, &algo,
                     reinterpret_cast<void*>(workspace_), workspace_bytes_,
                     reinterpret_cast<lt::Stream>(stream));
}

absl::StatusOr<size_t> CublasGemm::Fastest(const Problem& p, const std::vector<lt::Algo>& algos,
                                           const GemmCall& call, CUstream stream,
                                           const std::string& where) {
  const CudaDriver& d = *driver_;
  CUevent e[2] = {nullptr, nullptr};
  absl::Status st;
  for (CUevent& ev : e) {
    if (st.ok()) st = d.Check(d.EventCreate(&ev, 0), "cuEventCreate", where);
  }
  size_t best = 0;
  float best_ms = 0;
  bool timed = false;
  for (size_t i = 0; st.ok() && i < algos.size(); ++i) {
    if (Launch(p, algos[i], call, stream) != lt::kSuccess) continue;  // warm-up; skip failures
    st = d.Check(d.EventRecord(e[0], stream), "cuEventRecord", where);
    bool ok = true;
    for (int r = 0; st.ok() && ok && r < 3; ++r) ok = Launch(p, algos[i], call, stream) == lt::kSuccess;
    if (st.ok()) st = d.Check(d.EventRecord(e[1], stream), "cuEventRecord", where);
    if (st.ok()) st = d.Check(d.StreamSynchronize(stream), "cuStreamSynchronize", where);
    float ms = 0;
    if (st.ok()) st = d.Check(d.EventElapsedTime(&ms, e[0], e[1]), "cuEventElapsedTime", where);
    if (st.ok() && ok && (!timed || ms < best_ms)) best = i, best_ms = ms, timed = true;
  }
  for (CUevent ev : e) {
    if (ev != nullptr) d.EventDestroy(ev);
  }
  if (!st.ok()) return st;
  return best;
}

absl::StatusOr<bool> CublasGemm::Run(const GemmCall& call, CUstream stream,
                                     const std::string& where) {
  absl::StatusOr<Problem*> p = Prepare(call, stream, where);
  if (!p.ok()) return p.status();
  if (!(*p)->has_algo) return false;
  if (call.bias != 0) {
    const void* bias = reinterpret_cast<const void*>(call.bias);
    if (absl::Status s = lt_->Check(
            lt_->MatmulDescSetAttribute((*p)->desc, lt::kDescBiasPointer, &bias, sizeof(bias)),
            "cublasLtMatmulDescSetAttribute(BIAS_POINTER)", where);
        !s.ok())
      return s;
  }
  if (absl::Status s = lt_->Check(Launch(**p, (*p)->algo, call, stream), "cublasLtMatmul", where);
      !s.ok()) {
    return s;
  }
  return true;
}

}  // namespace coil::cuda

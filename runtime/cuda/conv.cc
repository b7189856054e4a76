// cuDNN convolutions (see conv.h).
#include "runtime/cuda/conv.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"

namespace coil::cuda {
namespace {

int DnnType(proto::DType t) {
  switch (t) {
    case proto::FLOAT16: return dnn::kHalf;
    case proto::BFLOAT16: return dnn::kBfloat16;
    case proto::FLOAT64: return dnn::kDouble;
    default: return dnn::kFloat;
  }
}

// The largest power of two up to 16 dividing the address (cuDNN's tensor byte alignment).
int64_t AlignmentOf(CUdeviceptr p) {
  int64_t a = 16;
  while (a > 1 && p % a != 0) a /= 2;
  return a;
}

std::vector<int64_t> Packed(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

// The strides of logical [N, C, H, W] dims stored [N, H, W, C].
std::vector<int64_t> ChannelsLastStrides(const std::vector<int64_t>& d) {
  return {d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]};
}

// 1-D convolutions as 2-D ones of height 1: a dimension of 1 before the spatial one.
std::vector<int64_t> Lift(std::vector<int64_t> v, int64_t fill, bool shape) {
  if ((shape && v.size() == 3) || (!shape && v.size() == 1)) v.insert(v.end() - 1, fill);
  return v;
}

// Unique ids of the graph's tensors.
enum : int64_t { kX = 1, kW = 2, kY = 3, kBias = 4, kR = 5, kVirtual = 10 };

}  // namespace

struct CudnnConv::Problem {
  const Cudnn* dnn = nullptr;
  std::vector<dnn::Desc> descs;  // every descriptor the plan was built from, destroyed last
  dnn::Desc plan = nullptr;
  std::vector<int64_t> uids;  // the graph's real tensors: kX, kW, kY, then kBias / kR
  int64_t workspace = 0;
  std::string why_not;  // "" when `plan` is set
  ~Problem() {
    if (plan != nullptr) dnn->BackendDestroyDescriptor(plan);
    for (auto it = descs.rbegin(); it != descs.rend(); ++it) dnn->BackendDestroyDescriptor(*it);
  }
};

CudnnConv::CudnnConv(const Cudnn* dnn, dnn::Handle handle, CUdeviceptr workspace, size_t bytes,
                     bool tf32)
    : dnn_(dnn), handle_(handle), workspace_(workspace), workspace_bytes_(bytes),
      allow_tf32_(tf32) {}

CudnnConv::~CudnnConv() {
  problems_.clear();
  dnn_->Destroy(handle_);
}

absl::StatusOr<std::unique_ptr<CudnnConv>> CudnnConv::Create(const Cudnn* dnn, CUstream stream,
                                                             CUdeviceptr workspace,
                                                             size_t workspace_bytes,
                                                             bool allow_tf32) {
  dnn::Handle handle = nullptr;
  if (absl::Status s = dnn->Check(dnn->Create(&handle), "cudnnCreate", "the executable"); !s.ok())
    return s;
  if (absl::Status s = dnn->Check(dnn->SetStream(handle, reinterpret_cast<dnn::Stream>(stream)),
                                  "cudnnSetStream", "the executable");
      !s.ok()) {
    dnn->Destroy(handle);
    return s;
  }
  return std::unique_ptr<CudnnConv>(
      new CudnnConv(dnn, handle, workspace, workspace_bytes, allow_tf32));
}

std::string CudnnConv::Describe() const {
  return absl::StrCat("cuDNN ", dnn_->version, " (", dnn_->path, ")");
}

absl::StatusOr<CudnnConv::Problem*> CudnnConv::Prepare(const ConvCall& call,
                                                       const std::string& where) {
  std::vector<int64_t> key = {call.dtype, call.bias != 0, call.r != 0, call.relu,
                              call.x_nhwc, call.w_nhwc, call.y_nhwc,
                              AlignmentOf(call.x), AlignmentOf(call.w), AlignmentOf(call.y),
                              AlignmentOf(call.bias), AlignmentOf(call.r)};
  for (const auto* v : {&call.x_shape, &call.w_shape, &call.y_shape, &call.stride, &call.padding,
                        &call.dilation}) {
    key.push_back(-1);
    key.insert(key.end(), v->begin(), v->end());
  }
  auto it = problems_.find(key);
  if (it != problems_.end()) return it->second.get();
  auto p = std::make_unique<Problem>();
  p->dnn = dnn_;
  const bool f64 = call.dtype == proto::FLOAT64;
  const int type = DnnType(call.dtype);
  const int compute = f64 ? dnn::kDouble : dnn::kFloat;
  // Each step either works or says why: a refusal (NOT_SUPPORTED at a finalize) is not an
  // error, the caller runs the convolution another way.
  std::string why;
  auto ok = [&](dnn::Status s, const char* what) {
    if (s != dnn::kSuccess && why.empty()) why = std::string(dnn_->Check(s, what, where).message());
    return why.empty();
  };
  auto create = [&](int type_id) -> dnn::Desc {
    dnn::Desc d = nullptr;
    if (!ok(dnn_->BackendCreateDescriptor(type_id, &d), "cudnnBackendCreateDescriptor")) return nullptr;
    p->descs.push_back(d);
    return d;
  };
  auto set = [&](dnn::Desc d, int attr, int attr_type, int64_t n, const void* v) {
    return why.empty() && ok(dnn_->BackendSetAttribute(d, attr, attr_type, n, v),
                             "cudnnBackendSetAttribute");
  };
  auto finalize = [&](dnn::Desc d, const char* what) {
    return why.empty() && ok(dnn_->BackendFinalize(d), what);
  };
  const std::vector<int64_t> y_dims = Lift(call.y_shape, 1, true);
  auto tensor = [&](int64_t uid, const std::vector<int64_t>& dims, int dtype, bool is_virtual,
                    int64_t align, bool nhwc) -> dnn::Desc {
    dnn::Desc t = create(dnn::kTensorDescriptor);
    const std::vector<int64_t> strides =
        nhwc && dims.size() == 4 ? ChannelsLastStrides(dims) : Packed(dims);
    const bool v = is_virtual;
    set(t, dnn::kTensorDataType, dnn::kTypeDataType, 1, &dtype);
    set(t, dnn::kTensorDimensions, dnn::kTypeInt64, dims.size(), dims.data());
    set(t, dnn::kTensorStrides, dnn::kTypeInt64, strides.size(), strides.data());
    set(t, dnn::kTensorUniqueId, dnn::kTypeInt64, 1, &uid);
    set(t, dnn::kTensorByteAlignment, dnn::kTypeInt64, 1, &align);
    set(t, dnn::kTensorIsVirtual, dnn::kTypeBoolean, 1, &v);
    finalize(t, "cudnnBackendFinalize(tensor)");
    return t;
  };
  const bool epilogue = call.bias != 0 || call.r != 0 || call.relu;
  const bool ynhwc = call.y_nhwc;
  dnn::Desc x =
      tensor(kX, Lift(call.x_shape, 1, true), type, false, AlignmentOf(call.x), call.x_nhwc);
  dnn::Desc w =
      tensor(kW, Lift(call.w_shape, 1, true), type, false, AlignmentOf(call.w), call.w_nhwc);
  dnn::Desc y = tensor(kY, y_dims, type, false, AlignmentOf(call.y), ynhwc);
  p->uids = {kX, kW, kY};
  // The convolution.
  const std::vector<int64_t> stride = Lift(call.stride, 1, false),
                             pad = Lift(call.padding, 0, false),
                             dil = Lift(call.dilation, 1, false);
  const int64_t spatial = static_cast<int64_t>(stride.size());
  const int mode = dnn::kCrossCorrelation;
  dnn::Desc conv = create(dnn::kConvolutionDescriptor);
  set(conv, dnn::kConvolutionCompType, dnn::kTypeDataType, 1, &compute);
  set(conv, dnn::kConvolutionConvMode, dnn::kTypeConvolutionMode, 1, &mode);
  set(conv, dnn::kConvolutionSpatialDims, dnn::kTypeInt64, 1, &spatial);
  set(conv, dnn::kConvolutionDilations, dnn::kTypeInt64, spatial, dil.data());
  set(conv, dnn::kConvolutionFilterStrides, dnn::kTypeInt64, spatial, stride.data());
  set(conv, dnn::kConvolutionPrePaddings, dnn::kTypeInt64, spatial, pad.data());
  set(conv, dnn::kConvolutionPostPaddings, dnn::kTypeInt64, spatial, pad.data());
  finalize(conv, "cudnnBackendFinalize(convolution)");
  int64_t next_virtual = kVirtual;
  dnn::Desc conv_y = epilogue ? tensor(next_virtual++, y_dims, compute, true, 16, ynhwc) : y;
  std::vector<dnn::Desc> ops;
  dnn::Desc op = create(dnn::kOperationConvolutionForwardDescriptor);
  const float one32 = 1, zero32 = 0;
  const double one64 = 1, zero64 = 0;
  set(op, dnn::kOperationConvolutionForwardX, dnn::kTypeBackendDescriptor, 1, &x);
  set(op, dnn::kOperationConvolutionForwardW, dnn::kTypeBackendDescriptor, 1, &w);
  set(op, dnn::kOperationConvolutionForwardY, dnn::kTypeBackendDescriptor, 1, &conv_y);
  set(op, dnn::kOperationConvolutionForwardConvDesc, dnn::kTypeBackendDescriptor, 1, &conv);
  if (f64) {
    set(op, dnn::kOperationConvolutionForwardAlpha, dnn::kTypeDouble, 1, &one64);
    set(op, dnn::kOperationConvolutionForwardBeta, dnn::kTypeDouble, 1, &zero64);
  } else {
    set(op, dnn::kOperationConvolutionForwardAlpha, dnn::kTypeFloat, 1, &one32);
    set(op, dnn::kOperationConvolutionForwardBeta, dnn::kTypeFloat, 1, &zero32);
  }
  finalize(op, "cudnnBackendFinalize(convolution forward)");
  ops.push_back(op);
  // The epilogue: bias, residual, relu; the last node writes y.
  dnn::Desc cur = conv_y;
  int remaining = (call.bias != 0) + (call.r != 0) + (call.relu ? 1 : 0);
  auto pointwise = [&](int pw_mode, dnn::Desc b) {
    dnn::Desc pw = create(dnn::kPointwiseDescriptor);
    set(pw, dnn::kPointwiseMode, dnn::kTypePointwiseMode, 1, &pw_mode);
    set(pw, dnn::kPointwiseMathPrec, dnn::kTypeDataType, 1, &compute);
    finalize(pw, "cudnnBackendFinalize(pointwise)");
    dnn::Desc out =
        --remaining == 0 ? y : tensor(next_virtual++, y_dims, compute, true, 16, ynhwc);
    dnn::Desc pop = create(dnn::kOperationPointwiseDescriptor);
    set(pop, dnn::kOperationPointwisePwDescriptor, dnn::kTypeBackendDescriptor, 1, &pw);
    set(pop, dnn::kOperationPointwiseXDesc, dnn::kTypeBackendDescriptor, 1, &cur);
    if (b != nullptr) set(pop, dnn::kOperationPointwiseBDesc, dnn::kTypeBackendDescriptor, 1, &b);
    set(pop, dnn::kOperationPointwiseYDesc, dnn::kTypeBackendDescriptor, 1, &out);
    finalize(pop, "cudnnBackendFinalize(pointwise operation)");
    ops.push_back(pop);
    cur = out;
  };
  if (call.bias != 0) {
    std::vector<int64_t> dims(y_dims.size(), 1);
    dims[1] = y_dims[1];
    pointwise(dnn::kPointwiseAdd,
              tensor(kBias, dims, type, false, AlignmentOf(call.bias), false));
    p->uids.push_back(kBias);
  }
  if (call.r != 0) {
    pointwise(dnn::kPointwiseAdd, tensor(kR, y_dims, type, false, AlignmentOf(call.r), ynhwc));
    p->uids.push_back(kR);
  }
  if (call.relu) pointwise(dnn::kPointwiseReluFwd, nullptr);
  dnn::Desc graph = create(dnn::kOperationGraphDescriptor);
  set(graph, dnn::kOperationGraphOps, dnn::kTypeBackendDescriptor, ops.size(), ops.data());
  set(graph, dnn::kOperationGraphHandle, dnn::kTypeHandle, 1, &handle_);
  finalize(graph, "cudnnBackendFinalize(operation graph)");
  // Engine configs from the heuristics, mode A then the fallback list; the first that
  // finalizes as a plan within the workspace, without TF32 for f32 unless allowed.
  std::string refusals;
  for (int heur_mode : {dnn::kHeurModeA, dnn::kHeurModeFallback}) {
    if (!why.empty() || p->plan != nullptr) break;
    dnn::Desc heur = create(dnn::kEngineHeurDescriptor);
    set(heur, dnn::kEngineHeurOperationGraph, dnn::kTypeBackendDescriptor, 1, &graph);
    set(heur, dnn::kEngineHeurMode, dnn::kTypeHeurMode, 1, &heur_mode);
    if (!finalize(heur, "cudnnBackendFinalize(engine heuristics)")) break;
    int64_t count = 0;
    if (!ok(dnn_->BackendGetAttribute(heur, dnn::kEngineHeurResults, dnn::kTypeBackendDescriptor, 0,
                                      &count, nullptr),
            "cudnnBackendGetAttribute(heuristic results)")) {
      break;
    }
    std::vector<dnn::Desc> cfgs;
    for (int64_t i = 0; i < count && why.empty(); ++i) cfgs.push_back(create(dnn::kEngineCfgDescriptor));
    int64_t got = 0;
    if (!why.empty() || !ok(dnn_->BackendGetAttribute(heur, dnn::kEngineHeurResults,
                                                      dnn::kTypeBackendDescriptor, count, &got,
                                                      cfgs.data()),
                            "cudnnBackendGetAttribute(heuristic results)")) {
      break;
    }
    for (int64_t i = 0; i < got && p->plan == nullptr; ++i) {
      dnn::Desc engine = create(dnn::kEngineDescriptor);
      int64_t n = 0;
      int notes[16] = {0};
      int64_t n_notes = 0;
      if (!why.empty()) break;
      if (dnn_->BackendGetAttribute(cfgs[i], dnn::kEngineCfgEngine, dnn::kTypeBackendDescriptor, 1,
                                    &n, &engine) == dnn::kSuccess &&
          dnn_->BackendGetAttribute(engine, dnn::kEngineNumericalNote, dnn::kTypeNumericalNote, 16,
                                    &n_notes, notes) == dnn::kSuccess) {
        bool skip = false;
        for (int64_t j = 0; j < std::min<int64_t>(n_notes, 16); ++j) {
          const int note = notes[j];
          // TF32 (f32 on tensor cores), and transforms that lose accuracy (FFT, Winograd).
          const bool fast = call.dtype == proto::FLOAT32 &&
                            (note == dnn::kNoteTensorCore || note == dnn::kNoteDownConvertInputs);
          const bool transform = note == dnn::kNoteFft ||
                                 (note >= dnn::kNoteWinograd && note <= dnn::kNoteWinogradTile13x13);
          skip = skip || (!allow_tf32_ && (fast || transform)) ||
                 note == dnn::kNoteReducedPrecisionReduction;
        }
        if (skip) {
          absl::StrAppend(&refusals, refusals.empty() ? "" : "; ", "engine ", i, ": TF32, FFT, Winograd or reduced precision");
          continue;
        }
      }
      dnn::Desc plan = nullptr;
      if (dnn_->BackendCreateDescriptor(dnn::kExecutionPlanDescriptor, &plan) != dnn::kSuccess) continue;
      int64_t ws = 0;
      const bool built =
          dnn_->BackendSetAttribute(plan, dnn::kExecutionPlanHandle, dnn::kTypeHandle, 1, &handle_) == dnn::kSuccess &&
          dnn_->BackendSetAttribute(plan, dnn::kExecutionPlanEngineConfig, dnn::kTypeBackendDescriptor, 1, &cfgs[i]) == dnn::kSuccess &&
          dnn_->BackendFinalize(plan) == dnn::kSuccess &&
          dnn_->BackendGetAttribute(plan, dnn::kExecutionPlanWorkspaceSize, dnn::kTypeInt64, 1, &n, &ws) == dnn::kSuccess &&
          ws <= static_cast<int64_t>(workspace_bytes_);
      if (!built) {
        absl::StrAppend(&refusals, refusals.empty() ? "" : "; ", "engine ", i,
                        ws > static_cast<int64_t>(workspace_bytes_) ? ": workspace too large" : ": no plan");
        dnn_->BackendDestroyDescriptor(plan);
        continue;
      }
      p->plan = plan;
      p->workspace = ws;
    }
  }
  if (p->plan == nullptr) {
    p->why_not = !why.empty() ? why
                              : absl::StrCat(where, ": no cuDNN engine for this graph",
                                             refusals.empty() ? "" : " (", refusals,
                                             refusals.empty() ? "" : ")");
  }
  Problem* raw = p.get();
  problems_[key] = std::move(p);
  return raw;
}

absl::StatusOr<bool> CudnnConv::Run(const ConvCall& call, const std::string& where) {
  absl::StatusOr<Problem*> prepared = Prepare(call, where);
  if (!prepared.ok()) return prepared.status();
  Problem& p = **prepared;
  if (p.plan == nullptr) {
    why_not_ = p.why_not;
    return false;
  }
  std::vector<void*> ptrs;
  for (int64_t uid : p.uids) {
    const CUdeviceptr a = uid == kX ? call.x : uid == kW ? call.w : uid == kY ? call.y
                        : uid == kBias ? call.bias : call.r;
    ptrs.push_back(reinterpret_cast<void*>(a));
  }
  void* ws = reinterpret_cast<void*>(workspace_);
  dnn::Desc pack = nullptr;
  if (absl::Status s = dnn_->Check(dnn_->BackendCreateDescriptor(dnn::kVariantPackDescriptor, &pack),
                                   "cudnnBackendCreateDescriptor(variant pack)", where);
      !s.ok()) {
    return s;
  }
  struct Guard {
    const Cudnn* d;
    dnn::Desc p;
    ~Guard() { d->BackendDestroyDescriptor(p); }
  } guard{dnn_, pack};
  for (auto [attr, type, n, v] :
       {std::tuple<int, int, int64_t, const void*>{dnn::kVariantPackUniqueIds, dnn::kTypeInt64,
                                                   static_cast<int64_t>(p.uids.size()), p.uids.data()},
        {dnn::kVariantPackDataPointers, dnn::kTypeVoidPtr, static_cast<int64_t>(ptrs.size()), ptrs.data()},
        {dnn::kVariantPackWorkspace, dnn::kTypeVoidPtr, 1, &ws}}) {
    if (absl::Status s = dnn_->Check(dnn_->BackendSetAttribute(pack, attr, type, n, v),
                                     "cudnnBackendSetAttribute(variant pack)", where);
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = dnn_->Check(dnn_->BackendFinalize(pack), "cudnnBackendFinalize(variant pack)", where);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = dnn_->Check(dnn_->BackendExecute(handle_, p.plan, pack), "cudnnBackendExecute", where);
      !s.ok()) {
    return s;
  }
  return true;
}

}  // namespace coil::cuda

// The cuDNN plan of an EXTERN convolution kernel (see conv_plan.h).
#include "runtime/cuda/conv_plan.h"

#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/channels_last.h"
#include "runtime/cuda/epilogue_match.h"

namespace coil::cuda {
namespace {

bool SameShape(const proto::Buffer& a, const proto::Buffer& b) {
  if (a.shape_size() != b.shape_size()) return false;
  for (int i = 0; i < a.shape_size(); ++i) {
    if (a.shape(i).SerializeAsString() != b.shape(i).SerializeAsString()) return false;
  }
  return true;
}

bool IsHalf(proto::DType t) { return t == proto::FLOAT16 || t == proto::BFLOAT16; }

// The attribute `name` as `n` values (one value is repeated), or why not.
std::string Ints(const proto::Kernel& k, const char* name, int n, int64_t dflt, int64_t min,
                 std::vector<int64_t>& out) {
  out.assign(n, dflt);
  for (const proto::NamedAttribute& a : k.extern_attrs()) {
    if (a.name() != name) continue;
    if (a.value().value_case() == proto::Attribute::kI) {
      out.assign(n, a.value().i());
    } else if (a.value().value_case() == proto::Attribute::kInts &&
               (a.value().ints().values_size() == 1 || a.value().ints().values_size() == n)) {
      const auto& v = a.value().ints().values();
      for (int i = 0; i < n; ++i) out[i] = v.size() == 1 ? v[0] : v[i];
    } else {
      return absl::StrCat("attribute '", name, "' is not 1 or ", n, " constant integers");
    }
  }
  for (int64_t v : out) {
    if (v < min) return absl::StrCat("attribute '", name, "' has a value below ", min);
  }
  return "";
}

std::string Unsupported(const proto::Kernel& k,
                        const absl::flat_hash_map<int, const proto::Buffer*>& buffers,
                        ConvPlan& p) {
  const proto::Buffer &x = *buffers.at(p.x), &w = *buffers.at(p.w), &o = *buffers.at(p.out);
  if (w.shape_size() < 3 || w.shape_size() > 5) return "the weight is not 3-D, 4-D or 5-D";
  p.spatial = w.shape_size() - 2;
  if (x.shape_size() != w.shape_size() || o.shape_size() != w.shape_size())
    return "the input, weight and output ranks differ (an unbatched input)";
  for (const proto::NamedAttribute& a : k.extern_attrs()) {
    if (a.name() == "transposed" && a.value().b()) return "cuDNN runs transposed convolutions "
                                                          "as backward-data: not planned";
    if (a.name() == kChannelsLastAttr) {
      const auto& v = a.value().ints().values();
      if (a.value().value_case() != proto::Attribute::kInts || v.size() != 2 || v[0] < 0 ||
          v[0] > 1 || v[1] < 0 || v[1] > 1) {
        return absl::StrCat("attribute '", kChannelsLastAttr, "' is not two flags (0 or 1)");
      }
      p.x_nhwc = v[0] == 1;
      p.out_nhwc = v[1] == 1;
    }
    if (a.name() == "groups") {
      if (a.value().value_case() != proto::Attribute::kI || a.value().i() < 1)
        return "attribute 'groups' is not a positive integer";
      p.groups = a.value().i();
    }
  }
  if ((p.x_nhwc || p.out_nhwc) && p.spatial != 2) {
    return absl::StrCat("attribute '", kChannelsLastAttr, "' on a ", p.spatial,
                        "-D convolution (channels-last is for 2-D ones)");
  }
  if (std::string why = Ints(k, "stride", p.spatial, 1, 1, p.stride); !why.empty()) return why;
  if (std::string why = Ints(k, "padding", p.spatial, 0, 0, p.padding); !why.empty()) return why;
  if (std::string why = Ints(k, "dilation", p.spatial, 1, 1, p.dilation); !why.empty()) return why;
  if (x.dtype() != w.dtype() || x.dtype() != o.dtype()) return "operands of different dtypes";
  if (p.bias != 0 && buffers.at(p.bias)->dtype() != o.dtype())
    return "the bias has another dtype than the input";
  if (p.bias != 0 && buffers.at(p.bias)->shape_size() != 1) return "the bias is not 1-D";
  switch (o.dtype()) {
    case proto::FLOAT32:
    case proto::FLOAT16:
    case proto::BFLOAT16:
    case proto::FLOAT64:
      return "";
    default:
      return absl::StrCat("cuDNN has no ", proto::DType_Name(o.dtype()), " convolution");
  }
}

// Fills the fused epilogue of `p` from `k`'s loop, or returns why it cannot.
std::string FuseEpilogue(const proto::Schedule& s, const proto::Kernel& k,
                         const absl::flat_hash_map<int, const proto::Buffer*>& buffers,
                         ConvPlan& p) {
  if (k.loops_size() != 1 || k.loops(0).ranges_size() != 0)
    return "the epilogue is not one pointwise loop";
  const proto::Buffer& out = *buffers.at(p.out);
  const int rank = out.shape_size();
  if (k.ranges_size() != rank) return "the epilogue is not over the output";
  if (std::string why = OnlyReaderOf(s, k, p.out, "the convolution's result"); !why.empty()) {
    return why;
  }
  EpilogueStore match = FindEpilogueStore(k, rank, buffers);
  if (!match.why_not.empty()) return match.why_not;
  const proto::Expr* store = match.store;
  const absl::flat_hash_map<int, const proto::Expr*>& by_id = match.by_id;
  const proto::Buffer& d = *buffers.at(store->buffer());
  if (d.dtype() != p.dtype || !SameShape(d, out))
    return "the epilogue stores another dtype or shape";
  const bool half = IsHalf(p.dtype);
  proto::DType compute = half ? proto::FLOAT32 : p.dtype;
  absl::flat_hash_set<int> used = {store->id()};
  auto get = [&](int id) -> const proto::Expr* {
    auto it = by_id.find(id);
    if (it == by_id.end()) return nullptr;
    used.insert(id);
    return it->second;
  };
  const proto::Expr* v = get(store->args(0));
  // relu: maximum(v, 0), in f32 or (after the narrowing, which keeps signs and zeros) in f16/bf16.
  auto strip_relu = [&]() -> std::string {
    if (p.relu || v == nullptr || v->kind() != proto::Expr::APPLY || v->op() != "prims.maximum" ||
        v->args_size() != 2) {
      return "";
    }
    const proto::Expr* a = get(v->args(0));
    const proto::Expr* z = get(v->args(1));
    if (a != nullptr && a->kind() == proto::Expr::LITERAL) std::swap(a, z);
    if (z == nullptr || z->kind() != proto::Expr::LITERAL || z->literal() != 0.0)
      return "the epilogue's maximum is not a relu";
    p.relu = true;
    v = a;
    return "";
  };
  if (std::string why = strip_relu(); !why.empty()) return why;
  if (half && IsConvert(v)) {
    v = get(v->args(0));
    if (std::string why = strip_relu(); !why.empty()) return why;
  } else if (half) {
    // In f16/bf16 itself (inductor keeps a lone relu in the dtype): cuDNN's f32 result, rounded
    // once, differs only by that rounding.
    compute = p.dtype;
  }
  if (v == nullptr || v->dtype() != compute) return "the epilogue computes in another dtype";
  int acc = 0;
  const std::string why = WalkAddends(
      v, get, compute, p.dtype, half, buffers, "relu(convolution + residual)",
      [&](const proto::Expr& e, const proto::Buffer& b) -> std::string {
        if (!IsIdentityIndex(e, rank) || !SameShape(b, out)) {
          return absl::StrCat("the epilogue loads ", b.name(), " in a way cuDNN cannot add");
        }
        if (b.id() == p.out) {
          ++acc;
        } else if (p.r == 0) {
          p.r = b.id();
        } else {
          return "the epilogue adds more than one tensor";
        }
        return "";
      });
  if (!why.empty()) return why;
  if (acc != 1) return "the epilogue does not use the convolution's result exactly once";
  if (static_cast<int>(used.size()) != k.loops(0).body_size())
    return "the epilogue computes values it does not store";
  p.d = d.id();
  p.fused = true;
  return "";
}

}  // namespace

std::optional<ConvPlan> PlanConv(const proto::Schedule& s, const proto::Kernel& k) {
  if (k.kind() != proto::Kernel::EXTERN || k.extern_op() != "aten.convolution") return std::nullopt;
  ConvPlan p;
  absl::flat_hash_map<int, const proto::Buffer*> buffers;
  for (const proto::Buffer& b : s.buffers()) buffers[b.id()] = &b;
  const int n = k.extern_inputs_size();
  bool known = buffers.contains(k.extern_output());
  for (int in : k.extern_inputs()) known = known && buffers.contains(in);
  if ((n != 2 && n != 3) || !known) {
    p.unsupported = "malformed convolution kernel (operands)";
    return p;
  }
  p.x = k.extern_inputs(0);
  p.w = k.extern_inputs(1);
  p.bias = n == 3 ? k.extern_inputs(2) : 0;
  p.out = k.extern_output();
  p.dtype = buffers.at(p.out)->dtype();
  p.unsupported = Unsupported(k, buffers, p);
  if (!p.unsupported.empty() || k.loops_size() == 0) return p;
  p.not_fused = FuseEpilogue(s, k, buffers, p);
  if (!p.fused) p.d = p.r = 0, p.relu = false;
  return p;
}

}  // namespace coil::cuda

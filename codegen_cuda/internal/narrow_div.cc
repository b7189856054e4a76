// Narrow divisions by constants as multiplications (see narrow_div.h).
#include "codegen_cuda/internal/narrow_div.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

#include "runtime/half.h"

namespace coil::codegen_cuda_internal {
namespace {

bool Narrow(std::optional<DType> t) { return t == proto::BFLOAT16 || t == proto::FLOAT16; }

}  // namespace

std::optional<float> ExactNarrowReciprocal(DType in, DType out, float c) {
  if (!Narrow(in) || !Narrow(out) || !std::isfinite(c) || c == 0) return std::nullopt;
  // volatile: each f32 operation once, rounded, as the GPU computes it.
  volatile float vc = c;
  const float r = 1.0f / vc;
  if (!std::isnormal(r)) return std::nullopt;
  static std::mutex mu;
  static auto* memo = new std::map<std::tuple<int, int, uint32_t>, bool>;
  uint32_t bits;
  std::memcpy(&bits, &c, 4);
  const auto key = std::make_tuple(static_cast<int>(in), static_cast<int>(out), bits);
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = memo->find(key); it != memo->end()) {
      return it->second ? std::optional<float>(r) : std::nullopt;
    }
  }
  auto round = [&](float x) -> int {
    if (std::isnan(x)) return -1;  // any NaN: a NaN after either path
    return out == proto::BFLOAT16 ? FloatToBFloat16(x) : FloatToHalf(x);
  };
  bool exact = true;
  for (uint32_t h = 0; h < 0x10000u && exact; ++h) {
    const uint16_t b = static_cast<uint16_t>(h);
    volatile float a = in == proto::BFLOAT16 ? BFloat16ToFloat(b) : HalfToFloat(b);
    volatile float q = a / vc;
    volatile float m = a * r;
    exact = round(q) == round(m);
  }
  std::lock_guard<std::mutex> lock(mu);
  (*memo)[key] = exact;
  return exact ? std::optional<float>(r) : std::nullopt;
}

std::optional<float> NarrowDivisionReciprocal(
    const proto::Expr& e, const absl::flat_hash_map<int, const proto::Expr*>& defs,
    const absl::flat_hash_map<int, int>& uses, const absl::flat_hash_map<int, DType>& dtypes,
    const ScheduleInfo& info, const std::function<bool(const proto::Expr&)>& literal_load) {
  auto dt = [&](int id) -> std::optional<DType> {
    auto it = dtypes.find(id);
    return it == dtypes.end() ? std::nullopt : std::optional<DType>(it->second);
  };
  auto def = [&](int id) -> const proto::Expr* {
    auto it = defs.find(id);
    return it == defs.end() ? nullptr : it->second;
  };
  auto convert = [](const proto::Expr& x) {
    return x.kind() == proto::Expr::APPLY && x.op() == "prims.convert_element_type" &&
           x.args_size() == 1;
  };
  if (e.kind() != proto::Expr::APPLY || e.op() != "prims.div" || e.args_size() != 2 ||
      e.dtype() != proto::FLOAT32) {
    return std::nullopt;
  }
  const proto::Expr* a = def(e.args(0));
  const proto::Expr* c = def(e.args(1));
  auto u = uses.find(e.id());
  if (a == nullptr || c == nullptr || dt(e.args(0)) != proto::FLOAT32 ||
      dt(e.args(1)) != proto::FLOAT32 || u == uses.end() || u->second != 1) {
    return std::nullopt;
  }
  std::optional<DType> in;  // the dividend's narrow dtype
  if (convert(*a)) {
    in = dt(a->args(0));
  } else if (a->kind() == proto::Expr::LOAD && a->mask() == 0 && !literal_load(*a)) {
    auto b = info.buffers.find(a->buffer());
    if (b != info.buffers.end()) in = b->second->dtype();
  }
  // The divisor's f32 value: a literal or a scalar constant's load, perhaps converted (each
  // value rounded to its dtype, as value_source's LiteralSource and ConvertSource).
  auto in_dtype = [](float v, DType t) -> std::optional<float> {
    if (t == proto::FLOAT32) return v;
    if (t == proto::BFLOAT16) return BFloat16ToFloat(FloatToBFloat16(v));
    if (t == proto::FLOAT16) return HalfToFloat(FloatToHalf(v));
    return std::nullopt;
  };
  std::function<std::optional<float>(const proto::Expr*)> literal = [&](const proto::Expr* x) -> std::optional<float> {
    if (x == nullptr) return std::nullopt;
    if (x->kind() == proto::Expr::LITERAL) return in_dtype(static_cast<float>(x->literal()), x->dtype());
    if (convert(*x)) {
      std::optional<float> v = literal(def(x->args(0)));
      return v.has_value() ? in_dtype(*v, x->dtype()) : std::nullopt;
    }
    if (!literal_load(*x)) return std::nullopt;
    std::optional<float> v = in_dtype(static_cast<float>(info.scalar_constants.at(x->buffer()).d),
                                      info.buffers.at(x->buffer())->dtype());
    return v.has_value() ? in_dtype(*v, x->dtype()) : std::nullopt;
  };
  const std::optional<float> divisor = literal(c);
  std::optional<DType> out;  // the one reader's dtype
  for (const auto& [id, x] : defs) {
    if (convert(*x) && x->args(0) == e.id()) out = x->dtype();
  }
  if (!Narrow(in) || !Narrow(out) || !divisor.has_value()) return std::nullopt;
  return ExactNarrowReciprocal(*in, *out, *divisor);
}

}  // namespace coil::codegen_cuda_internal

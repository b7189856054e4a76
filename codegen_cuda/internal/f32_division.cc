// f32 divisions by constants (see f32_division.h).
#include "codegen_cuda/internal/f32_division.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>

#include "codegen_cuda/internal/narrow_div.h"

namespace coil::codegen_cuda_internal {
namespace {

constexpr float kMinDivisor = 0x1p-20f, kMaxDivisor = 0x1p20f;

// Whether q + (a - q c) r (both fused, q = RN(a r)) is RN(a / c) for every significand a in
// [1, 2): volatile keeps each f32 operation rounded once, as the GPU computes without ftz.
bool CorrectionRoundsEverySignificand(float c, float r) {
  volatile float vc = c, vr = r;
  for (uint32_t m = 0; m < (1u << 23); ++m) {
    const uint32_t bits = 0x3f800000u | m;
    float a;
    std::memcpy(&a, &bits, 4);
    volatile float want = a / vc;
    volatile float q = a * vr;
    volatile float e = std::fmaf(-q, vc, a);
    volatile float got = std::fmaf(e, vr, q);
    if (got != want) return false;
  }
  return true;
}

}  // namespace

std::optional<F32ConstantDivision> ExactF32Division(float c) {
  if (!std::isfinite(c) || c == 0) return std::nullopt;
  int exponent = 0;
  const float m = std::frexp(std::fabs(c), &exponent);
  volatile float vc = c;
  const float r = 1.0f / vc;
  if (m == 0.5f) {
    // A power of two: 1 / c is exact when it is normal.
    if (!std::isnormal(r)) return std::nullopt;
    return F32ConstantDivision{c, r, true};
  }
  if (std::fabs(c) < kMinDivisor || std::fabs(c) > kMaxDivisor) return std::nullopt;
  static std::mutex mu;
  static auto* memo = new std::map<uint32_t, bool>;
  uint32_t bits;
  std::memcpy(&bits, &c, 4);
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = memo->find(bits); it != memo->end()) {
      return it->second ? std::optional<F32ConstantDivision>({c, r, false}) : std::nullopt;
    }
  }
  const bool exact = CorrectionRoundsEverySignificand(c, r);
  std::lock_guard<std::mutex> lock(mu);
  (*memo)[bits] = exact;
  return exact ? std::optional<F32ConstantDivision>({c, r, false}) : std::nullopt;
}

std::optional<F32ConstantDivision> F32DivisionByConstant(
    const proto::Expr& e, const absl::flat_hash_map<int, const proto::Expr*>& defs,
    const absl::flat_hash_map<int, DType>& dtypes, const ScheduleInfo& info,
    const std::function<bool(const proto::Expr&)>& literal_load) {
  if (e.kind() != proto::Expr::APPLY || e.op() != "prims.div" || e.args_size() != 2 ||
      e.dtype() != proto::FLOAT32) {
    return std::nullopt;
  }
  for (int id : {e.args(0), e.args(1)}) {
    auto it = dtypes.find(id);
    if (it == dtypes.end() || it->second != proto::FLOAT32) return std::nullopt;
  }
  const std::optional<float> c = DivisorLiteral(e, defs, info, literal_load);
  return c.has_value() ? ExactF32Division(*c) : std::nullopt;
}

}  // namespace coil::codegen_cuda_internal

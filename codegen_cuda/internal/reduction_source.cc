// Row kernels' reductions as CUDA C++ text (see reduction_source.h).
#include "codegen_cuda/internal/reduction_source.h"

#include "absl/strings/str_cat.h"
#include "codegen_cuda/internal/value_source.h"

namespace coil::codegen_cuda_internal {

std::optional<Red> RedFromName(const std::string& s) {
  if (s == "sum") return Red::kSum;
  if (s == "prod") return Red::kProd;
  if (s == "max") return Red::kMax;
  if (s == "min") return Red::kMin;
  if (s == "argmax") return Red::kArgMax;
  if (s == "argmin") return Red::kArgMin;
  return std::nullopt;
}

DType AccumulatorDType(DType in) {
  if (!IsFloating(in)) return proto::INT64;
  return in == proto::FLOAT64 ? proto::FLOAT64 : proto::FLOAT32;
}

ReductionText AccumulateSource(Red op, int id, const std::string& arg, DType acc_dt) {
  const std::string type = RegType(acc_dt);
  const bool fp = acc_dt != proto::INT64;
  const std::string acc = absl::StrCat("a", id);
  const std::string x = absl::StrCat("(", type, ")", arg);
  const std::string inf = acc_dt == proto::FLOAT64 ? "coil_inf_d()" : "coil_inf_f()";
  ReductionText t;
  switch (op) {
    case Red::kSum:
      t.decl = absl::StrCat(type, " ", acc, " = 0;");
      t.update = absl::StrCat(acc, " = ",
                              fp ? absl::StrCat(acc, " + ", x)
                                 : absl::StrCat("coil_wadd(", acc, ", ", x, ")"),
                              ";");
      break;
    case Red::kProd:
      t.decl = absl::StrCat(type, " ", acc, " = 1;");
      t.update = absl::StrCat(acc, " = ",
                              fp ? absl::StrCat(acc, " * ", x)
                                 : absl::StrCat("coil_wmul(", acc, ", ", x, ")"),
                              ";");
      break;
    case Red::kMax:
    case Red::kMin: {
      const bool mx = op == Red::kMax;
      t.decl = absl::StrCat(type, " ", acc, " = ",
                            fp ? absl::StrCat(mx ? "-" : "", inf)
                               : (mx ? "(-0x7fffffffffffffffLL - 1)" : "0x7fffffffffffffffLL"),
                            ";");
      t.update = absl::StrCat(
          acc, " = ",
          fp ? absl::StrCat(mx ? "coil_nanmax(" : "coil_nanmin(", acc, ", ", x, ")")
             : absl::StrCat(mx ? "coil_max<i64>(" : "coil_min<i64>(", acc, ", ", x, ")"),
          ";");
      break;
    }
    case Red::kArgMax:
    case Red::kArgMin:
      t.decl = absl::StrCat(type, " ", acc, " = 0; i64 p", id, " = -1;");
      t.update = absl::StrCat("coil_arg_combine(", acc, ", p", id, ", ", x, ", (i64)coil_p, ",
                              op == Red::kArgMax ? "true" : "false", ");");
      break;
  }
  return t;
}

std::string CombineSource(Red op, int id, DType acc_dt, bool warp) {
  const std::string sh = acc_dt == proto::FLOAT32   ? "coil_shf"
                         : acc_dt == proto::FLOAT64 ? "coil_shd"
                                                    : "coil_shl";
  const bool fp = acc_dt != proto::INT64;
  const std::string red = warp ? "coil_warp_reduce(a" : "coil_block_reduce(a";
  const std::string tail = warp ? ")" : absl::StrCat(", ", sh, ")");
  switch (op) {
    case Red::kSum:
      return absl::StrCat(red, id, ", ", fp ? "CoilSum()" : "CoilSumI()", tail);
    case Red::kProd:
      return absl::StrCat(red, id, ", ", fp ? "CoilProd()" : "CoilProdI()", tail);
    case Red::kMax:
      return absl::StrCat(red, id, ", ", fp ? "CoilMaxF()" : "CoilMaxI()", tail);
    case Red::kMin:
      return absl::StrCat(red, id, ", ", fp ? "CoilMinF()" : "CoilMinI()", tail);
    case Red::kArgMax:
    case Red::kArgMin:
      break;
  }
  return absl::StrCat(warp ? "coil_warp_arg(a" : "coil_block_arg(a", id, ", p", id, ", ",
                      op == Red::kArgMax ? "true" : "false",
                      warp ? ")" : absl::StrCat(", ", sh, ", coil_shp)"));
}

}  // namespace coil::codegen_cuda_internal

// Row divisions (see row_division.h).
#include "codegen_cuda/internal/row_division.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace coil::codegen_cuda_internal {
namespace {

const proto::Expr* Def(int id, const absl::flat_hash_map<int, const proto::Expr*>& defs) {
  auto it = defs.find(id);
  return it == defs.end() ? nullptr : it->second;
}

bool InBody(int id, const proto::Loop& loop) {
  for (const proto::Expr& e : loop.body()) {
    if (e.id() == id) return true;
  }
  return false;
}

}  // namespace

bool IsRowDivision(const proto::Expr& e, const proto::Loop& loop,
                   const absl::flat_hash_map<int, const proto::Expr*>& defs) {
  if (e.kind() != proto::Expr::APPLY || e.op() != "prims.div" || e.args_size() != 2 ||
      e.dtype() != proto::FLOAT32) {
    return false;
  }
  const proto::Expr* x = Def(e.args(0), defs);
  const proto::Expr* s = Def(e.args(1), defs);
  return x != nullptr && s != nullptr && x->mask() == 0 && x->dtype() == proto::FLOAT32 &&
         InBody(x->id(), loop) && s->dtype() == proto::FLOAT32 && !InBody(s->id(), loop);
}

std::vector<std::pair<int, int>> RowDivisions(
    const proto::Loop& loop, const absl::flat_hash_map<int, const proto::Expr*>& defs) {
  std::vector<std::pair<int, int>> out;
  for (const proto::Expr& e : loop.body()) {
    if (IsRowDivision(e, loop, defs)) out.push_back({e.args(0), e.args(1)});
  }
  return out;
}

std::string RowDivisionCheck(const proto::Loop& l, int items, const RowCache& cache,
                             const absl::flat_hash_set<int>& vector_accesses,
                             const absl::flat_hash_map<int, DType>& defined,
                             const ScheduleInfo& info,
                             const absl::flat_hash_map<int, const proto::Expr*>& defs) {
  if (items < 2 || (cache.iterations > 0 && !cache.exact)) return "";
  std::vector<std::string> checks;
  for (const auto& [x, s] : RowDivisions(l, defs)) {
    const bool slot = cache.Reads(x) && !cache.Raw(x);
    const bool vector = vector_accesses.contains(x) && !cache.Reads(x) &&
                        info.buffers.at(defs.at(x)->buffer())->dtype() == proto::FLOAT32;
    if ((!slot && !vector) || !defined.contains(s)) return "";
    for (int u = 0; u < items; ++u) {
      checks.push_back(absl::StrCat(
          "coil_div_row_ok(", vector ? absl::StrCat("coil_v", x, "[", u, "]") : cache.Slot(x, u),
          ", e", s, ")"));
    }
  }
  return absl::StrJoin(checks, " &\n          ");
}

}  // namespace coil::codegen_cuda_internal

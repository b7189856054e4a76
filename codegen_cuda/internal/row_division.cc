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

}  // namespace

RowDivisions PlanRowDivisions(const proto::Loop& l, int items, const RowCache& cache,
                              const absl::flat_hash_set<int>& vector_accesses,
                              const absl::flat_hash_map<int, DType>& defined,
                              const ScheduleInfo& info,
                              const absl::flat_hash_map<int, const proto::Expr*>& defs) {
  if (items < 2 || (cache.iterations > 0 && !cache.exact)) return {};
  // Per expression of the Loop, the slots the Loop fills before it (a load's, a value's or a
  // forwarded store's): a dividend read from one of them is not in it yet when the check runs,
  // before the items.
  absl::flat_hash_map<int, absl::flat_hash_set<int>> filled_before;
  absl::flat_hash_set<int> filled;
  for (const proto::Expr& e : l.body()) {
    filled_before[e.id()] = filled;
    if (auto it = cache.slot_of.find(e.id()); it != cache.slot_of.end() && cache.fills.contains(e.id())) {
      filled.insert(it->second);
    }
    if (auto it = cache.store_fills.find(e.id()); it != cache.store_fills.end()) {
      filled.insert(it->second);
    }
  }
  std::vector<std::string> checks;
  RowDivisions out;
  for (const proto::Expr& d : l.body()) {
    // Not emitted as a division here: skipped, or read from its slot.
    if (!IsRowDivision(d, l, defs) || cache.dead.contains(d.id()) || cache.Reads(d.id())) continue;
    const int x = d.args(0), divisor = d.args(1);
    if (cache.dead.contains(x) || !defined.contains(divisor)) return {};
    const bool slot = cache.Reads(x) && !cache.Raw(x) &&
                      !filled_before.at(x).contains(cache.slot_of.at(x));
    const bool vector = vector_accesses.contains(x) && !cache.slot_of.contains(x) &&
                        defs.at(x)->kind() == proto::Expr::LOAD &&
                        info.buffers.at(defs.at(x)->buffer())->dtype() == proto::FLOAT32;
    if (!slot && !vector) return {};
    for (int u = 0; u < items; ++u) {
      checks.push_back(absl::StrCat(
          "coil_div_row_ok(", vector ? absl::StrCat("coil_v", x, "[", u, "]") : cache.Slot(x, u),
          ", e", divisor, ")"));
    }
    out.divisions.insert(d.id());
  }
  out.condition = absl::StrJoin(checks, " &\n          ");
  return out;
}

}  // namespace coil::codegen_cuda_internal

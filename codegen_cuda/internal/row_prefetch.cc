// Block-per-row kernels' L2 prefetch of later rows (row_prefetch.h).
#include "codegen_cuda/internal/row_prefetch.h"

#include <algorithm>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace coil::codegen_cuda_internal {
namespace {

bool IsSymbol(const proto::SymExpr& e, const std::string& name) {
  return e.kind() == proto::SymExpr::SYMBOL && e.name() == name;
}

bool SameExpr(const proto::SymExpr& a, const proto::SymExpr& b) {
  return a.SerializeAsString() == b.SerializeAsString();
}

}  // namespace

std::vector<int> RowPrefetchBuffers(const proto::Kernel& k, const ScheduleInfo& info) {
  if (!info.row_prefetch || k.ranges_size() == 0) return {};
  absl::flat_hash_set<int> stored;
  for (const proto::Loop& l : k.loops()) {
    for (const proto::Expr& e : l.body()) {
      if (e.kind() == proto::Expr::STORE) stored.insert(e.buffer());
    }
  }
  const int rank = k.ranges_size();
  std::vector<int> ids;
  for (const proto::Loop& l : k.loops()) {
    if (l.ranges_size() != 1) continue;
    for (const proto::Expr& e : l.body()) {
      if (e.kind() != proto::Expr::LOAD || e.mask() != 0 || stored.contains(e.buffer())) continue;
      auto it = info.buffers.find(e.buffer());
      if (it == info.buffers.end()) continue;
      const proto::Buffer& b = *it->second;
      if (b.shape_size() != rank + 1 || e.index_size() != rank + 1) continue;
      bool row = IsSymbol(e.index(rank), "_r0") && SameExpr(b.shape(rank), l.ranges(0));
      for (int d = 0; row && d < rank; ++d) {
        row = IsSymbol(e.index(d), absl::StrCat("_i", d)) && SameExpr(b.shape(d), k.ranges(d));
      }
      if (row && std::find(ids.begin(), ids.end(), e.buffer()) == ids.end()) {
        ids.push_back(e.buffer());
      }
    }
  }
  std::sort(ids.begin(), ids.end());
  if (ids.size() > static_cast<size_t>(kRowPrefetchMaxBuffers)) ids.resize(kRowPrefetchMaxBuffers);
  return ids;
}

std::string RowPrefetchSetup(const std::vector<PrefetchedRows>& rows) {
  if (rows.empty()) return "";
  std::string o, sum = "(i64)0";
  for (size_t j = 0; j < rows.size(); ++j) {
    absl::StrAppend(&o, "  const i64 coil_pf", j, " = (i64)(", rows[j].row_elements,
                    ") * (i64)sizeof(", rows[j].mem_type, ");\n");
    absl::StrAppend(&sum, " + coil_pf", j);
  }
  absl::StrAppend(&o, "  const i64 coil_pf_sum = ", sum, ";\n",
                  "  const i64 coil_pf_ahead = coil_pf_sum >= ",
                  kRowPrefetchBytesAhead, "LL ? (i64)1 : ", kRowPrefetchBytesAhead,
                  "LL / (coil_pf_sum > 0 ? coil_pf_sum : (i64)1);\n");
  return o;
}

std::string RowPrefetchIssue(const std::vector<PrefetchedRows>& rows) {
  if (rows.empty()) return "";
  std::string o = absl::StrCat("    if (threadIdx.x < ", rows.size(),
                               " && (i64)coil_row + coil_pf_ahead < (i64)coil_n) {\n");
  for (size_t j = 0; j < rows.size(); ++j) {
    absl::StrAppend(&o, "      if (threadIdx.x == ", j, ") coil_prefetch_row(b", rows[j].buffer,
                    ", (i64)coil_row + coil_pf_ahead, coil_pf", j, ");\n");
  }
  absl::StrAppend(&o, "    }\n");
  return o;
}

}  // namespace coil::codegen_cuda_internal

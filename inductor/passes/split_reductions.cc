// split_reductions (split_reductions.h): long reductions with few output rows as a partial
// kernel and a final one.
#include "inductor/passes/split_reductions.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace coil::inductor {
namespace {

struct Split {
  std::vector<int> reduces;  // the REDUCEs' ids in loops[0]
  std::vector<int> partials;  // their partial buffers
  int dim = 0;                // the loops[0] range split
  int64_t chunks = 0;         // S
};

std::optional<int64_t> ConstantProduct(const std::vector<SymExpr>& dims) {
  int64_t n = 1;
  for (const SymExpr& d : dims) {
    std::optional<int64_t> v = d.AsConstant();
    if (!v.has_value() || *v < 1) return std::nullopt;
    n *= *v;
  }
  return n;
}

// The split of `k`, or nullopt when it is not a candidate (split_reductions.h).
std::optional<Split> PlanSplit(const Kernel& k) {
  if (k.kind != proto::Kernel::REDUCTION || k.loops.size() != 2) return std::nullopt;
  const Loop& red = k.loops[0];
  const Loop& epilogue = k.loops[1];
  if (red.ranges.empty() || !epilogue.ranges.empty()) return std::nullopt;
  Split s;
  for (const Expr& e : red.body) {
    if (e.kind == proto::Expr::STORE) return std::nullopt;
    if (e.kind != proto::Expr::REDUCE) continue;
    if (e.op != "sum" && e.op != "prod" && e.op != "max" && e.op != "min") return std::nullopt;
    s.reduces.push_back(e.id);
  }
  if (s.reduces.empty()) return std::nullopt;
  const std::optional<int64_t> rows = ConstantProduct(k.ranges);
  const std::optional<int64_t> length = ConstantProduct(red.ranges);
  if (!rows.has_value() || !length.has_value()) return std::nullopt;
  if (*rows > kSplitMaxRows || *length < kSplitMinElements) return std::nullopt;
  const int64_t most = std::max<int64_t>(kSplitTargetRows / *rows, 1);
  for (size_t d = 0; d < red.ranges.size(); ++d) {
    const int64_t n = *red.ranges[d].AsConstant();
    for (int64_t c = std::min(n, most); c >= 2 && c > s.chunks; --c) {
      if (n % c == 0 && *length / c >= kSplitMinChunk) {
        s.dim = static_cast<int>(d);
        s.chunks = c;
        break;
      }
    }
  }
  if (s.chunks < 2) return std::nullopt;
  return s;
}

// Renames the references of `e` to expressions (args, mask) through `ids`.
void Remap(Expr& e, const absl::flat_hash_map<int, int>& ids) {
  for (int& a : e.args) {
    if (auto it = ids.find(a); it != ids.end()) a = it->second;
  }
  if (auto it = ids.find(e.mask); e.mask != 0 && it != ids.end()) e.mask = it->second;
}

// The partial kernel: rows x chunks outer indices (the new one last), each reducing one chunk
// of the split dimension into partial[rows..., chunk] (one partial buffer per REDUCE).
Kernel PartialKernel(const Kernel& k, const Split& s, int id) {
  Kernel a = k;
  a.id = id;
  a.name = absl::StrCat(k.name, "_partial");
  const int rank = static_cast<int>(k.ranges.size());
  a.ranges.push_back(s.chunks);
  Loop& red = a.loops[0];
  const int64_t chunk = *red.ranges[s.dim].AsConstant() / s.chunks;
  red.ranges[s.dim] = chunk;
  const absl::flat_hash_map<std::string, SymExpr> at = {
      {InnerVar(s.dim).ToString(), LoopVar(rank) * chunk + InnerVar(s.dim)}};
  for (Expr& e : red.body) {
    for (SymExpr& i : e.index) i = i.Substitute(at);
    if (e.kind == proto::Expr::INDEX || e.kind == proto::Expr::RANDOM) {
      e.value = e.value.Substitute(at);
    }
  }
  std::vector<SymExpr> index;
  for (int d = 0; d <= rank; ++d) index.push_back(LoopVar(d));
  a.loops[1] = Loop{};
  for (size_t r = 0; r < s.reduces.size(); ++r) a.Store(1, s.partials[r], index, s.reduces[r]);
  return a;
}

// The final kernel: the partials of each row reduced again, then the original epilogue.
Kernel FinalKernel(const Kernel& k, const Split& s) {
  Kernel b = k;
  const int rank = static_cast<int>(k.ranges.size());
  std::vector<SymExpr> index;
  for (int d = 0; d < rank; ++d) index.push_back(LoopVar(d));
  index.push_back(InnerVar(0));
  Loop red;
  red.ranges = {s.chunks};
  b.loops[0] = std::move(red);
  // Fresh ids above the original kernel's, so the epilogue keeps its own.
  int next = k.next_id();
  absl::flat_hash_map<int, int> ids;
  for (size_t r = 0; r < s.reduces.size(); ++r) {
    const Expr& reduce = k.Find(s.reduces[r]);
    Expr load;
    load.kind = proto::Expr::LOAD;
    load.id = next++;
    load.dtype = reduce.dtype;
    load.buffer = s.partials[r];
    load.index = index;
    Expr again;
    again.kind = proto::Expr::REDUCE;
    again.id = next++;
    again.dtype = reduce.dtype;
    again.op = reduce.op;  // sum of sums, max of maxima, ...
    again.args = {load.id};
    ids[reduce.id] = again.id;
    b.loops[0].body.push_back(std::move(load));
    b.loops[0].body.push_back(std::move(again));
  }
  for (Expr& e : b.loops[1].body) Remap(e, ids);
  return b;
}

}  // namespace

absl::StatusOr<bool> SplitReductions(Program& program) {
  bool changed = false;
  int next_kernel = 1;
  for (const Kernel& k : program.kernels) next_kernel = std::max(next_kernel, k.id + 1);
  std::vector<Kernel> kernels;
  kernels.reserve(program.kernels.size());
  for (Kernel& k : program.kernels) {
    std::optional<Split> s = PlanSplit(k);
    if (!s.has_value()) {
      kernels.push_back(std::move(k));
      continue;
    }
    for (size_t r = 0; r < s->reduces.size(); ++r) {
      Buffer partial;
      partial.name = absl::StrCat(k.name, "_partial", r == 0 ? "" : absl::StrCat(r));
      partial.kind = proto::Buffer::INTERMEDIATE;
      partial.dtype = k.Find(s->reduces[r]).dtype;
      partial.shape = k.ranges;
      partial.shape.push_back(s->chunks);
      s->partials.push_back(program.AddBuffer(std::move(partial)));
    }
    kernels.push_back(PartialKernel(k, *s, next_kernel++));
    kernels.push_back(FinalKernel(k, *s));
    changed = true;
  }
  program.kernels = std::move(kernels);
  return changed;
}

}  // namespace coil::inductor

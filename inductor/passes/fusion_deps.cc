// Fusion machinery: dependencies between kernels, merged program order, scoring, decisions.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "inductor/passes/fusion_util.h"
#include "ir/check.h"

namespace coil::inductor {

bool KernelAccess::Reads(int buffer) const {
  return std::binary_search(reads.begin(), reads.end(), buffer);
}

bool KernelAccess::Writes(int buffer) const {
  return std::binary_search(writes.begin(), writes.end(), buffer);
}

// [Note: horizontal write-after-read] b depends on a only because it overwrites, element for
// element, buffers that a reads: both POINTWISE with one range-less Loop over the same ranges,
// b reads and writes nothing a writes, and every LOAD of such a buffer in a and every STORE of
// it in b is unmasked at the identity index of a buffer shaped like the ranges. Merged with
// a's body first (ZipKernel), each element is still read before it is overwritten. (AdamW:
// the moments written in place after the parameter update read them; as one kernel the update
// moves 7 streams instead of 10.) Kernels between them that depend on a and feed b still
// forbid the merge (PairDeps::CanMerge).
bool OverwritesWhatAReadsInPlace(const Program& program, const Kernel& ka, const Kernel& kb,
                                 const KernelAccess& aa, const KernelAccess& ab) {
  if (ka.kind != proto::Kernel::POINTWISE || kb.kind != proto::Kernel::POINTWISE ||
      ka.loops.size() != 1 || kb.loops.size() != 1 || !ka.loops[0].ranges.empty() ||
      !kb.loops[0].ranges.empty() || ka.ranges != kb.ranges) {
    return false;
  }
  for (int r : ab.reads) {
    if (aa.Writes(r)) return false;
  }
  auto at_identity = [&](const Expr& e) {
    return e.index.size() == ka.ranges.size() && IsIdentityIndex(e.index);
  };
  bool any = false;
  for (int w : ab.writes) {
    if (aa.Writes(w)) return false;
    if (!aa.Reads(w)) continue;
    any = true;
    if (program.buffer(w).shape != ka.ranges) return false;
    for (const Expr& e : ka.loops[0].body) {
      if (e.kind == proto::Expr::LOAD && e.buffer == w && (e.mask != 0 || !at_identity(e))) {
        return false;
      }
    }
    for (const Expr& e : kb.loops[0].body) {
      if (e.kind == proto::Expr::STORE && e.buffer == w && !at_identity(e)) return false;
    }
  }
  return any;
}

std::vector<KernelAccess> ComputeAccesses(const Program& program) {
  std::vector<KernelAccess> out;
  out.reserve(program.kernels.size());
  for (const Kernel& k : program.kernels) out.push_back(KernelAccess::Of(k));
  return out;
}

KernelDeps KernelDeps::Compute(const Program& program) {
  const int n = static_cast<int>(program.kernels.size());
  return ComputeWindow(program, ComputeAccesses(program), 0, n - 1);
}

KernelDeps KernelDeps::ComputeWindow(const Program& program,
                                     const std::vector<KernelAccess>& accesses, int first,
                                     int last) {
  const int n = static_cast<int>(program.kernels.size());
  COIL_CHECK(accesses.size() == program.kernels.size())
      << accesses.size() << " accesses for " << n << " kernels";
  COIL_CHECK(n == 0 || (0 <= first && first <= last + 1 && last < n))
      << "window " << first << ".." << last << " of " << n << " kernels";
  KernelDeps deps;
  deps.n_ = n;
  deps.first_ = first;
  const int size = std::max(0, last - first + 1);
  const size_t words = (size + 63) / 64;
  deps.before_.assign(size, std::vector<uint64_t>(words, 0));
  // Kernels outside the window are left out: a dependency between two window kernels never
  // runs through them (every path between them stays between them in program order).
  absl::flat_hash_map<int, int> last_writer;           // window-relative
  absl::flat_hash_map<int, std::vector<int>> readers;  // since the last write
  std::vector<int> preds;
  for (int j = 0; j < size; ++j) {
    const KernelAccess& k = accesses[first + j];
    preds.clear();
    for (int b : k.reads) {
      auto it = last_writer.find(b);
      if (it != last_writer.end()) preds.push_back(it->second);
    }
    for (int b : k.writes) {
      auto it = last_writer.find(b);
      if (it != last_writer.end()) preds.push_back(it->second);
      auto r = readers.find(b);
      if (r != readers.end()) preds.insert(preds.end(), r->second.begin(), r->second.end());
    }
    std::vector<uint64_t>& bits = deps.before_[j];
    for (int p : preds) {
      if (p == j) continue;
      for (size_t w = 0; w < words; ++w) bits[w] |= deps.before_[p][w];
      bits[p / 64] |= uint64_t{1} << (p % 64);
    }
    for (int b : k.reads) readers[b].push_back(j);
    for (int b : k.writes) {
      last_writer[b] = j;
      readers[b].clear();
    }
  }
  return deps;
}

bool KernelDeps::DependsOn(int j, int i) const {
  const int size = static_cast<int>(before_.size());
  COIL_CHECK(j >= first_ && j < first_ + size && i >= first_ && i < first_ + size)
      << "kernel index " << j << ", " << i << " outside the window " << first_ << ".."
      << first_ + size - 1;
  const int jj = j - first_, ii = i - first_;
  return (before_[jj][ii / 64] >> (ii % 64)) & 1;
}

bool KernelDeps::CanMerge(int a, int b) const {
  COIL_CHECK(a < b) << a << " >= " << b;
  for (int m = a + 1; m < b; ++m) {
    if (DependsOn(m, a) && DependsOn(b, m)) return false;
  }
  return true;
}

std::vector<int> KernelDeps::MergedOrder(int a, int b) const {
  COIL_CHECK(CanMerge(a, b)) << "kernels " << a << " and " << b << " cannot merge";
  std::vector<int> order;
  for (int i = 0; i < a; ++i) order.push_back(i);
  std::vector<int> after;
  for (int m = a + 1; m < b; ++m) {
    // Kernels that feed b, or are independent of a, run before the merged kernel; kernels
    // that depend on a (and so do not feed b) run after it.
    if (!DependsOn(b, m) && DependsOn(m, a)) {
      after.push_back(m);
    } else {
      order.push_back(m);
    }
  }
  order.push_back(a);
  for (int m : after) order.push_back(m);
  for (int i = b + 1; i < n_; ++i) order.push_back(i);
  return order;
}

int MergeInto(Program& program, const KernelDeps& deps, int a, int b, Kernel merged,
              std::vector<KernelAccess>* accesses) {
  std::vector<int> order = deps.MergedOrder(a, b);
  if (accesses != nullptr) {
    COIL_CHECK(accesses->size() == program.kernels.size())
        << accesses->size() << " accesses for " << program.kernels.size() << " kernels";
    std::vector<KernelAccess> moved;
    moved.reserve(order.size());
    for (int i : order) {
      moved.push_back(i == a ? KernelAccess::Of(merged) : std::move((*accesses)[i]));
    }
    *accesses = std::move(moved);
  }
  std::vector<Kernel> kernels;
  kernels.reserve(order.size());
  int position = -1;
  for (int i : order) {
    if (i == a) position = static_cast<int>(kernels.size());
    kernels.push_back(i == a ? std::move(merged) : std::move(program.kernels[i]));
  }
  program.kernels = std::move(kernels);
  return position;
}

namespace {

// The value of a symbolic dimension at `program`'s hints (a symbol without one counts as 64, as
// in Program::EvaluateHint), or nullopt when it does not evaluate. A pure function of the
// dimension and the hints, asked for the same few dimensions by every fusion decision, so it is
// memoized per thread for the hints last asked about.
std::optional<int64_t> DimHint(const Program& program, const SymExpr& d) {
  struct Memo {
    std::vector<std::pair<std::string, int64_t>> hints;
    absl::flat_hash_map<std::string, int64_t> values;
    absl::flat_hash_map<SymExpr, std::optional<int64_t>> dims;
  };
  thread_local Memo memo;
  if (memo.hints != program.hints || memo.values.empty()) {
    memo.hints = program.hints;
    memo.values.clear();
    memo.dims.clear();
    for (const auto& [name, hint] : program.hints) memo.values[name] = hint;
  }
  auto it = memo.dims.find(d);
  if (it != memo.dims.end()) return it->second;
  for (const std::string& s : d.Symbols()) memo.values.emplace(s, 64);
  absl::StatusOr<int64_t> e = d.Evaluate(memo.values);
  std::optional<int64_t> v = e.ok() ? std::optional<int64_t>(*e) : std::nullopt;
  memo.dims.emplace(d, v);
  return v;
}

}  // namespace

// program.EvaluateHint(program.BytesMoved(k)), summed term by term: building the symbolic sum
// of every buffer's size costs more than the rest of a fusion decision.
int64_t BytesHint(const Program& program, const Kernel& k) {
  return BytesHint(program, KernelAccess::Of(k));
}

int64_t BytesHint(const Program& program, const KernelAccess& access) {
  int64_t total = 0;
  auto add = [&](int b) {
    const Buffer& buffer = program.buffer(b);
    int64_t bytes = ElementSize(buffer.dtype);
    for (const SymExpr& d : buffer.shape) {
      std::optional<int64_t> v = d.AsConstant();
      if (!v.has_value()) {
        v = DimHint(program, d);
        if (!v.has_value()) return false;
      }
      bytes *= *v;
    }
    total += bytes;
    return true;
  };
  // Each buffer once: the union of the two sorted lists.
  const std::vector<int>& r = access.reads;
  const std::vector<int>& w = access.writes;
  size_t i = 0, j = 0;
  while (i < r.size() || j < w.size()) {
    int b;
    if (j == w.size() || (i < r.size() && r[i] < w[j])) {
      b = r[i++];
    } else if (i == r.size() || w[j] < r[i]) {
      b = w[j++];
    } else {
      b = r[i++];
      ++j;
    }
    if (!add(b)) return 0;
  }
  return total;
}

void RecordDecision(Program& program, std::string pass, std::string kind,
                    std::vector<std::string> kernels, bool accepted, std::string reason,
                    int64_t bytes_saved_hint) {
  FusionDecision d;
  d.pass = std::move(pass);
  d.kind = std::move(kind);
  d.kernels = std::move(kernels);
  d.accepted = accepted;
  d.reason = std::move(reason);
  d.bytes_saved_hint = bytes_saved_hint;
  program.decisions.push_back(std::move(d));
}

}  // namespace coil::inductor

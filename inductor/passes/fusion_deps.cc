// Fusion machinery: dependencies between kernels, merged program order, scoring, decisions.
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "inductor/passes/fusion_util.h"
#include "ir/check.h"

namespace coil::inductor {

KernelDeps KernelDeps::Compute(const Program& program) {
  KernelDeps deps;
  const int n = static_cast<int>(program.kernels.size());
  const size_t words = (n + 63) / 64;
  deps.n_ = n;
  deps.before_.assign(n, std::vector<uint64_t>(words, 0));
  absl::flat_hash_map<int, int> last_writer;
  absl::flat_hash_map<int, std::vector<int>> readers;  // since the last write
  for (int j = 0; j < n; ++j) {
    const Kernel& k = program.kernels[j];
    std::vector<int> reads = k.Reads();
    std::vector<int> writes = k.Writes();
    std::vector<int> preds;
    for (int b : reads) {
      auto it = last_writer.find(b);
      if (it != last_writer.end()) preds.push_back(it->second);
    }
    for (int b : writes) {
      auto it = last_writer.find(b);
      if (it != last_writer.end()) preds.push_back(it->second);
      for (int r : readers[b]) preds.push_back(r);
    }
    std::vector<uint64_t>& bits = deps.before_[j];
    for (int p : preds) {
      if (p == j) continue;
      for (size_t w = 0; w < words; ++w) bits[w] |= deps.before_[p][w];
      bits[p / 64] |= uint64_t{1} << (p % 64);
    }
    for (int b : reads) readers[b].push_back(j);
    for (int b : writes) {
      last_writer[b] = j;
      readers[b].clear();
    }
  }
  return deps;
}

bool KernelDeps::DependsOn(int j, int i) const {
  COIL_CHECK(j >= 0 && j < n_ && i >= 0 && i < n_) << "kernel index " << j << ", " << i;
  return (before_[j][i / 64] >> (i % 64)) & 1;
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

void MergeInto(Program& program, const KernelDeps& deps, int a, int b, Kernel merged) {
  std::vector<int> order = deps.MergedOrder(a, b);
  std::vector<Kernel> kernels;
  kernels.reserve(order.size());
  for (int i : order) {
    kernels.push_back(i == a ? std::move(merged) : std::move(program.kernels[i]));
  }
  program.kernels = std::move(kernels);
}

int64_t BytesHint(const Program& program, const Kernel& k) {
  return program.EvaluateHint(program.BytesMoved(k));
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

// BufferAliasClasses: union-find over the buffers a kernel touches.
#include "codegen_cpu/internal/alias_classes.h"

#include "absl/container/flat_hash_set.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ir/sym_expr.h"

namespace coil::codegen_cpu_internal {
namespace {

// The constant value of a SymExpr proto, or nothing when it has symbols (or is malformed).
std::optional<int64_t> Constant(const proto::SymExpr& e) {
  absl::StatusOr<SymExpr> s = SymExpr::FromProto(e);
  if (!s.ok()) return std::nullopt;
  return s->AsConstant();
}

class UnionFind {
 public:
  explicit UnionFind(int n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int Find(int i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }
  void Union(int a, int b) { parent_[Find(a)] = Find(b); }

 private:
  std::vector<int> parent_;
};

}  // namespace

std::vector<std::vector<int>> BufferAliasClasses(const proto::Kernel& kernel,
                                                 const BufferMap& buffers) {
  std::set<int> ids;
  for (const proto::Loop& l : kernel.loops()) {
    for (const proto::Expr& e : l.body()) {
      if ((e.kind() == proto::Expr::LOAD || e.kind() == proto::Expr::STORE) &&
          buffers.contains(e.buffer())) {
        ids.insert(e.buffer());
      }
    }
  }
  const std::vector<int> list(ids.begin(), ids.end());
  const int n = static_cast<int>(list.size());
  UnionFind uf(n);
  bool all_one = false;
  // Key of each buffer's class before the overlap check: "inputs", "own <id>", "slot <root>".
  std::map<std::string, int> first_with_key;
  for (int i = 0; i < n; ++i) {
    const proto::Buffer& b = *buffers.at(list[i]);
    std::string key;
    switch (b.kind()) {
      case proto::Buffer::INPUT: key = "inputs"; break;
      case proto::Buffer::CONSTANT:
      case proto::Buffer::OUTPUT: key = absl::StrCat("own ", b.id()); break;
      case proto::Buffer::INTERMEDIATE: {
        // The slot's first owner, following reuses links (at most one step per buffer).
        int root = b.id();
        size_t steps = 0;
        for (;;) {
          auto it = buffers.find(root);
          if (it == buffers.end() || it->second->kind() != proto::Buffer::INTERMEDIATE ||
              ++steps > buffers.size()) {
            all_one = true;
            break;
          }
          if (it->second->reuses() == 0) break;
          root = it->second->reuses();
        }
        key = absl::StrCat("slot ", root);
        break;
      }
      default: all_one = true; break;
    }
    auto [it, inserted] = first_with_key.emplace(key, i);
    if (!inserted) uf.Union(i, it->second);
  }
  // Intermediates in different slots whose constant arena ranges overlap: the plan broke its
  // own rule; stay correct anyway.
  for (int i = 0; i < n; ++i) {
    const proto::Buffer& a = *buffers.at(list[i]);
    if (a.kind() != proto::Buffer::INTERMEDIATE) continue;
    for (int j = i + 1; j < n; ++j) {
      const proto::Buffer& b = *buffers.at(list[j]);
      if (b.kind() != proto::Buffer::INTERMEDIATE || uf.Find(i) == uf.Find(j)) continue;
      std::optional<int64_t> ao = Constant(a.arena_offset()), as = Constant(a.size_bytes());
      std::optional<int64_t> bo = Constant(b.arena_offset()), bs = Constant(b.size_bytes());
      if (!ao || !as || !bo || !bs) continue;
      if (*ao < *bo + *bs && *bo < *ao + *as && *as > 0 && *bs > 0) uf.Union(i, j);
    }
  }
  std::map<int, std::vector<int>> groups;  // root index -> ids
  for (int i = 0; i < n; ++i) groups[all_one ? 0 : uf.Find(i)].push_back(list[i]);
  std::vector<std::vector<int>> out;
  for (auto& [root, members] : groups) out.push_back(std::move(members));
  std::sort(out.begin(), out.end());
  return out;
}

int InPlaceOver(const proto::Buffer& buf, const BufferMap& buffers) {
  if (buf.kind() != proto::Buffer::INTERMEDIATE || !buf.in_place() || buf.reuses() == 0 ||
      buf.reuses() == buf.id()) {
    return 0;
  }
  auto it = buffers.find(buf.reuses());
  if (it == buffers.end() || it->second->kind() != proto::Buffer::INTERMEDIATE ||
      it->second->arena_offset().SerializeAsString() != buf.arena_offset().SerializeAsString()) {
    return 0;
  }
  return buf.reuses();
}

int InPlaceRoot(int id, const BufferMap& buffers) {
  absl::flat_hash_set<int> seen = {id};
  int at = id;
  for (;;) {
    auto it = buffers.find(at);
    if (it == buffers.end()) return at;
    const int over = InPlaceOver(*it->second, buffers);
    if (over == 0) return at;
    if (!seen.insert(over).second) return id;
    at = over;
  }
}

}  // namespace coil::codegen_cpu_internal

// StructuralHash (design in graph_hash.h).
#include "ir/graph_hash.h"

#include <algorithm>
#include <cstring>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/bulk_hash.h"
#include "ir/check.h"
#include "ir/op_registry.h"

namespace coil {
namespace {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ULL;
constexpr uint64_t kGolden2 = 0xD6E8FEB86659FD93ULL;

uint64_t Fmix(uint64_t k) { return HashFmix64(k); }

// A second, independent finalizer (splitmix64's) for the second lane.
uint64_t Fmix2(uint64_t k) {
  k ^= k >> 30;
  k *= 0xbf58476d1ce4e5b9ULL;
  k ^= k >> 27;
  k *= 0x94d049bb133111ebULL;
  k ^= k >> 31;
  return k;
}

uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// Absorbs 64-bit words in order into two independent 64-bit lanes (different constants,
// rotations and finalizers); each word is mixed with its position, so the encoding is
// order-sensitive. Strings and byte arrays are length-prefixed, so encodings never collide by
// concatenation. Every hashed record starts with a tag string naming its kind.
class Hasher {
 public:
  explicit Hasher(absl::string_view tag) { Str(tag); }

  Hasher& U64(uint64_t w) {
    ++count_;
    h_ = Rotl(h_ ^ Fmix(w ^ (count_ * kGolden)), 27) * kGolden + 0x52dce729ULL;
    g_ = Rotl(g_ ^ Fmix2(w + count_ * kGolden2), 31) * kGolden2 + 0x38495ab5ULL;
    return *this;
  }
  Hasher& H128(const Hash128& h) { return U64(h.lo).U64(h.hi); }
  // Dense data whose BulkHash128 is known: the same words as Bytes(s).
  Hasher& Digested(absl::string_view s, const Hash128& digest) { return U64(s.size()).H128(digest); }
  // Dense data (constants): its length, then its BulkHash128 (bulk_hash.h), ~10x faster than
  // absorbing it word by word.
  Hasher& Bytes(absl::string_view s) { return U64(s.size()).H128(BulkHash128(s)); }
  Hasher& I64(int64_t v) { return U64(static_cast<uint64_t>(v)); }
  Hasher& F64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    return U64(bits);
  }
  // Little-endian 8-byte words, the last one zero-padded.
  Hasher& Str(absl::string_view s) {
    U64(s.size());
    for (size_t i = 0; i < s.size(); i += 8) {
      uint64_t w = 0;
      for (size_t k = 0; k < 8 && i + k < s.size(); ++k) {
        w |= static_cast<uint64_t>(static_cast<unsigned char>(s[i + k])) << (8 * k);
      }
      U64(w);
    }
    return *this;
  }
  Hasher& Expr(const SymExpr& e) { return Str(e.ToString()); }
  Hasher& Type(const TensorType& t) {
    I64(t.dtype).I64(t.device.kind).I64(t.device.index).U64(t.shape.size());
    for (const SymExpr& d : t.shape) Expr(d);
    U64(t.strides.size());
    for (const SymExpr& s : t.strides) Expr(s);
    return *this;
  }
  Hasher& Attr(const Attribute& a) {
    U64(a.index());
    struct Visitor {
      Hasher& h;
      void operator()(int64_t v) { h.I64(v); }
      void operator()(double v) { h.F64(v); }
      void operator()(bool v) { h.U64(v ? 1 : 0); }
      void operator()(const std::string& v) { h.Str(v); }
      void operator()(const IntList& v) {
        h.U64(v.size());
        for (int64_t x : v) h.I64(x);
      }
      void operator()(const FloatList& v) {
        h.U64(v.size());
        for (double x : v) h.F64(x);
      }
      void operator()(DType v) { h.I64(v); }
      void operator()(const SymExpr& v) { h.Expr(v); }
      void operator()(const SymList& v) {
        h.U64(v.size());
        for (const SymExpr& e : v) h.Expr(e);
      }
    };
    std::visit(Visitor{*this}, a);
    return *this;
  }

  Hash128 Finish() const {
    return Hash128{Fmix(h_ ^ Fmix(count_)), Fmix2(g_ ^ Fmix2(count_ + kGolden2))};
  }

 private:
  uint64_t h_ = 0x636f696c68617368ULL;  // "coilhash"
  uint64_t g_ = 0x636f696c6c616e32ULL;  // "coillan2"
  uint64_t count_ = 0;
};

class GraphHasher {
 public:
  GraphHasher(const Graph& graph, const ConstantDigests* digests)
      : graph_(graph), digests_(digests) {
    for (size_t i = 0; i < graph.inputs().size(); ++i) {
      const Value* v = graph.inputs()[i];
      leaf_[v] = Hasher("input").U64(i).Type(v->type()).Finish();
    }
  }

  Hash128 Run() {
    Hasher h("graph");
    h.U64(graph_.inputs().size());
    for (const Value* v : graph_.inputs()) h.Type(v->type());
    h.U64(graph_.outputs().size());
    for (const Value* v : graph_.outputs()) h.H128(ValueHash(v));
    std::vector<SymbolInfo> symbols = graph_.symbols();
    std::sort(symbols.begin(), symbols.end(), [](const SymbolInfo& a, const SymbolInfo& b) {
      return std::tie(a.name, a.min, a.max, a.hint) < std::tie(b.name, b.min, b.max, b.hint);
    });
    h.U64(symbols.size());
    for (const SymbolInfo& s : symbols) {
      h.Str(s.name).I64(s.min).I64(s.max).I64(s.hint);
      // Only value symbols add to the hash: every other graph's hash is what it was.
      if (!s.value_of.empty()) h.Str("value_of").Str(s.value_of);
    }
    std::vector<std::pair<uint64_t, uint64_t>> guards;
    for (const GuardInfo& g : graph_.guards()) {
      Hash128 gh = Hasher("guard").I64(g.relation).Expr(g.lhs).Expr(g.rhs).Finish();
      guards.push_back({gh.lo, gh.hi});
    }
    std::sort(guards.begin(), guards.end());
    h.U64(guards.size());
    for (const auto& [lo, hi] : guards) h.U64(lo).U64(hi);
    // Writes into inputs (in-place ops, prims.copy_to) are effects even where no output
    // depends on them: in program order. Only graphs with such writes add to the hash.
    std::vector<const Node*> effects;
    for (const Node* n : graph_.nodes()) {
      const OpSchema* schema = OpRegistry::Global().Find(n->op());
      if (schema != nullptr && schema->mutated_input >= 0) effects.push_back(n);
    }
    if (!effects.empty()) {
      h.Str("effects").U64(effects.size());
      for (const Node* n : effects) h.H128(NodeHash(n));
    }
    return h.Finish();
  }

 private:
  Hash128 ValueHash(const Value* v) {
    if (const Node* n = v->producer()) {
      return Hasher("output").H128(NodeHash(n)).U64(v->output_index()).Finish();
    }
    auto it = leaf_.find(v);
    if (it != leaf_.end()) return it->second;
    COIL_CHECK(v->kind() == Value::Kind::kConstant) << "value %" << v->id() << " has no definer";
    const ConstantData& d = v->constant();
    Hash128 h = d.is_external() ? Hasher("external")
                                       .Type(v->type())
                                       .Str(d.external_path)
                                       .I64(d.external_offset)
                                       .I64(d.external_length)
                                       .Finish()
                                 : DenseHash(v);
    leaf_[v] = h;
    return h;
  }

  Hash128 DenseHash(const Value* v) {
    const std::string& raw = v->constant().raw;
    Hasher h("dense");
    h.Type(v->type());
    if (digests_ != nullptr) {
      if (auto it = digests_->find(&raw); it != digests_->end()) {
        return h.Digested(raw, it->second).Finish();
      }
    }
    return h.Bytes(raw).Finish();
  }

  // Post-order over the producers `root` depends on, without recursion (graphs can be deep).
  Hash128 NodeHash(const Node* root) {
    std::vector<std::pair<const Node*, bool>> stack = {{root, false}};
    while (!stack.empty()) {
      auto [n, expanded] = stack.back();
      if (nodes_.contains(n)) {
        stack.pop_back();
        continue;
      }
      if (!expanded) {
        COIL_CHECK(open_.insert(n).second) << "cycle through " << n->Describe();
        stack.back().second = true;
        for (const Value* in : n->inputs()) {
          const Node* p = in->producer();
          if (p != nullptr && !nodes_.contains(p)) stack.push_back({p, false});
        }
        continue;
      }
      Hasher h("node");
      h.Str(n->op()).U64(n->attrs().size());
      for (const auto& [name, value] : n->attrs()) h.Str(name).Attr(value);
      h.U64(n->num_inputs());
      for (const Value* in : n->inputs()) h.H128(ValueHash(in));
      h.U64(n->num_outputs());
      for (const Value* out : n->outputs()) h.Type(out->type());
      nodes_[n] = h.Finish();
      open_.erase(n);
      stack.pop_back();
    }
    return nodes_.at(root);
  }

  const Graph& graph_;
  const ConstantDigests* digests_;  // may be null
  absl::flat_hash_map<const Value*, Hash128> leaf_;  // inputs and constants
  absl::flat_hash_map<const Node*, Hash128> nodes_;
  absl::flat_hash_set<const Node*> open_;
};

}  // namespace

ConstantDigests DigestConstants(const Graph& graph) {
  ConstantDigests digests;
  for (const Value* c : graph.constants()) {
    if (!c->constant().is_external()) digests[&c->constant().raw] = BulkHash128(c->constant().raw);
  }
  return digests;
}

Hash128 StructuralHash128(const Graph& graph) { return GraphHasher(graph, nullptr).Run(); }

Hash128 StructuralHash128(const Graph& graph, const ConstantDigests& digests) {
  return GraphHasher(graph, &digests).Run();
}

uint64_t StructuralHash(const Graph& graph) { return StructuralHash128(graph).lo; }

std::string StructuralHashHex(const Graph& graph) {
  return absl::StrCat(absl::Hex(StructuralHash(graph), absl::kZeroPad16));
}

}  // namespace coil

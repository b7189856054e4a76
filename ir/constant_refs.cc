// ConstantStore, ReferenceKnownConstants, ResolveConstantReferences.
#include "ir/constant_refs.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "ir/dtype.h"

namespace coil {
namespace {

// The byte count a constant of this static type holds; -1 when not static.
int64_t StaticBytes(const proto::TensorType& t) {
  int64_t n = ElementSize(static_cast<DType>(t.dtype()));
  if (n <= 0) return -1;
  for (const proto::SymExpr& d : t.shape()) {
    if (d.kind() != proto::SymExpr::CONST || d.value() < 0) return -1;
    if (__builtin_mul_overflow(n, d.value(), &n)) return -1;
  }
  return n;
}

}  // namespace

ConstantStore::Key ConstantStore::KeyOf(const std::string& bytes) {
  const Hash128 h = BulkHash128(bytes);
  return Key{h.lo, h.hi, static_cast<int64_t>(bytes.size())};
}

void ConstantStore::AddBytes(const std::string& bytes) {
  // Never written through: only movable entries (AddGraphToMove) are.
  Held held{const_cast<std::string*>(&bytes), false};
  auto [it, added] = by_key_.emplace(KeyOf(bytes), held);
  if (!added && it->second.bytes == nullptr) it->second = held;
}

void ConstantStore::AddGraphToMove(Graph& graph) {
  for (Value* c : graph.constants()) {
    ConstantData& d = c->mutable_constant();
    if (d.is_external()) continue;
    auto [it, added] = by_key_.emplace(KeyOf(d.raw), Held{&d.raw, true});
    if (!added && it->second.bytes == nullptr) it->second = Held{&d.raw, true};
  }
}

void ConstantStore::AddDigest(const std::string& bytes) {
  by_key_.emplace(KeyOf(bytes), Held{nullptr, false});
}

void ConstantStore::AddDigests(const ConstantDigests& digests) {
  for (const auto& [bytes, h] : digests) {
    by_key_.emplace(Key{h.lo, h.hi, static_cast<int64_t>(bytes->size())}, Held{nullptr, false});
  }
}

void ConstantStore::AddGraph(const Graph& graph) {
  for (const Value* c : graph.constants()) {
    if (!c->constant().is_external()) AddBytes(c->constant().raw);
  }
}

void ConstantStore::AddGraph(const proto::Graph& graph) {
  for (const proto::Constant& c : graph.constants()) {
    if (c.data_case() == proto::Constant::kRaw) AddBytes(c.raw());
  }
}

ConstantStore::Held* ConstantStore::FindHeld(const proto::ConstantRef& ref) {
  if (ref.hash().size() != 16) return nullptr;
  Key k;
  std::memcpy(&k.lo, ref.hash().data(), 8);
  std::memcpy(&k.hi, ref.hash().data() + 8, 8);
  k.length = ref.length();
  auto it = by_key_.find(k);
  return it == by_key_.end() ? nullptr : &it->second;
}

const std::string* ConstantStore::Find(const proto::ConstantRef& ref) const {
  Held* held = const_cast<ConstantStore*>(this)->FindHeld(ref);
  return held == nullptr ? nullptr : held->bytes;
}

bool ConstantStore::Holds(const std::string& bytes) const {
  return by_key_.contains(KeyOf(bytes));
}

proto::ConstantRef RefOf(const std::string& bytes) {
  const Hash128 h = BulkHash128(bytes);
  char hash[16];
  std::memcpy(hash, &h.lo, 8);
  std::memcpy(hash + 8, &h.hi, 8);
  proto::ConstantRef ref;
  ref.set_hash(std::string(hash, 16));
  ref.set_length(static_cast<int64_t>(bytes.size()));
  return ref;
}

std::vector<DetachedConstant> DetachKnownConstants(proto::Graph& graph, const ConstantStore& known,
                                                   int64_t min_bytes) {
  std::vector<DetachedConstant> detached;
  for (proto::Constant& c : *graph.mutable_constants()) {
    if (c.data_case() != proto::Constant::kRaw) continue;
    if (static_cast<int64_t>(c.raw().size()) < min_bytes || !known.Holds(c.raw())) continue;
    std::string bytes = std::move(*c.mutable_raw());
    *c.mutable_by_reference() = RefOf(bytes);  // clears raw (one oneof)
    detached.push_back(DetachedConstant{&c, std::move(bytes)});
  }
  return detached;
}

void ReattachConstants(std::vector<DetachedConstant>& detached) {
  for (DetachedConstant& d : detached) *d.constant->mutable_raw() = std::move(d.bytes);
  detached.clear();
}

int64_t ReferenceKnownConstants(proto::Graph& graph, const ConstantStore& known,
                                int64_t min_bytes) {
  int64_t dropped = 0;
  for (const DetachedConstant& d : DetachKnownConstants(graph, known, min_bytes)) {
    dropped += static_cast<int64_t>(d.bytes.size());
  }
  return dropped;
}

absl::Status ResolveConstantReferences(proto::Graph& graph, ConstantStore& store) {
  // Every reference is checked before any bytes move, so an error changes nothing.
  for (proto::Constant& c : *graph.mutable_constants()) {
    if (c.data_case() != proto::Constant::kByReference) continue;
    ConstantStore::Held* held = store.FindHeld(c.by_reference());
    const std::string where = absl::StrCat("constant %", c.value().id(),
                                           c.value().name().empty() ? "" : " \"",
                                           c.value().name(), c.value().name().empty() ? "" : "\"");
    if (held == nullptr || held->bytes == nullptr) {
      return absl::DataLossError(absl::StrCat(where, " is stored by reference (",
                                              c.by_reference().length(),
                                              " bytes) and no graph at hand holds its bytes"));
    }
    const int64_t want = StaticBytes(c.value().type());
    if (want != static_cast<int64_t>(held->bytes->size())) {
      return absl::DataLossError(absl::StrCat(where, " refers to ", held->bytes->size(),
                                              " bytes; its type needs ", want));
    }
  }
  for (proto::Constant& c : *graph.mutable_constants()) {
    if (c.data_case() != proto::Constant::kByReference) continue;
    ConstantStore::Held* held = store.FindHeld(c.by_reference());
    if (held->movable) {
      // The first reference takes the bytes; later ones copy them from here.
      std::string* origin = held->bytes;
      c.set_raw(std::move(*origin));
      *held = ConstantStore::Held{c.mutable_raw(), false, origin};
    } else {
      c.set_raw(*held->bytes);
    }
  }
  return absl::OkStatus();
}

void ConstantStore::ReturnMoved() {
  for (auto& [key, held] : by_key_) {
    if (held.origin == nullptr) continue;
    *held.origin = std::move(*held.bytes);
    held = Held{held.origin, true, nullptr};
  }
}

bool HasConstantReferences(const proto::Graph& graph) {
  for (const proto::Constant& c : graph.constants()) {
    if (c.data_case() == proto::Constant::kByReference) return true;
  }
  return false;
}

}  // namespace coil

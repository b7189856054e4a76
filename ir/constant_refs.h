// Constants stored once: a graph protobuf whose dense constants are already held elsewhere
// (an earlier stage's artifact in a CompileReport, the graph a compile-cache entry was compiled
// from) keeps only a ConstantRef (content hash + length) for them, and gets the bytes back from
// a ConstantStore of the holder.
//
//   ConstantStore weights;
//   weights.AddGraph(input_graph);                      // bytes stay where they are
//   int n = ReferenceKnownConstants(module_graph, weights);   // store: raw -> by_reference
//   absl::Status s = ResolveConstantReferences(module_graph, weights);  // load: back to raw
//
// Content is named by BulkHash128 (ir/bulk_hash.h) plus the length: the same trust the compile
// cache's keys place in it (not a cryptographic hash). A resolved constant's byte count is
// checked against its type.
#ifndef COIL_IR_CONSTANT_REFS_H_
#define COIL_IR_CONSTANT_REFS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "ir/bulk_hash.h"
#include "ir/graph.h"
#include "ir/graph_hash.h"
#include "ir/proto/graph.pb.h"

namespace coil {

// Dense constant bytes by content. Holds pointers: the graphs added must outlive the store and
// not change.
class ConstantStore {
 public:
  void AddBytes(const std::string& bytes);
  // Remembers only the content of `bytes` (Holds, not Find): for a graph about to change.
  void AddDigest(const std::string& bytes);
  // Remembers the content of every constant in `digests` (DigestConstants, ir/graph_hash.h):
  // no bytes are hashed again.
  void AddDigests(const ConstantDigests& digests);
  void AddGraph(const Graph& graph);
  void AddGraph(const proto::Graph& graph);
  // Lends `graph`'s constant bytes: resolving moves each into the first reference to it (later
  // references copy it from there). For a graph that is dropped afterwards (its constants are
  // left empty): a compile-cache hit on the graph being compiled.
  void AddGraphToMove(Graph& graph);
  // Moves lent bytes that resolving took back into their graph (the resolved proto must still
  // exist): after a resolved module turned out unusable, the graph is whole again.
  void ReturnMoved();
  // The bytes `ref` names, or null (also for digests).
  const std::string* Find(const proto::ConstantRef& ref) const;
  // Whether bytes equal to `bytes` are held (hashes `bytes`).
  bool Holds(const std::string& bytes) const;
  size_t size() const { return by_key_.size(); }

 private:
  struct Key {
    uint64_t lo, hi;
    int64_t length;
    bool operator==(const Key& o) const { return lo == o.lo && hi == o.hi && length == o.length; }
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.lo, k.hi, k.length);
    }
  };
  friend absl::Status ResolveConstantReferences(proto::Graph& graph, ConstantStore& store);
  struct Held {
    std::string* bytes;  // null for digests
    bool movable;
    std::string* origin = nullptr;  // where moved bytes came from (ReturnMoved)
  };
  static Key KeyOf(const std::string& bytes);
  Held* FindHeld(const proto::ConstantRef& ref);
  absl::flat_hash_map<Key, Held> by_key_;
};

// The reference naming `bytes`.
proto::ConstantRef RefOf(const std::string& bytes);

// Replaces the raw bytes of every constant of `graph` that holds at least `min_bytes` and whose
// bytes `known` holds by a ConstantRef. Returns how many bytes were dropped.
int64_t ReferenceKnownConstants(proto::Graph& graph, const ConstantStore& known,
                                int64_t min_bytes = 1024);

// A constant whose bytes were lent out by DetachKnownConstants.
struct DetachedConstant {
  proto::Constant* constant;
  std::string bytes;
};

// As ReferenceKnownConstants, but the bytes are moved out (not freed), so that
// ReattachConstants can put them back without a copy: for writing a graph without its weights
// while keeping it whole in memory.
std::vector<DetachedConstant> DetachKnownConstants(proto::Graph& graph, const ConstantStore& known,
                                                   int64_t min_bytes = 1024);
void ReattachConstants(std::vector<DetachedConstant>& detached);

// Puts the bytes back into every by_reference constant of `graph` (moving lent ones, see
// AddGraphToMove). Errors: a reference the store does not hold, or bytes whose count does not
// fit the constant's type (DataLoss naming the constant); on error nothing has changed.
absl::Status ResolveConstantReferences(proto::Graph& graph, ConstantStore& store);

// Whether `graph` has constants stored by reference.
bool HasConstantReferences(const proto::Graph& graph);

}  // namespace coil

#endif  // COIL_IR_CONSTANT_REFS_H_

// StructuralHash: a fingerprint of what a graph computes, for caches and deduplication.
//
//   Hash128 k = StructuralHash128(graph);         // compile-cache keys (tools/driver/driver.h)
//   uint64_t h = StructuralHash(graph);           // == StructuralHash128(graph).lo
//   std::string key = StructuralHashHex(graph);   // "3f2a...", 16 lowercase hex digits
//
// Every record is absorbed by two independent 64-bit lanes (different constants, rotations and
// finalizers) and every child hash enters its parent with both halves, so the 128-bit value is
// not two copies of one 64-bit collision. Dense constant bytes enter as their length and
// BulkHash128 (ir/bulk_hash.h, ~10 GB/s), so hashing resnet18's 46 MB of weights takes a few
// milliseconds.
//
// History of deliberate value changes (graph_hash_test.cc pins one graph):
//   2: 128-bit (second lane), dense constants through BulkHash128.
//   1: the first 64-bit version.
//
// The hash is stable across runs, machines and builds: it is computed by coil's own mixing
// function over a canonical little-endian encoding (never absl::Hash or std::hash, which are
// seeded or implementation-defined). A change to the hash function or encoding is a format
// change; graph_hash_test.cc pins the value of one graph so it cannot happen by accident.
//
// What it covers (Merkle-style, from the graph outputs backwards):
//   graph input   H("input", position, type)
//   constant      H("dense", type, bytes) or H("external", type, path, offset, length)
//   node output   H(node, output index), where
//   node          H(op, attributes sorted by name with kind and value, input hashes in order,
//                   output types in order)
//   graph         H(input types in order, output hashes in order, symbols sorted by name with
//                   min/max/hint, guard hashes sorted (relation, lhs, rhs), and, only in graphs
//                   that write into inputs, the hashes of the writing nodes in program order)
// Types hash dtype, device, and the canonical text of every dimension and stride; floats
// hash their bit patterns.
//
// What it ignores: value ids, value/node/graph names, source locations, guard reasons, the
// order of independent nodes and of constants, and dead nodes and constants (those no output
// depends on and that write into nothing: an in-place op on an input is an effect, and
// `x.add_(y); return y.clone()` must not share a key with `return y.clone()`). Like any Merkle hash of a DAG it cannot tell one shared node from two identical
// copies of it (relu(x) used twice vs. two relu(x) nodes): both compute the same thing.
#ifndef COIL_IR_GRAPH_HASH_H_
#define COIL_IR_GRAPH_HASH_H_

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "ir/bulk_hash.h"
#include "ir/graph.h"

namespace coil {

// Each dense constant's BulkHash128, by the address of its bytes (ConstantData::raw). A compile
// computes them once and shares them: the structural hash and the compile cache's constant
// references (ConstantStore::AddDigests) both need them, and hashing 650 MB of weights twice
// cost GPT-2 small's compile ~0.2 s.
using ConstantDigests = absl::flat_hash_map<const std::string*, Hash128>;
ConstantDigests DigestConstants(const Graph& graph);

Hash128 StructuralHash128(const Graph& graph);
// The same value, taking dense constants' digests from `digests` (DigestConstants of `graph`,
// unchanged since); a constant missing from it is hashed.
Hash128 StructuralHash128(const Graph& graph, const ConstantDigests& digests);
uint64_t StructuralHash(const Graph& graph);

// StructuralHash as 16 lowercase hex digits (most significant first).
std::string StructuralHashHex(const Graph& graph);

}  // namespace coil

#endif  // COIL_IR_GRAPH_HASH_H_

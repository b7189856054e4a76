// Small random graphs from fuzzer bytes, for differential fuzzing of a backend against the
// reference interpreter.
//
// The bytes decide everything: graph inputs (dtype, rank, sizes, an optional symbolic first
// dimension), a few ops drawn from the whole op registry with their tensor inputs taken from
// the values made so far and attributes either left at their defaults or drawn from small
// tables (dims, sizes, scalars, dtypes, symbols), the input data, and the symbol's value at run
// time (not always its hint, so dynamic shapes are exercised). Ops the registry rejects for
// the chosen inputs and attributes are skipped (GraphBuilder adds nothing on error), so every
// graph made here verifies by construction; values over a few thousand elements are dropped.
#ifndef COIL_TOOLS_FUZZ_RANDOM_GRAPH_H_
#define COIL_TOOLS_FUZZ_RANDOM_GRAPH_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/host_tensor.h"

namespace coil::fuzz {

// Reads fuzzer bytes; past the end every read is 0 (so every prefix is a valid input).
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  // Uniform-ish in [lo, hi] (lo <= hi).
  int64_t Range(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(Byte()) % (hi - lo + 1); }
  bool Bool() { return (Byte() & 1) != 0; }
  // Byte `i` of the input (0 past the end), without moving: for choices added later that must
  // not shift what the other reads see (so older corpus files keep their graphs and data).
  uint8_t At(size_t i) const { return i < size_ ? data_[i] : 0; }
  bool exhausted() const { return pos_ >= size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

struct RandomGraph {
  Graph graph{"fuzz"};
  std::vector<HostTensor> inputs;
  // The ops that made it into the graph, in order (for reports).
  std::vector<std::string> ops;
};

// Largest value (elements, at the run-time symbol value) the generator keeps.
inline constexpr int64_t kMaxRandomGraphElements = 4096;

// nullopt when the bytes made no op at all.
std::optional<RandomGraph> MakeRandomGraph(ByteReader& bytes);

}  // namespace coil::fuzz

#endif  // COIL_TOOLS_FUZZ_RANDOM_GRAPH_H_

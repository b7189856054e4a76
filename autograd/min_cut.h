// A minimum s-t cut by max-flow (Dinic's algorithm) over a small directed graph with int64
// capacities: what the partitioner (partition.h) solves over a joint graph.
//
//   MinCut cut(num_vertices);
//   cut.AddEdge(source, a, kInfiniteCapacity);
//   cut.AddEdge(a, b, 64);
//   int64_t flow = cut.Solve(source, sink);
//   bool on_source_side = cut.SourceSide()[a];
#ifndef COIL_AUTOGRAD_MIN_CUT_H_
#define COIL_AUTOGRAD_MIN_CUT_H_

#include <cstdint>
#include <vector>

namespace coil::autograd {

// Capacities at or above this are never cut (sums of them do not overflow int64).
inline constexpr int64_t kInfiniteCapacity = int64_t{1} << 60;

class MinCut {
 public:
  explicit MinCut(int num_vertices);
  void AddEdge(int from, int to, int64_t capacity);
  // The maximum flow (= the minimum cut's capacity); capped at kInfiniteCapacity.
  int64_t Solve(int source, int sink);
  // After Solve: the vertices reachable from the source in the residual graph.
  const std::vector<bool>& SourceSide() const { return source_side_; }

 private:
  struct Edge {
    int to;
    int64_t capacity;
  };
  bool Levels(int source, int sink);
  int64_t Push(int v, int sink, int64_t limit);

  std::vector<Edge> edges_;               // edge i ^ 1 is edge i's reverse
  std::vector<std::vector<int>> adjacent_;
  std::vector<int> level_, next_;
  std::vector<bool> source_side_;
};

}  // namespace coil::autograd

#endif  // COIL_AUTOGRAD_MIN_CUT_H_

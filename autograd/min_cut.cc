// Dinic's max-flow: BFS levels, then blocking flows by DFS along level-increasing edges.
#include "autograd/min_cut.h"

#include <algorithm>
#include <deque>

namespace coil::autograd {

MinCut::MinCut(int num_vertices) : adjacent_(num_vertices) {}

void MinCut::AddEdge(int from, int to, int64_t capacity) {
  capacity = std::min(capacity, kInfiniteCapacity);
  adjacent_[from].push_back(static_cast<int>(edges_.size()));
  edges_.push_back({to, capacity});
  adjacent_[to].push_back(static_cast<int>(edges_.size()));
  edges_.push_back({from, 0});
}

bool MinCut::Levels(int source, int sink) {
  level_.assign(adjacent_.size(), -1);
  std::deque<int> queue = {source};
  level_[source] = 0;
  while (!queue.empty()) {
    int v = queue.front();
    queue.pop_front();
    for (int e : adjacent_[v]) {
      if (edges_[e].capacity > 0 && level_[edges_[e].to] < 0) {
        level_[edges_[e].to] = level_[v] + 1;
        queue.push_back(edges_[e].to);
      }
    }
  }
  return level_[sink] >= 0;
}

int64_t MinCut::Push(int v, int sink, int64_t limit) {
  if (v == sink) return limit;
  for (int& i = next_[v]; i < static_cast<int>(adjacent_[v].size()); ++i) {
    int e = adjacent_[v][i];
    Edge& edge = edges_[e];
    if (edge.capacity <= 0 || level_[edge.to] != level_[v] + 1) continue;
    int64_t pushed = Push(edge.to, sink, std::min(limit, edge.capacity));
    if (pushed > 0) {
      edge.capacity -= pushed;
      edges_[e ^ 1].capacity += pushed;
      return pushed;
    }
  }
  return 0;
}

int64_t MinCut::Solve(int source, int sink) {
  int64_t flow = 0;
  while (flow < kInfiniteCapacity && Levels(source, sink)) {
    next_.assign(adjacent_.size(), 0);
    while (int64_t pushed = Push(source, sink, kInfiniteCapacity)) {
      flow += pushed;
      if (flow >= kInfiniteCapacity) break;
    }
  }
  Levels(source, sink);
  source_side_.assign(adjacent_.size(), false);
  for (size_t v = 0; v < adjacent_.size(); ++v) source_side_[v] = level_[v] >= 0;
  return std::min(flow, kInfiniteCapacity);
}

}  // namespace coil::autograd

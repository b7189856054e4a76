// CUDA graph capture and replay bookkeeping (see cuda_graphs.h).
#include "runtime/cuda/cuda_graphs.h"

#include "absl/strings/str_cat.h"

namespace coil::cuda {

CudaGraphs::CudaGraphs(const CudaDriver* driver, int max_graphs)
    : d_(driver), max_graphs_(max_graphs < 1 ? 1 : max_graphs) {}

CudaGraphs::~CudaGraphs() {
  for (auto& [key, e] : entries_) {
    if (e.exec != nullptr) d_->GraphExecDestroy(e.exec);
  }
}

int CudaGraphs::graphs() const {
  int n = 0;
  for (const auto& [key, e] : entries_) n += e.exec != nullptr ? 1 : 0;
  return n;
}

CudaGraphs::Step CudaGraphs::Next(const std::string& key) {
  if (entries_.size() > 1024 && !entries_.contains(key)) {
    // Many shapes came and went: forget the keys that hold no graph.
    absl::erase_if(entries_, [](const auto& kv) { return kv.second.exec == nullptr; });
  }
  Entry& e = entries_[key];
  e.used = ++clock_;
  if (e.exec != nullptr) return Step::kReplay;
  if (d_->StreamBeginCapture == nullptr || d_->StreamEndCapture == nullptr ||
      d_->GraphInstantiate == nullptr || d_->GraphLaunch == nullptr ||
      d_->GraphExecDestroy == nullptr || d_->GraphDestroy == nullptr) {
    e.cannot = "the CUDA driver lacks the graph API (cuStreamBeginCapture_v2, ...)";
  }
  if (!e.cannot.empty()) {
    why_not_ = e.cannot;
    ++counts_.eager;
    return Step::kEager;
  }
  if (e.seen++ == 0) {
    ++counts_.eager;
    return Step::kEager;
  }
  return Step::kCapture;
}

void CudaGraphs::MarkEager(const std::string& key, const std::string& reason) {
  entries_[key].cannot = reason;
  why_not_ = reason;
}

absl::Status CudaGraphs::Run(const std::string& key, CUstream stream, Tally& counters,
                             const Launch& launch) {
  std::string host;
  switch (Next(key)) {
    case Step::kReplay: {
      absl::StatusOr<Tally> t = Replay(key, stream);
      if (!t.ok()) return t.status();
      for (size_t i = 0; i < counters.size(); ++i) counters[i] += (*t)[i];
      return absl::OkStatus();
    }
    case Step::kEager: {
      absl::Status st = launch(false, &host);
      // The first sight of a key shows whether its run needs the host: then it stays eager.
      if (st.ok() && !host.empty()) MarkEager(key, host);
      return st;
    }
    case Step::kCapture:
      break;
  }
  if (!BeginCapture(key, stream).ok()) return launch(false, &host);
  const Tally before = counters;
  absl::Status st = launch(true, &host);
  Tally delta = counters;
  for (size_t i = 0; i < delta.size(); ++i) delta[i] -= before[i];
  counters = before;  // nothing ran yet: the launches were only recorded
  if (!st.ok()) {
    AbortCapture(key, stream, !host.empty() ? host : std::string(st.message()));
    return launch(false, &host);
  }
  if (!EndCapture(key, stream, delta).ok()) return launch(false, &host);
  absl::StatusOr<Tally> t = Replay(key, stream);
  if (!t.ok()) return t.status();
  for (size_t i = 0; i < counters.size(); ++i) counters[i] += (*t)[i];
  return absl::OkStatus();
}

absl::Status CudaGraphs::BeginCapture(const std::string& key, CUstream stream) {
  Entry& e = entries_[key];
  absl::Status st =
      d_->Check(d_->StreamBeginCapture(stream, kStreamCaptureModeRelaxed), "cuStreamBeginCapture", "a CUDA graph");
  if (!st.ok()) {
    e.cannot = std::string(st.message());
    why_not_ = e.cannot;
    ++counts_.eager;
  }
  return st;
}

void CudaGraphs::AbortCapture(const std::string& key, CUstream stream, const std::string& reason) {
  CUgraph g = nullptr;
  d_->StreamEndCapture(stream, &g);
  if (g != nullptr) d_->GraphDestroy(g);
  Entry& e = entries_[key];
  e.cannot = reason;
  why_not_ = reason;
  ++counts_.eager;
}

absl::Status CudaGraphs::EndCapture(const std::string& key, CUstream stream, const Tally& tally) {
  Entry& e = entries_[key];
  CUgraph g = nullptr;
  absl::Status st = d_->Check(d_->StreamEndCapture(stream, &g), "cuStreamEndCapture", "a CUDA graph");
  CUgraphExec exec = nullptr;
  if (st.ok()) {
    st = d_->Check(d_->GraphInstantiate(&exec, g, 0), "cuGraphInstantiate", "a CUDA graph");
  }
  if (g != nullptr) d_->GraphDestroy(g);
  if (!st.ok()) {
    e.cannot = std::string(st.message());
    why_not_ = e.cannot;
    ++counts_.eager;
    return st;
  }
  if (graphs() >= max_graphs_) Evict();
  e.exec = exec;
  e.tally = tally;
  ++counts_.captured;
  return absl::OkStatus();
}

absl::StatusOr<CudaGraphs::Tally> CudaGraphs::Replay(const std::string& key, CUstream stream) {
  Entry& e = entries_.at(key);
  if (absl::Status st = d_->Check(d_->GraphLaunch(e.exec, stream), "cuGraphLaunch", "a CUDA graph");
      !st.ok()) {
    return st;
  }
  ++counts_.replayed;
  return e.tally;
}

void CudaGraphs::Evict() {
  Entry* oldest = nullptr;
  for (auto& [key, e] : entries_) {
    if (e.exec != nullptr && (oldest == nullptr || e.used < oldest->used)) oldest = &e;
  }
  if (oldest == nullptr) return;
  d_->GraphExecDestroy(oldest->exec);
  oldest->exec = nullptr;
  oldest->seen = 0;  // seen again: warm, then captured again
  ++counts_.evicted;
}

}  // namespace coil::cuda

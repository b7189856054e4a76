// CUDA graphs for CudaExecutable (torch.compile's mode="reduce-overhead"): the launches of one
// run (generated kernels, cuBLASLt GEMMs, cuDNN convolutions) captured once from the stream
// into a CUDA graph and replayed with one cuGraphLaunch when the same shapes come back.
//
// A graph bakes in every address and size it was captured with, so it is keyed by the run's
// whole buffer table (buffer addresses, symbol values, the kernels' slot tables): inputs and
// outputs live in the executable's kept device buffers (the static buffers; the caller's
// tensors are copied in and out around the graph), the arena is reused, so the same shapes
// give the same key. Per key: the first run is eager (it warms cuBLASLt's and cuDNN's plans and
// shows whether every extern runs on the GPU), the second captures and launches the graph,
// later ones replay it. A key whose run needs the host (an extern the libraries cannot run),
// or whose capture fails, stays eager, and why_not() says why. At most `max_graphs` graphs are
// kept (least recently used evicted).
//
//   CudaGraphs graphs(driver, 8);
//   switch (graphs.Next(key)) { case kEager: ...; case kCapture: Begin, launches, End; ... }
//
// Pure bookkeeping over the driver's function pointers, so a test can drive it with a fake
// CudaDriver (cuda_graphs_test).
#ifndef COIL_RUNTIME_CUDA_CUDA_GRAPHS_H_
#define COIL_RUNTIME_CUDA_CUDA_GRAPHS_H_

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/cuda/cuda_driver.h"

namespace coil::cuda {

class CudaGraphs {
 public:
  enum class Step { kEager, kCapture, kReplay };
  // What one run of a graph adds to the executable's counters (GEMMs and convolutions fused /
  // plain / host, as counted while it was captured), so replays count like eager runs.
  using Tally = std::array<int64_t, 6>;

  CudaGraphs(const CudaDriver* driver, int max_graphs);
  ~CudaGraphs();
  CudaGraphs(const CudaGraphs&) = delete;
  CudaGraphs& operator=(const CudaGraphs&) = delete;

  // `launch(capturing, &host)` puts one run's work on the stream (capturing: only records it);
  // it sets `host` to why it ran (eager) or would run (capturing: it then returns an error
  // without doing anything) work on the host, which no graph can hold.
  using Launch = std::function<absl::Status(bool capturing, std::string* host)>;

  // Runs the work keyed `key` on `stream` as Next decides: eagerly, captured into a graph and
  // launched, or replayed; `counters` gets the run's GEMM / convolution counts (launch adds
  // them itself when it runs; a replay adds the tally counted while capturing). A capture that
  // fails (an extern on the host, a capture error) leaves the key eager and runs it eagerly.
  // Errors: launch's, a graph launch failing.
  absl::Status Run(const std::string& key, CUstream stream, Tally& counters,
                   const Launch& launch);

  // What the run keyed `key` does: eager (first sight, or a key that cannot be captured),
  // capture (second sight), replay (a graph exists).
  Step Next(const std::string& key);
  // Keeps `key` eager from now on (`reason`: why).
  void MarkEager(const std::string& key, const std::string& reason);

  // Starts capturing `stream` for `key` (after Next said kCapture). On an error the key stays
  // eager (why_not says why) and the error is returned: run eagerly.
  absl::Status BeginCapture(const std::string& key, CUstream stream);
  // Ends the capture: the graph is instantiated and kept for `key` with `tally`. Errors (the
  // key then stays eager): the capture was invalidated, instantiation failed.
  absl::Status EndCapture(const std::string& key, CUstream stream, const Tally& tally);
  // Ends a capture that must not be used (`reason`: "kernel 3 'x' runs on the host"): the key
  // stays eager.
  void AbortCapture(const std::string& key, CUstream stream, const std::string& reason);
  // Launches `key`'s graph on `stream` and returns its tally.
  absl::StatusOr<Tally> Replay(const std::string& key, CUstream stream);

  struct Counts {
    int64_t eager = 0;     // runs without a graph
    int64_t captured = 0;  // graphs captured (each also ran once)
    int64_t replayed = 0;  // runs that launched a graph (each capturing run included)
    int64_t evicted = 0;
  };
  const Counts& counts() const { return counts_; }
  int graphs() const;
  // Why the last key that stayed eager did ("" when none did).
  const std::string& why_not() const { return why_not_; }

 private:
  struct Entry {
    int seen = 0;
    CUgraphExec exec = nullptr;
    Tally tally{};
    std::string cannot;  // non-empty: stays eager
    int64_t used = 0;    // LRU clock
  };
  void Evict();
  const CudaDriver* d_;
  int max_graphs_;
  int64_t clock_ = 0;
  absl::flat_hash_map<std::string, Entry> entries_;
  Counts counts_;
  std::string why_not_;
};

}  // namespace coil::cuda

#endif  // COIL_RUNTIME_CUDA_CUDA_GRAPHS_H_

// Rounds for `coil bench cpu --peers` (the CPU backend): every row's systems are timed R times
// in alternation, so that a slow stretch of the machine (another tenant, the hypervisor) falls
// on all of them instead of on whichever ran then. torch_peers.py runs as a server
// (cpu_bench_peer_server.h): its first pass exports, compiles (torch.compile once per row) and
// checks every row; then, per round and per row, it times torch eager, torch.compile and ONNX
// Runtime on request, and coil times the row's program right before or after (rounds 1, 3, ...:
// peers first, rows in order; rounds 2, 4, ...: coil first, rows reversed).
// Each system's row time is the median of its R round medians; the report adds each system's
// spread (slowest round median / fastest) and a NOISY line where a spread is above
// kNoisySpread.
//
// Each row has its own coil program, compiled from the model for that row alone (as torch.compile
// and ONNX Runtime get one per row), and all stay loaded through the rounds: a program never
// switches between batch sizes (which would re-plan its buffers and re-measure its layout
// choices each round).
//
//   std::unique_ptr<PeerServer> server;
//   absl::StatusOr<TorchEagerResults> torch = StartPeerServer(request, server);
//   RunRounds(*torch, *server, {.rounds = 3, .model = model_options}, results);
#ifndef COIL_TOOLS_BENCH_CPU_BENCH_ROUNDS_H_
#define COIL_TOOLS_BENCH_CPU_BENCH_ROUNDS_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/repeated_field.h"
#include "tools/bench/cpu_bench.pb.h"
#include "tools/bench/cpu_bench_models.h"
#include "tools/bench/cpu_bench_peer_server.h"
#include "tools/bench/cpu_bench_torch.h"

namespace coil::bench {

// A system whose slowest round median is more than this over its fastest gets a NOISY line.
inline constexpr double kNoisySpread = 1.10;

struct RoundsOptions {
  int rounds = 3;
  // Programs compiled per row (a diagnosis: each makes its own first-run choices); copy 0 is
  // the row's time, the others only report their medians (ModelRow.coil_copy_ms).
  int copies = 1;
  ModelBenchOptions model;  // threads, timing policy (per system, per round), tolerance
};

// Starts request's script with --serve and parses its first line (ParseTorchEagerJson).
absl::StatusOr<TorchEagerResults> StartPeerServer(const TorchEagerRequest& request,
                                                  std::unique_ptr<PeerServer>& server);

// Parses one answer of the server (a PeerRound as JSON).
absl::StatusOr<PeerRound> ParsePeerRound(const std::string& json);

// Compiles, checks and times every run of `torch` in rounds against `server`, appending one
// ModelRow per run to results.models (with rounds' medians, ratios and CPU shares). A row that
// fails is a result (matches false, error set), as in BenchModel; the error is the server's
// (its output ended, a malformed answer).
absl::Status RunRounds(const TorchEagerResults& torch, PeerServer& server,
                       const RoundsOptions& options, CpuBenchResults& results);

// From the round lists (torch_round_ms, coil_round_ms, each peer's round_ms): torch_ms,
// coil_ms and each peer's median_ms as their medians, and speedup (0 without both). The
// minimums and rep counts are the caller's (accumulated per round).
void SummarizeRounds(ModelRow& row);

// Slowest over fastest of `round_ms` (0 when empty or not all positive).
double RoundSpread(const google::protobuf::RepeatedField<double>& round_ms);

// With results.rounds() > 0: the rounds line, each row's spreads, NOISY lines, and the copies'
// medians where there are several.
void AppendRoundsReport(const CpuBenchResults& results, std::string& out);

}  // namespace coil::bench

#endif  // COIL_TOOLS_BENCH_CPU_BENCH_ROUNDS_H_

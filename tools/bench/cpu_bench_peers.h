// `coil bench cpu --peers`: coil against torch eager, torch.compile (default mode) and ONNX
// Runtime, as tools/bench/torch_peers.py measured them in the same run. This file holds what
// the peers add to the model rows: each peer's validity (no error, output within the tolerance
// of torch eager's), coil's ratio against it, the geomeans, and the report's peers table with
// the cold compile times and the peers issue's targets.
//
//   SetPeerRatios(row, kModelTolerance);     // after coil's time is in the row
//   SummarizePeers(results);                 // geomean_vs_compiled / geomean_vs_onnxruntime
//   AppendPeersReport(results, out);
#ifndef COIL_TOOLS_BENCH_CPU_BENCH_PEERS_H_
#define COIL_TOOLS_BENCH_CPU_BENCH_PEERS_H_

#include <string>
#include <vector>

#include "tools/bench/cpu_bench.pb.h"

namespace coil::bench {

// The peers issue's targets (printed against the measurements; never a failure): geomean of
// coil against ONNX Runtime and torch.compile, and no row below kTargetPeerRowFloor of either.
inline constexpr double kTargetVsOnnxRuntime = 1.0;
inline constexpr double kTargetVsCompiled = 1.2;
inline constexpr double kTargetPeerRowFloor = 0.8;
// `coil bench cuda` (the CUDA issue's model target): geomean >= 1.0x torch.compile.
inline constexpr double kTargetCudaVsCompiled = 1.0;

// The models torch_peers.py knows, in its order.
const std::vector<std::string>& KnownPeerModels();
// torch_peers.py's --device cuda rows (`coil bench cuda` only): the memory-bound gelu_chain,
// softmax and layernorm (runs with bytes), and the bf16 MLP.
const std::vector<std::string>& KnownCudaRows();
// `coil bench cuda` only: a known model's name + this suffix (resnet50_bf16) runs torch under
// torch.autocast bf16 and coil with --precision bf16 (TorchEagerModel.precision).
inline constexpr char kBf16RowSuffix[] = "_bf16";
// `coil bench cuda`'s default rows: KnownCudaRows(), then resnet50, bert_base, gpt2_small and
// resnet50_bf16.
const std::vector<std::string>& DefaultCudaModels();

// The peer's median when it ran without error, timed at least once and matched torch eager
// within `tolerance`; 0 otherwise.
double ValidPeerMs(const PeerTiming& peer, double tolerance);

// vs_compiled / vs_onnxruntime: the peer's valid median over coil's (0 when the row did not
// match or the peer has no valid time).
void SetPeerRatios(ModelRow& row, double tolerance);

// geomean_vs_compiled and geomean_vs_onnxruntime over the rows with a ratio (0: none).
void SummarizePeers(CpuBenchResults& results);

// The peers table (ms per system, coil's ratios), ERROR lines for coil's failed rows, PEER
// lines for a peer's failure or mismatch, the geomean lines, cold compile times and targets;
// for backend cuda also the memory-bound rows against the copy (the bytes each must move over
// its time, as a share of copy_gb_per_s), coil's whole-run times (host tensors in and out) and
// the CUDA target.
void AppendPeersReport(const CpuBenchResults& results, std::string& out);

}  // namespace coil::bench

#endif  // COIL_TOOLS_BENCH_CPU_BENCH_PEERS_H_

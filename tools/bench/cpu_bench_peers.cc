// SetPeerRatios / SummarizePeers / AppendPeersReport (see cpu_bench_peers.h).
#include "tools/bench/cpu_bench_peers.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/bench/cpu_bench_models.h"

namespace coil::bench {
namespace {

// Above this share of the CPUs taken by others during coil's timed runs, the row says so.
constexpr double kSharedCpuShare = 0.05;

// The tolerance the row's output was checked with (kModelTolerance when not recorded).
double Tolerance(const ModelRow& m) {
  return m.tolerance() > 0 ? m.tolerance() : kModelTolerance;
}

// "12.345" or "-" (no valid time) for one peer's column.
std::string PeerColumn(const PeerTiming& p, bool ran, double tolerance) {
  if (!ran) return "absent";
  const double ms = ValidPeerMs(p, tolerance);
  return ms > 0 ? absl::StrFormat("%.3f", ms) : std::string("-");
}

std::string Ratio(double r) { return r > 0 ? absl::StrFormat("%.2fx", r) : std::string("-"); }

// Why a peer's time does not count, or "" when it does.
std::string PeerProblem(const PeerTiming& p, double tolerance) {
  if (!p.error().empty()) return p.error();
  if (!(p.median_ms() > 0) || p.reps() < 1) return "no time";
  if (!(p.max_relative_error() <= tolerance)) {
    return absl::StrFormat("output differs from torch eager: max relative error %.3g > %.3g",
                           p.max_relative_error(), tolerance);
  }
  return "";
}

// Geomean of `ratio` over the rows where it is positive; 0 when none.
template <typename F>
double Geomean(const CpuBenchResults& r, F ratio) {
  double log_sum = 0;
  int n = 0;
  for (const ModelRow& m : r.models()) {
    if (ratio(m) > 0) {
      log_sum += std::log(ratio(m));
      ++n;
    }
  }
  return n > 0 ? std::exp(log_sum / n) : 0;
}

template <typename F>
double Lowest(const CpuBenchResults& r, F ratio) {
  double low = 0;
  for (const ModelRow& m : r.models()) {
    if (ratio(m) > 0 && (low == 0 || ratio(m) < low)) low = ratio(m);
  }
  return low;
}

void AppendGeomean(const char* peer, double geomean, const std::string& absent, std::string& out) {
  if (!absent.empty()) {
    absl::StrAppendFormat(&out, "geomean vs %s: absent (%s)\n", peer, absent);
  } else if (geomean > 0) {
    absl::StrAppendFormat(&out, "geomean vs %s: %.2fx\n", peer, geomean);
  } else {
    absl::StrAppendFormat(&out, "geomean vs %s: no row with both times\n", peer);
  }
}

void AppendTarget(const char* peer, double target, double geomean, double lowest,
                  const std::string& absent, std::string& out) {
  if (!absent.empty() || geomean == 0) {
    absl::StrAppendFormat(&out, "  vs %s: not measured\n", peer);
    return;
  }
  const bool met = geomean >= target && lowest >= kTargetPeerRowFloor;
  absl::StrAppendFormat(&out, "  geomean vs %s >= %.2fx, no row < %.2fx: %.2fx, lowest %.2fx, %s\n",
                        peer, target, kTargetPeerRowFloor, geomean, lowest, met ? "met" : "MISSED");
}

// The memory-bound rows as shares of the copy's bandwidth: bytes / time / copy.
void AppendCopyShares(const CpuBenchResults& r, std::string& out) {
  const double copy = r.copy_gb_per_s();
  absl::StrAppendFormat(&out, "\ndevice-to-device copy (1 GiB, the ceiling): %s\n",
                        copy > 0 ? absl::StrFormat("%.0f GB/s", copy)
                                 : std::string("not measured"));
  bool header = false;
  for (const ModelRow& m : r.models()) {
    if (m.bytes() <= 0 || !(copy > 0)) continue;
    if (!header) {
      absl::StrAppendFormat(&out, "%-19s %5s %10s %8s %8s %8s  (%% of copy bandwidth)\n",
                            "memory-bound", "batch", "MB moved", "coil", "eager", "compile");
      header = true;
    }
    auto share = [&](double ms) {
      return ms > 0 ? absl::StrFormat("%.0f%%", 100.0 * m.bytes() / (ms * 1e6) / copy)
                    : std::string("-");
    };
    absl::StrAppendFormat(&out, "%-19s %5d %10.1f %8s %8s %8s\n", m.model(), m.batch(),
                          m.bytes() / 1e6, share(m.matches() ? m.coil_ms() : 0),
                          share(m.torch_ms()), share(ValidPeerMs(m.compiled(), Tolerance(m))));
  }
}

}  // namespace

const std::vector<std::string>& KnownPeerModels() {
  static const auto* models = new std::vector<std::string>{"resnet50", "mobilenet_v3_large",
                                                           "vit_b_16", "bert_base", "gpt2_small"};
  return *models;
}

const std::vector<std::string>& KnownCudaRows() {
  static const auto* rows =
      new std::vector<std::string>{"gelu_chain", "softmax", "layernorm", "mlp_bf16"};
  return *rows;
}

const std::vector<std::string>& DefaultCudaModels() {
  static const auto* models = [] {
    auto* m = new std::vector<std::string>(KnownCudaRows());
    for (const char* name : {"resnet50", "bert_base", "gpt2_small"}) m->push_back(name);
    m->push_back(absl::StrCat("resnet50", kBf16RowSuffix));
    return m;
  }();
  return *models;
}

double ValidPeerMs(const PeerTiming& peer, double tolerance) {
  if (!peer.error().empty() || peer.reps() < 1 || !(peer.median_ms() > 0)) return 0;
  if (!(peer.max_relative_error() <= tolerance)) return 0;
  return peer.median_ms();
}

void SetPeerRatios(ModelRow& row, double tolerance) {
  const bool coil_ok = row.matches() && row.coil_ms() > 0;
  const double compiled = ValidPeerMs(row.compiled(), tolerance);
  const double ort = ValidPeerMs(row.onnxruntime(), tolerance);
  row.set_vs_compiled(coil_ok && compiled > 0 ? compiled / row.coil_ms() : 0);
  row.set_vs_onnxruntime(coil_ok && ort > 0 ? ort / row.coil_ms() : 0);
}

void SummarizePeers(CpuBenchResults& results) {
  results.set_geomean_vs_compiled(
      Geomean(results, [](const ModelRow& m) { return m.vs_compiled(); }));
  results.set_geomean_vs_onnxruntime(
      Geomean(results, [](const ModelRow& m) { return m.vs_onnxruntime(); }));
}

void AppendPeersReport(const CpuBenchResults& r, std::string& out) {
  const bool compiled_ran = r.compiled_absent().empty();
  const bool ort_ran = r.onnxruntime_absent().empty();
  absl::StrAppendFormat(&out, "%-19s %5s %10s %10s %10s %10s %8s %8s %8s %9s\n", "model", "batch",
                        "eager ms", "compile ms", "ORT ms", "coil ms", "vs eager", "vs comp",
                        "vs ORT", "coil err");
  std::string problems;
  for (const ModelRow& m : r.models()) {
    absl::StrAppendFormat(&out, "%-19s %5d %10.3f %10s %10s %10s %8s %8s %8s %9s\n", m.model(),
                          m.batch(), m.torch_ms(),
                          PeerColumn(m.compiled(), compiled_ran, Tolerance(m)),
                          PeerColumn(m.onnxruntime(), ort_ran, Tolerance(m)),
                          m.matches() ? absl::StrFormat("%.3f", m.coil_ms()) : "error",
                          Ratio(m.speedup()), Ratio(m.vs_compiled()), Ratio(m.vs_onnxruntime()),
                          m.matches() ? absl::StrFormat("%.2g", m.max_relative_error()) : "-");
    if (!m.matches()) {
      absl::StrAppendFormat(&problems, "ERROR %s batch %d: %s\n", m.model(), m.batch(), m.error());
    }
    if (m.other_cpu_share() > kSharedCpuShare || m.steal_cpu_share() > kSharedCpuShare) {
      absl::StrAppendFormat(&problems,
                            "BUSY %s batch %d: during coil's timed runs other processes used "
                            "%.0f%% and the hypervisor %.0f%% of the CPUs\n",
                            m.model(), m.batch(), 100 * m.other_cpu_share(),
                            100 * std::max(0.0, m.steal_cpu_share()));
    }
    if (compiled_ran && !PeerProblem(m.compiled(), Tolerance(m)).empty()) {
      absl::StrAppendFormat(&problems, "PEER torch.compile %s batch %d: %s\n", m.model(), m.batch(),
                            PeerProblem(m.compiled(), Tolerance(m)));
    }
    if (ort_ran && !PeerProblem(m.onnxruntime(), Tolerance(m)).empty()) {
      absl::StrAppendFormat(&problems, "PEER onnxruntime %s batch %d: %s\n", m.model(), m.batch(),
                            PeerProblem(m.onnxruntime(), Tolerance(m)));
    }
  }
  out += problems;
  absl::StrAppendFormat(&out, "geomean vs torch eager: %.2fx\n", r.geomean_speedup());
  AppendGeomean("torch.compile", r.geomean_vs_compiled(), r.compiled_absent(), out);
  AppendGeomean("onnxruntime", r.geomean_vs_onnxruntime(), r.onnxruntime_absent(), out);

  // Cold compiles: coil's per model (no compile cache, from the imported Graph), Inductor's and
  // ONNX Runtime's session creation per (model, batch).
  out +=
      "\ncold compile (coil: per model, from the imported Graph, no cache; torch.compile: "
      "first call less one eager call; ORT: session + first run)\n";
  absl::StrAppendFormat(&out, "%-19s %5s %10s %14s %10s\n", "model", "batch", "coil s",
                        "torch.compile s", "ORT s");
  for (const ModelRow& m : r.models()) {
    auto seconds = [](const PeerTiming& p, bool ran) {
      if (!ran) return std::string("absent");
      return p.error().empty() && p.reps() > 0 ? absl::StrFormat("%.2f", p.compile_seconds())
                                               : std::string("-");
    };
    absl::StrAppendFormat(
        &out, "%-19s %5d %10s %14s %10s\n", m.model(), m.batch(),
        m.coil_compile_ms() > 0 ? absl::StrFormat("%.2f", m.coil_compile_ms() / 1e3) : "-",
        seconds(m.compiled(), compiled_ran), seconds(m.onnxruntime(), ort_ran));
  }

  if (r.backend() == "cuda") {
    out +=
        "\nCUDA times are device time per call, from samples of calls back to back (at least 5 ms "
        "each), so that only a sample's first call starts on an idle GPU; the same for torch, "
        "torch.compile, coil and the copy\n";
    AppendCopyShares(r, out);
    out += "\ncoil whole run (host tensors in, copies to and from the GPU, host tensors out; one "
           "pass)\n";
    absl::StrAppendFormat(&out, "%-19s %5s %10s %10s\n", "model", "batch", "run ms", "device ms");
    for (const ModelRow& m : r.models()) {
      absl::StrAppendFormat(&out, "%-19s %5d %10s %10s\n", m.model(), m.batch(),
                            m.coil_run_ms() > 0 ? absl::StrFormat("%.3f", m.coil_run_ms()) : "-",
                            m.matches() ? absl::StrFormat("%.3f", m.coil_ms()) : "-");
    }
    out += "\ntarget (the CUDA issue's; measured, not enforced):\n";
    AppendTarget("torch.compile", kTargetCudaVsCompiled, r.geomean_vs_compiled(),
                 Lowest(r, [](const ModelRow& m) { return m.vs_compiled(); }), r.compiled_absent(),
                 out);
    return;
  }
  out += "\ntargets (the peers issue's; measured, not enforced):\n";
  AppendTarget("onnxruntime", kTargetVsOnnxRuntime, r.geomean_vs_onnxruntime(),
               Lowest(r, [](const ModelRow& m) { return m.vs_onnxruntime(); }),
               r.onnxruntime_absent(), out);
  AppendTarget("torch.compile", kTargetVsCompiled, r.geomean_vs_compiled(),
               Lowest(r, [](const ModelRow& m) { return m.vs_compiled(); }), r.compiled_absent(),
               out);
}

}  // namespace coil::bench

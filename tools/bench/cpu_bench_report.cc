// Summarize / FormatReport / ResultsToJson (see cpu_bench_report.h).
#include "tools/bench/cpu_bench_report.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/util/json_util.h"
#include "tools/bench/cpu_bench_peers.h"
#include "tools/bench/cpu_bench_rounds.h"

namespace coil::bench {
namespace {

std::string Verdict(bool met) { return met ? "met" : "MISSED"; }

void AppendModels(const CpuBenchResults& r, std::string& out) {
  if (r.models().empty()) return;  // --no-models
  absl::StrAppendFormat(&out, "%-22s %5s %11s %11s %9s %12s\n", "model", "batch", "torch ms",
                        "coil ms", "speedup", "max rel err");
  std::string errors;
  for (const ModelRow& m : r.models()) {
    if (m.matches()) {
      absl::StrAppendFormat(&out, "%-22s %5d %11.3f %11.3f %8.2fx %12.2g\n", m.model(), m.batch(),
                            m.torch_ms(), m.coil_ms(), m.speedup(), m.max_relative_error());
    } else {
      absl::StrAppendFormat(&out, "%-22s %5d %11.3f %11s %9s %12s\n", m.model(), m.batch(),
                            m.torch_ms(), "-", "error", "-");
      absl::StrAppendFormat(&errors, "ERROR %s batch %d: %s\n", m.model(), m.batch(), m.error());
    }
  }
  out += errors;
  absl::StrAppendFormat(&out, "geomean vs torch eager: %.2fx\n", r.geomean_speedup());
}

void AppendBandwidth(const CpuBenchResults& r, std::string& out) {
  if (r.bandwidth().empty()) return;
  absl::StrAppendFormat(&out, "%s%-16s %-18s %10s %9s %8s %8s %12s\n",
                        r.models().empty() ? "" : "\n", "bandwidth", "shape", "ms", "GB/s",
                        "of copy", "kernels", "max rel err");
  std::string errors;
  for (const BandwidthRow& b : r.bandwidth()) {
    if (!b.matches()) {
      absl::StrAppendFormat(&out, "%-16s %-18s %10s %9s %8s %8d %12s\n", b.name(), b.shape(), "-",
                            "-", "error", b.kernels(), "-");
      absl::StrAppendFormat(&errors, "ERROR %s: %s\n", b.name(), b.error());
      continue;
    }
    absl::StrAppendFormat(&out, "%-16s %-18s %10.3f %9.2f %7.0f%% %8d %12.2g\n", b.name(),
                          b.shape(), b.median_ms(), b.gb_per_s(), 100 * b.fraction_of_copy(),
                          b.kernels(), b.max_relative_error());
  }
  out += errors;
}

void AppendCompileTimes(const CompileTimes& c, std::string& out) {
  if (!c.error().empty()) {
    absl::StrAppendFormat(&out, "\nERROR compile %s: %s\n", c.model(), c.error());
    return;
  }
  // cold_ms / warm_ms are the compile from the imported Graph; the ONNX import (loading the
  // model into memory) is shown on its own line, outside the totals.
  absl::StrAppendFormat(&out,
                        "\ncompile %s from the imported Graph (%d kernels): cold %.1f ms, warm "
                        "%.1f ms (%s)\n",
                        c.model(), c.kernels(), c.cold_ms(), c.warm_ms(),
                        c.warm_cache_hit() ? "cache hit" : "cache MISS");
  absl::StrAppendFormat(&out, "  %-38s %10s %10s\n", "stage", "cold ms", "warm ms");
  auto warm_of = [&c](const std::string& name) {
    for (const Stage& w : c.warm_stages()) {
      if (w.name() == name) return absl::StrFormat("%.1f", w.ms());
    }
    return std::string("-");
  };
  for (const Stage& cold : c.cold_stages()) {
    if (cold.name() == "onnx import") continue;
    absl::StrAppendFormat(&out, "  %-38s %10.1f %10s\n", cold.name(), cold.ms(),
                          warm_of(cold.name()));
  }
  absl::StrAppendFormat(&out, "  %-38s %10.1f %10.1f\n", "total (compile)", c.cold_ms(),
                        c.warm_ms());
  for (const Stage& cold : c.cold_stages()) {
    if (cold.name() != "onnx import") continue;
    absl::StrAppendFormat(&out, "  %-38s %10.1f %10s\n", "onnx import (model load, not in total)",
                          cold.ms(), warm_of(cold.name()));
  }
}

void AppendTargets(const CpuBenchResults& r, std::string& out) {
  out += "\ntargets (the CPU backend issue's; measured, not enforced):\n";
  if (!r.models().empty()) {
    absl::StrAppendFormat(&out, "  geomean vs torch eager >= %.2fx: %.2fx, %s\n", kTargetGeomean,
                          r.geomean_speedup(), Verdict(r.geomean_speedup() >= kTargetGeomean));
  }
  for (const BandwidthRow& b : r.bandwidth()) {
    if (b.name() == "copy") continue;
    absl::StrAppendFormat(&out, "  %s >= %.0f%% of copy: %.0f%%, %s\n", b.name(),
                          100 * kTargetFractionOfCopy, 100 * b.fraction_of_copy(),
                          Verdict(b.matches() && b.fraction_of_copy() >= kTargetFractionOfCopy));
  }
  if (r.has_compile() && r.compile().error().empty()) {
    const CompileTimes& c = r.compile();
    absl::StrAppendFormat(&out, "  cold compile of %s < %.0f ms: %.1f ms, %s\n", c.model(),
                          kTargetColdCompileMs, c.cold_ms(),
                          Verdict(c.cold_ms() < kTargetColdCompileMs));
    absl::StrAppendFormat(&out, "  warm compile of %s < %.0f ms: %.1f ms, %s\n", c.model(),
                          kTargetWarmCompileMs, c.warm_ms(),
                          Verdict(c.warm_cache_hit() && c.warm_ms() < kTargetWarmCompileMs));
  }
  if (r.has_large_compile() && r.large_compile().error().empty()) {
    // The compile driver issue's targets for a 124M-parameter model (import not counted).
    const CompileTimes& c = r.large_compile();
    absl::StrAppendFormat(&out, "  cold compile of the large model < %.0f ms: %.1f ms, %s\n",
                          kTargetLargeColdCompileMs, c.cold_ms(),
                          Verdict(c.cold_ms() < kTargetLargeColdCompileMs));
    absl::StrAppendFormat(&out, "  warm compile of the large model < %.0f ms: %.1f ms, %s\n",
                          kTargetLargeWarmCompileMs, c.warm_ms(),
                          Verdict(c.warm_cache_hit() && c.warm_ms() < kTargetLargeWarmCompileMs));
  }
}

}  // namespace

void Summarize(CpuBenchResults& results) {
  double log_sum = 0;
  int matched = 0, failed = 0;
  for (const ModelRow& m : results.models()) {
    if (m.matches() && m.speedup() > 0) {
      log_sum += std::log(m.speedup());
      ++matched;
    } else {
      ++failed;
    }
  }
  for (const BandwidthRow& b : results.bandwidth()) failed += b.matches() ? 0 : 1;
  if (results.has_compile() && !results.compile().error().empty()) ++failed;
  if (results.has_large_compile() && !results.large_compile().error().empty()) ++failed;
  results.set_geomean_speedup(matched > 0 ? std::exp(log_sum / matched) : 0);
  results.set_failed_rows(failed);
}

std::string FormatReport(const CpuBenchResults& r) {
  if (r.backend() == "cuda") {
    std::string out = absl::StrFormat(
        "coil bench cuda: %s (host %s); torch %s (eager, torch.compile %s), TF32 off; coil ms: "
        "device time per call (CUDA events, samples of calls back to back), as torch's; %s "
        "sizes\n\n",
        r.gpu().empty() ? "unknown GPU" : r.gpu(), r.machine(), r.torch_version(),
        r.compiled_absent().empty() ? "default mode" : "absent", r.quick() ? "quick" : "full");
    AppendPeersReport(r, out);
    return out;
  }
  if (r.peers()) {
    std::string out = absl::StrFormat(
        "coil bench cpu --peers: %d thread%s on %s; torch %s (eager, torch.compile %s); "
        "onnxruntime %s; %s sizes\n\n",
        r.threads(), r.threads() == 1 ? "" : "s", r.machine(), r.torch_version(),
        r.compiled_absent().empty() ? "default mode" : "absent",
        r.onnxruntime_absent().empty() ? r.onnxruntime_version() : "absent",
        r.quick() ? "quick" : "full");
    AppendPeersReport(r, out);
    AppendRoundsReport(r, out);
    if (r.has_large_compile()) AppendCompileTimes(r.large_compile(), out);
    return out;
  }
  std::string out = absl::StrFormat("coil bench cpu: %d thread%s on %s; %s; %s sizes\n\n",
                                    r.threads(), r.threads() == 1 ? "" : "s", r.machine(),
                                    r.torch_version().empty()
                                        ? "torch not run"
                                        : absl::StrCat("torch ", r.torch_version(), " eager"),
                                    r.quick() ? "quick" : "full");
  AppendModels(r, out);
  AppendBandwidth(r, out);
  if (r.has_compile()) AppendCompileTimes(r.compile(), out);
  if (r.has_large_compile()) AppendCompileTimes(r.large_compile(), out);
  AppendTargets(r, out);
  return out;
}

absl::StatusOr<std::string> ResultsToJson(const CpuBenchResults& results) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string json;
  auto status = google::protobuf::util::MessageToJsonString(results, &json, options);
  if (!status.ok()) {
    return absl::InternalError(absl::StrCat("results to JSON: ", status.message().ToString()));
  }
  return json;
}

}  // namespace coil::bench

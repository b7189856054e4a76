// libFuzzer entry point: the CPU backend against the reference interpreter on small random
// graphs (tools/fuzz/random_graph.h turns the bytes into a graph, its inputs and the symbol's
// run-time value). Each graph is compiled by the whole compile driver (prims -> inductor ->
// codegen_cpu -> load, no cache) and run; the reference interpreter runs the same graph in the
// graph's own dtypes. A finding aborts, so libFuzzer reports it like a crash:
//   - the generated graph does not verify (GraphBuilder promises it does);
//   - the compile fails with an Internal error (a bug, not an unsupported input);
//   - one side reports an error and the other does not (a silent wrong answer, or a spurious
//     failure), e.g. an out-of-bounds index or an integer division by zero;
//   - outputs differ in number, dtype or shape, integers or booleans differ at all, or floats
//     differ by more than the dtype's tolerance relative to the output's largest magnitude.
// COIL_FUZZ_VERBOSE=1 prints each graph (its ops, its text) and every status.
//
// Build and run (see docs/fuzzing.md):
//   bazel --output_base=/root/.cache/bazel_fuzz build --config=fuzz //tools/fuzz:cpu_differential_fuzzer
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "runtime/host_tensor.h"
#include "runtime/interpreter.h"
#include "tools/driver/cpu_backend.h"
#include "tools/driver/driver.h"
#include "tools/fuzz/random_graph.h"

namespace coil {
namespace {

bool Verbose() {
  static const bool verbose = std::getenv("COIL_FUZZ_VERBOSE") != nullptr;
  return verbose;
}

[[noreturn]] void Finding(const fuzz::RandomGraph& r, const std::string& what) {
  std::cerr << "cpu_differential_fuzzer: " << what << "\nops: " << absl::StrJoin(r.ops, ", ")
            << "\ngraph:\n"
            << PrintGraph(r.graph) << "inputs:\n";
  for (const HostTensor& t : r.inputs) {
    std::cerr << "  " << t.TypeString() << " [" << absl::StrJoin(t.ToDoubles(), ", ") << "]\n";
  }
  std::abort();
}

// Tolerance relative to the output's largest finite magnitude (at least 1).
double Tolerance(DType dtype) {
  return dtype == proto::FLOAT16 || dtype == proto::BFLOAT16 ? 2e-2 : 1e-3;
}

// "" when `got` matches `want`; otherwise what differs.
std::string Compare(const HostTensor& got, const HostTensor& want) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    return absl::StrCat("type ", got.TypeString(), " where the reference has ", want.TypeString());
  }
  std::vector<double> g = got.ToDoubles();
  std::vector<double> w = want.ToDoubles();
  double scale = 1.0;
  for (double v : w) {
    if (std::isfinite(v)) scale = std::max(scale, std::fabs(v));
  }
  bool exact = !IsFloating(want.dtype());
  double tol = Tolerance(want.dtype()) * scale;
  for (size_t i = 0; i < w.size(); ++i) {
    bool same;
    if (exact) {
      same = g[i] == w[i];
    } else if (std::isnan(w[i]) || std::isnan(g[i])) {
      same = std::isnan(w[i]) && std::isnan(g[i]);
    } else if (std::isinf(w[i]) || std::isinf(g[i])) {
      same = g[i] == w[i];
    } else {
      same = std::fabs(g[i] - w[i]) <= tol;
    }
    if (!same) {
      return absl::StrCat("element ", i, " is ", g[i], " where the reference has ", w[i],
                          " (tolerance ", tol, ")");
    }
  }
  return "";
}

std::shared_ptr<driver::Backend> Cpu() {
  // One compile thread and two run threads: the work is small, and the thread pool's
  // partitioning is exercised.
  static const std::shared_ptr<driver::Backend>* cpu = new std::shared_ptr<driver::Backend>(
      driver::CpuBackend({.codegen = {.compile_threads = 1}, .runtime = {.num_threads = 2}}));
  return *cpu;
}

void RunOne(const uint8_t* data, size_t size) {
  fuzz::ByteReader bytes(data, size);
  std::optional<fuzz::RandomGraph> r = fuzz::MakeRandomGraph(bytes);
  if (!r.has_value()) return;
  if (absl::Status s = Verify(r->graph); !s.ok()) {
    Finding(*r, absl::StrCat("the generated graph does not verify: ", s.ToString()));
  }
  // The graph too, before anything runs: a crash (no finding printed) then shows its input.
  if (Verbose()) std::cerr << "ops: " << absl::StrJoin(r->ops, ", ") << "\n" << PrintGraph(r->graph);

  absl::StatusOr<std::vector<HostTensor>> want = Interpret(r->graph, r->inputs);

  absl::StatusOr<Graph> copy = Graph::FromProto(r->graph.ToProto());
  if (!copy.ok()) Finding(*r, absl::StrCat("the graph does not round-trip: ", copy.status().ToString()));
  driver::DriverOptions options;
  options.backend = Cpu();
  options.cache = nullptr;
  absl::StatusOr<driver::CompileResult> compiled = driver::CompileGraph(*std::move(copy), options);
  if (!compiled.ok()) {
    if (Verbose()) std::cerr << "  compile: " << compiled.status() << "\n";
    if (compiled.status().code() == absl::StatusCode::kInternal) {
      Finding(*r, absl::StrCat("internal compile error: ", compiled.status().ToString()));
    }
    return;  // not supported by the CPU backend (the status says why)
  }
  if (compiled->executable == nullptr) return;  // code for another CPU: not on this host
  absl::StatusOr<std::vector<HostTensor>> got = compiled->executable->Run(r->inputs);
  if (Verbose()) {
    std::cerr << "  reference: " << (want.ok() ? "ok" : want.status().ToString())
              << "\n  cpu: " << (got.ok() ? "ok" : got.status().ToString()) << "\n";
  }
  if (want.ok() != got.ok()) {
    Finding(*r, absl::StrCat("the reference says ", want.ok() ? "ok" : want.status().ToString(),
                             " but the CPU backend says ", got.ok() ? "ok" : got.status().ToString()));
  }
  if (!want.ok()) return;
  if (got->size() != want->size()) {
    Finding(*r, absl::StrCat(got->size(), " outputs where the reference has ", want->size()));
  }
  for (size_t i = 0; i < want->size(); ++i) {
    std::string diff = Compare((*got)[i], (*want)[i]);
    if (!diff.empty()) Finding(*r, absl::StrCat("output ", i, ": ", diff));
  }
}

}  // namespace
}  // namespace coil

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  coil::RunOne(data, size);
  return 0;
}

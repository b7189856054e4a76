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
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "inductor/schedule.h"
#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/printer.h"
#include "ir/proto/schedule.pb.h"
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

// The kernels of `s` that store an arena buffer O and afterwards, in the same Loop, load at the
// same index an arena buffer I of O's dtype and shape that no later kernel reads: where a memory
// plan that let O take I's slot in place would overwrite I before reading it (the shape of the
// bug MayWriteInPlace now refuses). Printed with COIL_FUZZ_VERBOSE, so a campaign can count how
// often the generator makes them.
int StoreBeforeDyingLoadKernels(const proto::Schedule& s) {
  absl::flat_hash_map<int, const proto::Buffer*> buffers;
  for (const proto::Buffer& b : s.buffers()) buffers[b.id()] = &b;
  auto arena = [&](int id) {
    auto it = buffers.find(id);
    return it != buffers.end() && it->second->kind() == proto::Buffer::INTERMEDIATE ? it->second
                                                                                    : nullptr;
  };
  auto same_type = [](const proto::Buffer& a, const proto::Buffer& b) {
    if (a.dtype() != b.dtype() || a.shape_size() != b.shape_size()) return false;
    for (int d = 0; d < a.shape_size(); ++d) {
      if (a.shape(d).SerializeAsString() != b.shape(d).SerializeAsString()) return false;
    }
    return true;
  };
  auto index_key = [](const proto::Expr& e) {
    std::string key;
    for (const proto::SymExpr& i : e.index()) key += i.SerializeAsString() + "|";
    return key;
  };
  int count = 0;
  for (int k = 0; k < s.kernels_size(); ++k) {
    absl::flat_hash_set<int> read_later;
    for (int j = k + 1; j < s.kernels_size(); ++j) {
      for (int id : s.kernels(j).reads()) read_later.insert(id);
      for (int id : s.kernels(j).extern_inputs()) read_later.insert(id);
    }
    bool found = false;
    for (const proto::Loop& loop : s.kernels(k).loops()) {
      // Stores so far: index -> the arena buffers stored there.
      std::vector<std::pair<std::string, const proto::Buffer*>> stored;
      for (const proto::Expr& e : loop.body()) {
        const proto::Buffer* b = arena(e.buffer());
        if (b == nullptr) continue;
        if (e.kind() == proto::Expr::STORE) stored.push_back({index_key(e), b});
        if (e.kind() != proto::Expr::LOAD || read_later.contains(b->id())) continue;
        for (const auto& [key, out] : stored) {
          found = found || (out->id() != b->id() && key == index_key(e) && same_type(*out, *b));
        }
      }
    }
    count += found ? 1 : 0;
  }
  return count;
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
  if (Verbose() && compiled->schedule.has_value()) {
    std::cerr << inductor::SummarizeSchedule(*compiled->schedule)
              << "  store-before-dying-load kernels: "
              << StoreBeforeDyingLoadKernels(*compiled->schedule) << "\n";
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

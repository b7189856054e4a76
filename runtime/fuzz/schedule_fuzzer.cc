// libFuzzer entry point for the Schedule interpreter: the bytes are a serialized
// proto::Schedule (ParseFromArray), run by InterpretSchedule on small inputs made from the
// schedule's graph inputs (every symbol bound to 2; inputs over 64K elements are skipped) with
// poisoned dead buffers and small memory and iteration limits. Any status is fine; a crash,
// an abort, a hang or an out-of-memory is a bug. COIL_FUZZ_VERBOSE=1 prints each status.
//
// Build and run (see docs/fuzzing.md):
//   bazel --output_base=/root/.cache/bazel_fuzz build --config=fuzz //runtime/fuzz:schedule_fuzzer
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "google/protobuf/stubs/logging.h"
#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/proto/schedule.pb.h"
#include "runtime/host_tensor.h"
#include "runtime/schedule_interpreter.h"

namespace coil {
namespace {

constexpr int64_t kMaxInputElements = int64_t{1} << 16;
constexpr int64_t kSymbolValue = 2;

// One tensor per graph input, or false when an input cannot be made small (unknown dtype,
// negative or huge dims, an expression that does not evaluate).
bool MakeInputs(const Graph& g, std::vector<HostTensor>& out) {
  for (const Value* in : g.inputs()) {
    const TensorType& t = in->type();
    if (!IsValidDType(t.dtype)) return false;
    std::vector<int64_t> shape;
    int64_t numel = 1;
    for (const SymExpr& d : t.shape) {
      absl::flat_hash_map<std::string, int64_t> values;
      for (const std::string& s : d.Symbols()) values[s] = kSymbolValue;
      absl::StatusOr<int64_t> v = d.Evaluate(values);
      if (!v.ok() || *v < 0 || *v > kMaxInputElements) return false;
      numel *= *v;
      if (numel > kMaxInputElements) return false;
      shape.push_back(*v);
    }
    HostTensor x = HostTensor::Zeros(t.dtype, shape);
    for (int64_t i = 0; i < x.numel(); ++i) {
      // Small non-negative integers (valid gather indices for small dims), varied floats.
      if (IsFloating(t.dtype)) {
        x.StoreDouble(i, 0.25 * static_cast<double>(i % 7) - 0.5);
      } else {
        x.StoreInt(i, i % 2);
      }
    }
    out.push_back(x);
  }
  return true;
}

}  // namespace
}  // namespace coil

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Protobuf logs every string field with invalid UTF-8; that is noise here.
  static const bool quiet = (google::protobuf::SetLogHandler(nullptr), true);
  (void)quiet;
  coil::proto::Schedule s;
  if (!s.ParseFromArray(data, static_cast<int>(size))) return 0;
  coil::ScheduleInterpreterOptions options;
  options.poison_dead_buffers = true;
  options.external_data_dir = "/nonexistent/coil_schedule_fuzzer";
  options.max_memory_bytes = int64_t{4} << 20;
  options.max_iterations = int64_t{1} << 22;
  std::vector<coil::HostTensor> inputs;
  absl::StatusOr<coil::Graph> g = coil::Graph::FromProto(s.graph());
  if (g.ok() && !coil::MakeInputs(*g, inputs)) return 0;
  // With a graph that does not load, the interpreter must still say so (no inputs needed).
  absl::StatusOr<std::vector<coil::HostTensor>> out = coil::InterpretSchedule(s, inputs, options);
  static const bool verbose = std::getenv("COIL_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::cerr << "schedule_fuzzer: " << (out.ok() ? "OK" : out.status().ToString()) << "\n";
  return 0;
}

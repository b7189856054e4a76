// The ONNX backend conformance runner: runs ONNX's backend test directories through coil's
// ONNX importer and the reference interpreter, and classifies each test.
//
// A test directory holds model.onnx and test_data_set_N/{input_K.pb, output_K.pb} (ONNX
// TensorProtos; input K feeds the K-th graph input that is not an initializer, output K is
// compared with the K-th graph output using ONNX's tolerances).
//
//   RunOptions options;
//   for (const std::string& dir : ListTestDirs(SuiteDir(kDefaultDataDir, "node"))) {
//     TestResult r = RunTest(dir, options);   // never crashes: isolated in a child process
//   }
//
// Outcomes: passed; failed (wrong numbers, with the worst element; an import or run error
// that is not "unsupported"; a crash or timeout of the isolated child); unsupported (the
// importer, a kernel or the test data uses something coil does not implement: an op, an
// attribute value, a sequence/optional/map value, a string or unsigned tensor).
#ifndef COIL_TESTS_ONNX_CONFORMANCE_CONFORMANCE_H_
#define COIL_TESTS_ONNX_CONFORMANCE_CONFORMANCE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "runtime/host_tensor.h"
#include "tests/onnx_conformance/compare.h"

namespace coil::onnx_testing {

// Where Debian's libonnx-testdata installs the backend test data.
inline constexpr char kDefaultDataDir[] = "/usr/share/libonnx-testdata/data";
// The suites (subfolders of the data folder), in report order.
inline constexpr absl::string_view kSuites[] = {"node", "pytorch-converted", "pytorch-operator",
                                                "simple"};

enum class Outcome { kPassed, kFailed, kUnsupported };
// "passed", "failed", "unsupported".
absl::string_view OutcomeName(Outcome o);

struct TestResult {
  std::string suite;  // the test folder's parent folder name, e.g. "node"
  std::string name;   // the test folder's name, e.g. "test_abs"
  Outcome outcome = Outcome::kFailed;
  // Empty when passed; otherwise what failed or what is unsupported.
  std::string message;
  // For unsupported tests, what is missing, for grouping: "op Loop", "kernel aten.foo",
  // "sequence type", "element type STRING", "domain ai.onnx.ml"... (see UnsupportedFeature).
  std::string unsupported;
  double seconds = 0;
};

// What runs an imported test graph: "reference" (the reference interpreter on the imported
// aten graph), "schedule" (the compile driver's prims and inductor, the Schedule run by the
// Schedule interpreter with freed buffers poisoned), or a pipeline registered by name (the
// compiled backends register theirs from the binaries that link them, so this library stays
// free of LLVM). In every pipeline but "reference", any error after import is a failure.
using CompiledRunner =
    std::function<absl::StatusOr<std::vector<HostTensor>>(absl::Span<const HostTensor>)>;
using GraphCompiler =
    std::function<absl::StatusOr<CompiledRunner>(const Graph& graph, const std::string& test_dir)>;
// `warm_up`, when given, runs once in the parent process before its first isolated test:
// what every test's forked child would otherwise redo (loading a library, say) is then
// inherited. It must leave no threads behind (a forked child has only the forking thread).
void RegisterPipeline(const std::string& name, GraphCompiler compiler,
                      std::function<void()> warm_up = nullptr);
// nullptr for an unknown name ("reference" and "schedule" are built in and not listed).
const GraphCompiler* FindPipeline(absl::string_view name);

struct RunOptions {
  Tolerance tolerance;
  std::string pipeline = "reference";
  // Run each test in a forked child so that a crash or hang fails that test only.
  bool isolate = true;
  // Per-test time limit when isolated (seconds, >= 1).
  int timeout_s = 300;
};

// OK when the options can run: a valid tolerance (CheckTolerance) and timeout_s >= 1.
// Otherwise InvalidArgument naming the option ("timeout -1 s is not >= 1").
absl::Status CheckRunOptions(const RunOptions& options);

// The test folders (those holding model.onnx) under `suite_dir`, sorted by name.
std::vector<std::string> ListTestDirs(const std::string& suite_dir);

// Runs one test folder (isolated when options.isolate). Invalid options (CheckRunOptions)
// fail the test with their message.
TestResult RunTest(const std::string& dir, const RunOptions& options);

// The grouping key of an unsupported-status message: the op, attribute or type it names.
std::string UnsupportedFeature(absl::string_view message);

struct SuiteSummary {
  int passed = 0;
  int failed = 0;
  int unsupported = 0;
  int total() const { return passed + failed + unsupported; }
  // passed / total, 0 for an empty suite.
  double pass_rate() const;
};

SuiteSummary Summarize(absl::Span<const TestResult> results);

// Every result as JSON: {"suites": {NAME: {passed, failed, unsupported, total}}, "tests":
// [{suite, name, result, message, unsupported, seconds}]} plus the given header fields.
std::string ResultsToJson(absl::Span<const TestResult> results, absl::string_view data_dir,
                          absl::string_view backend);

}  // namespace coil::onnx_testing

#endif  // COIL_TESTS_ONNX_CONFORMANCE_CONFORMANCE_H_

// The ONNX commands: import a model, run the conformance suites.
#include "tools/coil/onnx_commands.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "capture/onnx/onnx_importer.h"
#include "ir/printer.h"
#include "runtime/cuda/executable.h"
#include "tests/onnx_conformance/conformance.h"
#include "tools/coil/args.h"
#include "tools/coil/progress.h"
#include "tools/coil/graph_io.h"

namespace coil::cli {
namespace {

namespace fs = std::filesystem;
using onnx_testing::TestResult;

int Fail(const absl::Status& s) {
  std::cerr << "coil: " << s.message() << "\n";
  return 1;
}

// "-o FILE" is the short form of "--output FILE".
std::vector<std::string> ExpandShortOutput(std::vector<std::string> argv) {
  for (std::string& a : argv) {
    if (a == "-o") a = "--output";
  }
  return argv;
}

// The suites to run: (suite name, folder of test folders) pairs, or a single test folder.
struct Selection {
  std::vector<std::pair<std::string, std::string>> suites;
  std::string single_test;  // a folder holding model.onnx
};

absl::StatusOr<Selection> Select(const std::string& dir, const std::string& suite) {
  Selection sel;
  if (fs::exists(fs::path(dir) / "model.onnx")) {
    sel.single_test = dir;
    return sel;
  }
  bool known = suite == "all";
  for (absl::string_view s : onnx_testing::kSuites) known |= suite == s;
  if (!known) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--suite must be node, pytorch-converted, pytorch-operator, simple or all; got '", suite, "'"));
  }
  // A folder of test folders that holds none of the known suites: run it as one suite.
  bool has_suites = false;
  for (absl::string_view s : onnx_testing::kSuites) {
    has_suites |= fs::is_directory(absl::StrCat(dir, "/", s));
  }
  if (suite == "all" && !has_suites && !onnx_testing::ListTestDirs(dir).empty()) {
    fs::path p = fs::path(dir).lexically_normal();
    if (!p.has_filename()) p = p.parent_path();  // "a/suite/"
    sel.suites.emplace_back(p.filename().string(), dir);
    return sel;
  }
  for (absl::string_view s : onnx_testing::kSuites) {
    if (suite != "all" && suite != s) continue;
    std::string path = absl::StrCat(dir, "/", s);
    if (!fs::is_directory(path)) {
      return absl::NotFoundError(absl::StrCat("no suite folder '", path,
                                              "' (is libonnx-testdata installed? see --dir)"));
    }
    sel.suites.emplace_back(std::string(s), path);
  }
  return sel;
}

void PrintVerbose(const TestResult& r) {
  std::printf("  %s/%s: %s (%.2f s)%s%s\n", r.suite.c_str(), r.name.c_str(),
              std::string(onnx_testing::OutcomeName(r.outcome)).c_str(), r.seconds,
              r.message.empty() ? "" : ": ", r.message.c_str());
  std::fflush(stdout);
}

void PrintSummary(const std::string& suite, absl::Span<const TestResult> results) {
  onnx_testing::SuiteSummary s = onnx_testing::Summarize(results);
  std::printf("%s: %d passed, %d failed, %d unsupported\n", suite.c_str(), s.passed, s.failed,
              s.unsupported);
  std::fflush(stdout);
}

}  // namespace

int ImportCommand(const std::vector<std::string>& argv) {
  absl::StatusOr<Args> args = ParseArgs(ExpandShortOutput(argv), {"output"}, {"text", "help"});
  if (!args.ok()) return Fail(args.status());
  if (args->positional.size() != 1 || (!args->values.count("output") && !args->Has("text")) ||
      args->Has("help")) {
    return Usage("usage: coil import MODEL.onnx (-o GRAPH.pb | --text)\n"
                 "  Imports an ONNX model into a coil graph: -o writes a binary coil.proto.Graph,\n"
                 "  --text prints the graph as text IR.\n",
                 args->Has("help"));
  }
  absl::StatusOr<proto::Graph> g = onnx::ImportOnnxFile(args->positional[0]);
  if (!g.ok()) return Fail(absl::Status(g.status().code(), absl::StrCat(args->positional[0], ": ", g.status().message())));
  if (args->values.count("output")) {
    if (absl::Status s = WriteFile(args->Get("output"), g->SerializeAsString()); !s.ok()) return Fail(s);
  }
  if (args->Has("text")) {
    absl::StatusOr<Graph> graph = Graph::FromProto(*g);
    if (!graph.ok()) return Fail(graph.status());
    std::cout << PrintGraph(*graph);
  }
  return 0;
}

int ConformanceCommand(const std::vector<std::string>& argv) {
  absl::StatusOr<Args> args =
      ParseArgs(argv, {"suite", "json", "backend", "dir", "filter", "timeout", "rtol", "atol"},
                {"verbose", "help"});
  if (!args.ok()) return Fail(args.status());
  if (!args->positional.empty() || args->Has("help")) {
    return Usage("usage: coil conformance [--suite node|pytorch-converted|pytorch-operator|simple|all]\n"
                 "                        [--json FILE] [--backend reference|schedule|cpu] [--dir PATH]\n"
                 "                        [--filter SUBSTRING] [--timeout SECONDS] [--verbose]\n"
                 "                        [--rtol R] [--atol A]   (ONNX's 1e-3 and 1e-7 by default)\n"
                 "  Runs ONNX's backend test folders (model.onnx + test_data_set_N) through the\n"
                 "  ONNX importer and a backend, and prints per suite\n"
                 "  'SUITE: P passed, F failed, U unsupported'. --dir is the data folder (default\n"
                 "  /usr/share/libonnx-testdata/data), a suite folder, or one test folder.\n"
                 "  --backend schedule runs prims::Decompose + inductor + the Schedule interpreter;\n"
                 "  --backend cpu compiles each model with the CPU backend (LLVM JIT).\n"
                 "  Exit status 1 when a test failed.\n",
                 args->Has("help"));
  }
  std::string backend = args->Get("backend", "reference");
  onnx_testing::RunOptions options;
  if (backend != "reference" && onnx_testing::FindPipeline(backend) == nullptr) {
    return Fail(absl::UnimplementedError(absl::StrCat(
        "backend '", backend, "' is not built yet (available: reference, schedule, cpu, cuda, cuda_nvrtc)")));
  }
  // Without a driver every test would fail the same way: say it once.
  if (backend == "cuda") {
    if (absl::Status s = cuda::CudaExecutable::DriverStatus(); !s.ok()) {
      return Fail(absl::FailedPreconditionError(absl::StrCat("--backend cuda: ", s.message())));
    }
  }
  options.pipeline = backend;
  if (args->values.count("timeout") &&
      (!absl::SimpleAtoi(args->Get("timeout"), &options.timeout_s) || options.timeout_s < 1)) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        "--timeout expects whole seconds >= 1, got '", args->Get("timeout"), "'")));
  }
  for (const char* flag : {"rtol", "atol"}) {
    if (!args->values.count(flag)) continue;
    double v;
    // SimpleAtod accepts "nan" and "inf": a NaN tolerance would pass every wrong output.
    if (!absl::SimpleAtod(args->Get(flag), &v) || !std::isfinite(v) || v < 0) {
      return Fail(absl::InvalidArgumentError(absl::StrCat(
          "--", flag, " expects a finite number >= 0, got '", args->Get(flag), "'")));
    }
    (std::string(flag) == "rtol" ? options.tolerance.rtol : options.tolerance.atol) = v;
  }
  if (absl::Status s = onnx_testing::CheckRunOptions(options); !s.ok()) return Fail(s);
  std::string dir = args->Get("dir", onnx_testing::kDefaultDataDir);
  absl::StatusOr<Selection> sel = Select(dir, args->Get("suite", "all"));
  if (!sel.ok()) return Fail(sel.status());
  bool verbose = args->Has("verbose");
  std::string filter = args->Get("filter");

  std::vector<TestResult> all;
  if (!sel->single_test.empty()) {
    TestResult r = onnx_testing::RunTest(sel->single_test, options);
    PrintVerbose(r);
    all.push_back(r);
    PrintSummary(r.suite, all);
  }
  for (const auto& [suite, path] : sel->suites) {
    std::vector<std::string> tests;
    for (const std::string& test : onnx_testing::ListTestDirs(path)) {
      if (filter.empty() || absl::StrContains(fs::path(test).filename().string(), filter)) {
        tests.push_back(test);
      }
    }
    std::vector<TestResult> results;
    {
      Progress progress(suite, static_cast<int>(tests.size()));
      for (const std::string& test : tests) {
        progress.Start(fs::path(test).filename().string());
        TestResult r = onnx_testing::RunTest(test, options);
        r.suite = suite;
        if (verbose) {
          progress.Clear();
          PrintVerbose(r);
        }
        results.push_back(r);
      }
    }
    PrintSummary(suite, results);
    all.insert(all.end(), results.begin(), results.end());
  }
  if (args->values.count("json")) {
    std::string json = onnx_testing::ResultsToJson(all, dir, backend);
    if (absl::Status s = WriteFile(args->Get("json"), json); !s.ok()) return Fail(s);
  }
  for (const TestResult& r : all) {
    if (r.outcome == onnx_testing::Outcome::kFailed) return 1;
  }
  return 0;
}

}  // namespace coil::cli

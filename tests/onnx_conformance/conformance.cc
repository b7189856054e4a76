// Running one ONNX backend test folder: type checks, import, data sets, interpreter, compare;
// and the forked isolation that turns a crash or hang into a failed result.
#include "tests/onnx_conformance/conformance.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "capture/onnx/onnx/onnx.pb.h"
#include "capture/onnx/onnx_importer.h"
#include "ir/graph.h"
#include "ir/io/read_file.h"
#include "ir/verifier.h"
#include "runtime/interpreter.h"
#include "runtime/schedule_interpreter.h"
#include "tests/onnx_conformance/onnx_tensor.h"
#include "tools/driver/driver.h"
#include "tools/driver/schedule_backend.h"

namespace coil::onnx_testing {
namespace {

namespace fs = std::filesystem;

TestResult Passed() {
  TestResult r;
  r.outcome = Outcome::kPassed;
  return r;
}

TestResult Failed(std::string message) {
  TestResult r;
  r.outcome = Outcome::kFailed;
  r.message = std::move(message);
  return r;
}

TestResult Unsupported(std::string message, std::string feature = "") {
  TestResult r;
  r.outcome = Outcome::kUnsupported;
  r.unsupported = feature.empty() ? UnsupportedFeature(message) : std::move(feature);
  r.message = std::move(message);
  return r;
}

// An error status becomes unsupported (Unimplemented) or failed (anything else).
TestResult FromError(const absl::Status& s, absl::string_view stage) {
  std::string message = absl::StrCat(stage, ": ", s.message());
  if (absl::IsUnimplemented(s)) return Unsupported(std::move(message), UnsupportedFeature(s.message()));
  return Failed(absl::StrCat(message, " [", absl::StatusCodeToString(s.code()), "]"));
}


// Graph inputs and outputs whose values coil cannot represent: sequences, optionals, maps,
// sparse tensors, and element types without a coil dtype.
TestResult CheckValueTypes(const ::onnx::GraphProto& g) {
  std::vector<std::string> initializers;
  for (const auto& t : g.initializer()) initializers.push_back(t.name());
  auto check = [&](const ::onnx::ValueInfoProto& v, absl::string_view role) -> TestResult {
    const ::onnx::TypeProto& t = v.type();
    std::string kind;
    switch (t.value_case()) {
      case ::onnx::TypeProto::kTensorType: {
        if (!t.tensor_type().has_elem_type()) return Passed();
        absl::StatusOr<DType> d = DTypeFromOnnx(t.tensor_type().elem_type());
        if (d.ok()) return Passed();
        std::string type = OnnxTypeName(t.tensor_type().elem_type());
        return Unsupported(absl::StrCat(role, " '", v.name(), "' has element type ", type),
                           absl::StrCat("element type ", type));
      }
      case ::onnx::TypeProto::kSequenceType: kind = "sequence"; break;
      case ::onnx::TypeProto::kMapType: kind = "map"; break;
      case ::onnx::TypeProto::kOptionalType: kind = "optional"; break;
      case ::onnx::TypeProto::kSparseTensorType: kind = "sparse tensor"; break;
      default: return Passed();  // untyped: leave it to the importer
    }
    return Unsupported(absl::StrCat(role, " '", v.name(), "' is ", kind == "optional" ? "an " : "a ",
                                    kind, " value"),
                       absl::StrCat(kind, " type"));
  };
  for (const auto& v : g.input()) {
    if (std::find(initializers.begin(), initializers.end(), v.name()) != initializers.end()) continue;
    if (TestResult r = check(v, "input"); r.outcome != Outcome::kPassed) return r;
  }
  for (const auto& v : g.output()) {
    if (TestResult r = check(v, "output"); r.outcome != Outcome::kPassed) return r;
  }
  return Passed();
}

// test_data_set_N folders, by N.
std::vector<std::string> DataSets(const std::string& dir) {
  std::vector<std::pair<int, std::string>> sets;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    absl::string_view rest = name;
    int n;
    if (e.is_directory() && absl::ConsumePrefix(&rest, "test_data_set_") && absl::SimpleAtoi(rest, &n)) {
      sets.emplace_back(n, e.path().string());
    }
  }
  std::sort(sets.begin(), sets.end());
  std::vector<std::string> out;
  for (auto& s : sets) out.push_back(std::move(s.second));
  return out;
}

// A data set file the model has no place for: prefix_K.pb with K >= count (the model has
// `count` of them). Such a file is a broken test case, never ignored; the smallest K is named.
absl::Status CheckNoExtraFiles(const std::string& set_dir, absl::string_view prefix, int count) {
  int extra = -1;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(set_dir, ec)) {
    std::string name = e.path().filename().string();
    absl::string_view rest = name;
    int k;
    if (absl::ConsumePrefix(&rest, absl::StrCat(prefix, "_")) && absl::ConsumeSuffix(&rest, ".pb") &&
        absl::SimpleAtoi(rest, &k) && k >= count && (extra < 0 || k < extra)) {
      extra = k;
    }
  }
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat("cannot list '", set_dir, "': ", ec.message()));
  }
  if (extra < 0) return absl::OkStatus();
  std::string allowed = count == 0   ? absl::StrCat("no ", prefix, "_K.pb")
                        : count == 1 ? absl::StrCat("only ", prefix, "_0.pb")
                                     : absl::StrCat("only ", prefix, "_0.pb to ", prefix, "_",
                                                    count - 1, ".pb");
  return absl::InvalidArgumentError(absl::StrCat(
      prefix, "_", extra, ".pb: the model has ", count, " ", prefix, count == 1 ? "" : "s",
      ", so the data set may hold ", allowed, " (a broken test case)"));
}

// Reads prefix_0.pb, prefix_1.pb, ... (count of them). A file that is missing, empty, not a
// regular file or not a TensorProto is a broken test case (InvalidArgument/NotFound, so it
// fails); only an element type coil lacks is Unimplemented (unsupported).
absl::StatusOr<std::vector<HostTensor>> ReadTensors(const std::string& set_dir,
                                                    absl::string_view prefix, int count) {
  if (absl::Status s = CheckNoExtraFiles(set_dir, prefix, count); !s.ok()) return s;
  std::vector<HostTensor> out;
  for (int k = 0; k < count; ++k) {
    std::string file = absl::StrCat(prefix, "_", k, ".pb");
    std::string path = absl::StrCat(set_dir, "/", file);
    absl::StatusOr<HostTensor> t = ReadOnnxTensorFile(path);
    if (!t.ok()) {
      // Name the file relative to the data set (the caller names the set).
      std::string message(t.status().message());
      absl::StrReplaceAll({{path, file}}, &message);
      if (!absl::StrContains(message, file)) message = absl::StrCat(file, ": ", message);
      return absl::Status(t.status().code(), message);
    }
    out.push_back(*std::move(t));
  }
  return out;
}

absl::flat_hash_map<std::string, GraphCompiler>& Pipelines() {
  static auto* pipelines = [] {
    auto* p = new absl::flat_hash_map<std::string, GraphCompiler>();
    // prims + inductor through the compile driver (stopping after inductor: the Schedule is
    // run here, by the Schedule interpreter with freed buffers poisoned, which the driver's
    // Schedule interpreter backend does not do).
    (*p)["schedule"] = [](const Graph& imported,
                          const std::string& dir) -> absl::StatusOr<CompiledRunner> {
      driver::DriverOptions compile;
      compile.backend = driver::ScheduleInterpreterBackend();
      compile.stop_after = driver::Stage::kInductor;
      compile.cache = nullptr;
      compile.external_data_dir = dir;
      absl::StatusOr<driver::CompileResult> r = driver::CompileGraph(imported.Clone(), compile);
      if (!r.ok()) return r.status();
      ScheduleInterpreterOptions options;
      options.external_data_dir = dir;
      options.poison_dead_buffers = true;
      auto shared = std::make_shared<proto::Schedule>(*std::move(r->schedule));
      return CompiledRunner([shared, options](absl::Span<const HostTensor> inputs) {
        return InterpretSchedule(*shared, inputs, options);
      });
    };
    return p;
  }();
  return *pipelines;
}

TestResult RunInProcess(const std::string& dir, const RunOptions& options) {
  absl::StatusOr<std::string> bytes = ReadInputFile(dir + "/model.onnx");
  if (!bytes.ok()) return Failed(std::string(bytes.status().message()));
  ::onnx::ModelProto model;
  if (!model.ParseFromString(*bytes)) return Failed("model.onnx is not an ONNX ModelProto");
  if (TestResult r = CheckValueTypes(model.graph()); r.outcome != Outcome::kPassed) return r;

  coil::onnx::ImportOptions import_options;
  import_options.external_data_dir = dir;
  absl::StatusOr<proto::Graph> imported = coil::onnx::ImportOnnxModel(*bytes, import_options);
  if (!imported.ok()) return FromError(imported.status(), "import");
  absl::StatusOr<Graph> graph = Graph::FromProto(*imported);
  if (!graph.ok()) return FromError(graph.status(), "imported graph is malformed");
  if (absl::Status s = Verify(*graph); !s.ok()) return FromError(s, "imported graph does not verify");

  int num_inputs = static_cast<int>(graph->inputs().size());
  int num_outputs = static_cast<int>(graph->outputs().size());
  if (num_outputs != model.graph().output_size()) {
    return Failed(absl::StrCat("imported graph has ", num_outputs, " outputs, the model ",
                               model.graph().output_size()));
  }
  std::vector<std::string> sets = DataSets(dir);
  if (sets.empty()) return Failed(absl::StrCat("no test_data_set_N folder in '", dir, "'"));
  InterpreterOptions interpreter_options;
  interpreter_options.external_data_dir = dir;
  // Every stage after import must accept a graph the importer built.
  CompiledRunner compiled;
  if (options.pipeline != "reference") {
    const GraphCompiler* compiler = FindPipeline(options.pipeline);
    if (compiler == nullptr) return Failed(absl::StrCat("unknown pipeline '", options.pipeline, "'"));
    absl::StatusOr<CompiledRunner> c = (*compiler)(*graph, dir);
    if (!c.ok()) return Failed(absl::StrCat(options.pipeline, ": ", c.status().message()));
    compiled = *std::move(c);
  }
  for (const std::string& set : sets) {
    std::string set_name = fs::path(set).filename().string();
    absl::StatusOr<std::vector<HostTensor>> inputs = ReadTensors(set, "input", num_inputs);
    if (!inputs.ok()) return FromError(inputs.status(), set_name);
    absl::StatusOr<std::vector<HostTensor>> expected = ReadTensors(set, "output", num_outputs);
    if (!expected.ok()) return FromError(expected.status(), set_name);
    absl::StatusOr<std::vector<HostTensor>> got =
        compiled ? compiled(*inputs) : Interpret(*graph, *inputs, interpreter_options);
    if (!got.ok()) {
      if (compiled) {
        return Failed(absl::StrCat(set_name, ": run (", options.pipeline, "): ",
                                   got.status().message()));
      }
      return FromError(got.status(), absl::StrCat(set_name, ": run"));
    }
    for (int k = 0; k < num_outputs; ++k) {
      absl::Status s = CompareTensors((*got)[k], (*expected)[k], options.tolerance);
      if (!s.ok()) {
        return Failed(absl::StrCat(set_name, ": output ", k, " ('", model.graph().output(k).name(),
                                   "'): ", s.message()));
      }
    }
  }
  return Passed();
}

// The child's result travels through a pipe as "outcome\nfeature\nmessage".
std::string Encode(const TestResult& r) {
  return absl::StrCat(static_cast<int>(r.outcome), "\n", r.unsupported, "\n", r.message);
}

bool Decode(const std::string& s, TestResult& r) {
  std::vector<std::string> parts = absl::StrSplit(s, absl::MaxSplits('\n', 2));
  int outcome;
  if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &outcome) || outcome < 0 || outcome > 2) {
    return false;
  }
  r.outcome = static_cast<Outcome>(outcome);
  r.unsupported = parts[1];
  r.message = parts[2];
  return true;
}

absl::flat_hash_map<std::string, std::function<void()>>& WarmUps() {
  static auto* warm_ups = new absl::flat_hash_map<std::string, std::function<void()>>();
  return *warm_ups;
}

// Runs the pipeline's warm-up once per process, in the parent (see RegisterPipeline).
void WarmUpOnce(const std::string& pipeline) {
  auto it = WarmUps().find(pipeline);
  if (it == WarmUps().end() || !it->second) return;
  std::function<void()> warm_up = std::move(it->second);
  it->second = nullptr;
  warm_up();
}

TestResult RunIsolated(const std::string& dir, const RunOptions& options) {
  WarmUpOnce(options.pipeline);
  int fds[2];
  if (pipe(fds) != 0) return Failed(absl::StrCat("pipe: ", std::strerror(errno)));
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return Failed(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    close(fds[0]);
    alarm(options.timeout_s);
    std::string out = Encode(RunInProcess(dir, options));
    const char* p = out.data();
    size_t left = out.size();
    while (left > 0) {
      ssize_t n = write(fds[1], p, left);
      if (n <= 0) _exit(3);
      p += n;
      left -= static_cast<size_t>(n);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string data;
  char buf[4096];
  while (true) {
    ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  TestResult r;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && Decode(data, r)) return r;
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
    return Failed(absl::StrCat("timed out after ", options.timeout_s, " s"));
  }
  if (WIFSIGNALED(status)) {
    return Failed(absl::StrCat("crashed: signal ", WTERMSIG(status), " (", strsignal(WTERMSIG(status)), ")"));
  }
  return Failed(absl::StrCat("crashed: exit status ", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                             " (see the log for the child's output)"));
}

}  // namespace

absl::string_view OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kPassed: return "passed";
    case Outcome::kFailed: return "failed";
    case Outcome::kUnsupported: return "unsupported";
  }
  return "?";
}

std::vector<std::string> ListTestDirs(const std::string& suite_dir) {
  std::vector<std::string> dirs;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(suite_dir, ec)) {
    if (e.is_directory() && fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path().string());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

absl::Status CheckRunOptions(const RunOptions& options) {
  if (absl::Status s = CheckTolerance(options.tolerance); !s.ok()) return s;
  if (options.timeout_s < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("timeout ", options.timeout_s, " s is not >= 1"));
  }
  return absl::OkStatus();
}

TestResult RunTest(const std::string& dir, const RunOptions& options) {
  auto start = std::chrono::steady_clock::now();
  absl::Status valid = CheckRunOptions(options);
  TestResult r = !valid.ok()       ? Failed(absl::StrCat("invalid options: ", valid.message()))
                 : options.isolate ? RunIsolated(dir, options)
                                   : RunInProcess(dir, options);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fs::path p = fs::path(dir).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  r.name = p.filename().string();
  r.suite = p.parent_path().filename().string();
  return r;
}

void RegisterPipeline(const std::string& name, GraphCompiler compiler,
                      std::function<void()> warm_up) {
  Pipelines()[name] = std::move(compiler);
  WarmUps()[name] = std::move(warm_up);
}

const GraphCompiler* FindPipeline(absl::string_view name) {
  auto it = Pipelines().find(name);
  return it == Pipelines().end() ? nullptr : &it->second;
}

}  // namespace coil::onnx_testing

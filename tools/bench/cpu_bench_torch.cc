// RunTorchEager: runs torch_eager.py and reads its JSON (see cpu_bench_torch.h).
#include "tools/bench/cpu_bench_torch.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "google/protobuf/util/json_util.h"
#include "runtime/cuda/executable.h"

namespace coil::bench {
namespace {

std::string Quote(const std::string& s) {
  return absl::StrCat("'", absl::StrReplaceAll(s, {{"'", "'\\''"}}), "'");
}

bool IsFile(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

}  // namespace

absl::StatusOr<std::string> FindTorchScript(const std::string& flag, const std::string& name) {
  if (!flag.empty()) {
    if (IsFile(flag)) return flag;
    return absl::NotFoundError(absl::StrCat("--torch-script: no such file '", flag, "'"));
  }
  const std::string in_tree = absl::StrCat("tools/bench/", name);
  std::vector<std::string> candidates;
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(absl::StrCat(exe.string(), ".runfiles/coil/", in_tree));
  if (const char* r = std::getenv("RUNFILES_DIR"); r != nullptr) {
    candidates.push_back(absl::StrCat(r, "/coil/", in_tree));
  }
  if (const char* w = std::getenv("BUILD_WORKSPACE_DIRECTORY"); w != nullptr) {
    candidates.push_back(absl::StrCat(w, "/", in_tree));
  }
  candidates.push_back(in_tree);
  for (const std::string& c : candidates) {
    if (IsFile(c)) return c;
  }
  return absl::NotFoundError(absl::StrCat("cannot find ", name, " (tried ",
                                          absl::StrJoin(candidates, ", "),
                                          "); run from the repository root or pass "
                                          "--torch-script PATH"));
}

std::string TorchEagerCommand(const TorchEagerRequest& r) {
  const TimingPolicy& t = r.timing;
  // OMP_NUM_THREADS too: torch's OpenMP pool is sized before set_num_threads runs.
  return absl::StrCat(
      "OMP_NUM_THREADS=", r.threads, " ", Quote(r.python), " ", Quote(r.script), " --out ",
      Quote(r.out_dir), " --size ", r.quick ? "quick" : "full", " --models ",
      Quote(absl::StrJoin(r.models, ",")),
      r.batches.empty() ? "" : absl::StrCat(" --batches ", absl::StrJoin(r.batches, ",")),
      " --threads ", r.threads, " --warmup ", t.warmup, " --min-reps ", t.min_reps, " --max-reps ",
      t.max_reps, " --min-seconds ", t.min_seconds,
      r.device == "cpu" ? "" : absl::StrCat(" --device ", Quote(r.device)),
      // CUDA: torch's calls in samples by coil's own rule (executable.h's PassesForSample).
      r.device != "cuda" ? "" : absl::StrCat(" --sample-ms ", cuda::CudaExecutable::kSampleMs,
                                             " --max-passes ",
                                             cuda::CudaExecutable::kMaxTimedPasses));
}

absl::StatusOr<TorchEagerResults> ParseTorchEagerJson(const std::string& json,
                                                      const TorchEagerRequest& request) {
  TorchEagerResults results;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(json, &results, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("torch_eager.py printed no valid results: ", status.message().ToString()));
  }
  for (const std::string& name : request.models) {
    const TorchEagerModel* model = nullptr;
    for (const TorchEagerModel& m : results.models()) {
      if (m.name() == name) model = &m;
    }
    if (model == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("torch_eager.py: no results for ", name));
    }
    if (model->onnx().empty()) {
      return absl::InvalidArgumentError(absl::StrCat("torch_eager.py: ", name, " has no onnx"));
    }
    if (request.batches.empty() && model->runs().empty()) {
      return absl::InvalidArgumentError(absl::StrCat("torch_eager.py: ", name, " has no runs"));
    }
    std::vector<int> batches = request.batches;
    if (batches.empty()) {
      for (const TorchEagerRun& r : model->runs()) batches.push_back(r.batch());
    }
    for (int batch : batches) {
      const TorchEagerRun* run = nullptr;
      for (const TorchEagerRun& r : model->runs()) {
        if (r.batch() == batch) run = &r;
      }
      if (run == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("torch_eager.py: no results for ", name, " batch ", batch));
      }
      if (!(run->median_ms() > 0) || !(run->min_ms() > 0) || run->reps() < 1 ||
          run->input().empty() || run->output().empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("torch_eager.py: ", name, " batch ", batch,
                         " needs positive median_ms/min_ms/reps and input/output files"));
      }
    }
  }
  return results;
}

absl::StatusOr<TorchEagerResults> RunTorchEager(const TorchEagerRequest& request) {
  const std::string command = TorchEagerCommand(request);
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    return absl::InternalError(absl::StrCat("cannot start: ", command));
  }
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  const int status = pclose(pipe);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string how = "killed by a signal";
    if (status == -1) how = "pclose failed";
    if (status != -1 && WIFEXITED(status)) how = absl::StrCat("exit status ", WEXITSTATUS(status));
    return absl::InternalError(
        absl::StrCat("torch_eager.py failed (", how, "; its messages are above): ", command));
  }
  return ParseTorchEagerJson(out, request);
}

}  // namespace coil::bench

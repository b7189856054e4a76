// StartPeerServer / RunRounds / the rounds report (see cpu_bench_rounds.h).
#include "tools/bench/cpu_bench_rounds.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/util/json_util.h"
#include "tests/onnx_conformance/onnx_tensor.h"
#include "tools/bench/cpu_bench_compile.h"
#include "tools/bench/cpu_bench_cpu_share.h"
#include "tools/bench/cpu_bench_peers.h"
#include "tools/bench/cpu_bench_timing.h"

namespace coil::bench {
namespace {

// One of a row's coil programs and its median per round.
struct Program {
  CompiledModel compiled;
  std::vector<double> round_ms;
};

// A row through the rounds: its results so far, coil's inputs and programs (empty when the row
// failed before timing), and the CPU ticks others took during coil's timed runs.
struct RowState {
  ModelRow row;
  std::vector<HostTensor> inputs;
  std::vector<Program> programs;
  CpuTimes others;  // summed deltas over copy 0's timed runs (valid while every one was)
};

double Median(std::vector<double> v) { return v.empty() ? 0 : SummarizeSamples(v).median_ms; }

double Median(const google::protobuf::RepeatedField<double>& v) {
  return Median(std::vector<double>(v.begin(), v.end()));
}

void StartRow(const TorchEagerModel& torch, const TorchEagerRun& run, ModelRow& row) {
  row.set_model(torch.name());
  row.set_batch(run.batch());
  row.set_config(torch.config());
  row.set_bytes(run.bytes());
  // The first pass's single calls are not measurements: the rounds replace every time.
  if (run.has_compiled()) {
    *row.mutable_compiled() = run.compiled();
    row.mutable_compiled()->clear_median_ms();
    row.mutable_compiled()->clear_min_ms();
    row.mutable_compiled()->clear_reps();
  }
  if (run.has_onnxruntime()) {
    *row.mutable_onnxruntime() = run.onnxruntime();
    row.mutable_onnxruntime()->clear_median_ms();
    row.mutable_onnxruntime()->clear_min_ms();
    row.mutable_onnxruntime()->clear_reps();
  }
}

// Compiles `copies` programs for the row, runs each once on torch's input and checks it.
void PrepareRow(const TorchEagerModel& torch, const TorchEagerRun& run,
                const RoundsOptions& options, RowState& s) {
  ModelRow& row = s.row;
  row.set_tolerance(options.model.tolerance);
  if (!torch.precision().empty()) {
    row.set_error(absl::StrCat("precision '", torch.precision(), "' is a coil bench cuda row"));
    return;
  }
  for (int i = -1; i < run.more_inputs_size(); ++i) {
    absl::StatusOr<HostTensor> x =
        onnx_testing::ReadOnnxTensorFile(i < 0 ? run.input() : run.more_inputs(i));
    if (!x.ok()) {
      row.set_error(std::string(x.status().message()));
      return;
    }
    s.inputs.push_back(*std::move(x));
  }
  absl::StatusOr<HostTensor> want = onnx_testing::ReadOnnxTensorFile(run.output());
  if (!want.ok()) {
    row.set_error(std::string(want.status().message()));
    return;
  }
  for (int c = 0; c < options.copies; ++c) {
    absl::StatusOr<CompiledModel> compiled =
        CompileOnnxModel(torch.onnx(), nullptr, options.model.threads);
    if (!compiled.ok()) {
      row.set_error(absl::StrCat("compile: ", compiled.status().message()));
      s.programs.clear();
      return;
    }
    if (c == 0) row.set_coil_compile_ms(compiled->total_ms);
    std::fprintf(stderr, "coil bench: %s batch %d compiled in %.0f ms (%d kernels)%s\n",
                 row.model().c_str(), row.batch(), compiled->total_ms, compiled->kernels,
                 options.copies > 1 ? absl::StrCat(", copy ", c).c_str() : "");
    // The first run: the program's measured choices (layouts, post-ops) are made here.
    absl::StatusOr<std::vector<HostTensor>> got = compiled->executable->Run(s.inputs);
    if (!got.ok()) {
      row.set_error(absl::StrCat("run: ", got.status().message()));
      s.programs.clear();
      return;
    }
    ModelRow check;
    CheckOutputs(*got, *want, row.tolerance(), check);
    if (c == 0 || !check.matches()) {
      row.set_matches(check.matches());
      row.set_max_relative_error(check.max_relative_error());
      row.set_error(check.error());
    }
    if (!check.matches()) {
      s.programs.clear();
      return;
    }
    s.programs.push_back(Program{*std::move(compiled), {}});
  }
}

// min(a, b) where 0 means "none yet".
double MinSoFar(double a, double b) { return a > 0 && (b <= 0 || a < b) ? a : b; }

// One round of the row's peers: appends their medians, or sets their errors.
absl::Status TimePeers(PeerServer& server, RowState& s) {
  ModelRow& row = s.row;
  absl::StatusOr<std::string> answer =
      server.Ask(absl::StrCat("time ", row.model(), " ", row.batch()));
  if (!answer.ok()) return answer.status();
  absl::StatusOr<PeerRound> round = ParsePeerRound(*answer);
  if (!round.ok()) return round.status();
  const PeerTiming& eager = round->eager();
  if (!eager.error().empty() || !(eager.median_ms() > 0)) {
    return absl::InternalError(absl::StrCat("torch eager failed on ", row.model(), " batch ",
                                            row.batch(), " in a round: ", eager.error()));
  }
  row.add_torch_round_ms(eager.median_ms());
  row.set_torch_min_ms(MinSoFar(eager.min_ms(), row.torch_min_ms()));
  auto add = [](const PeerTiming& got, bool present, PeerTiming& p) {
    if (!present || !p.error().empty()) return;  // absent, or failed before (it stays failed)
    if (!got.error().empty()) {
      p.set_error(got.error());
      return;
    }
    p.add_round_ms(got.median_ms());
    p.set_min_ms(MinSoFar(got.min_ms(), p.min_ms()));
    p.set_reps(p.reps() + got.reps());
  };
  if (row.has_compiled()) add(round->compiled(), round->has_compiled(), *row.mutable_compiled());
  if (row.has_onnxruntime()) {
    add(round->onnxruntime(), round->has_onnxruntime(), *row.mutable_onnxruntime());
  }
  return absl::OkStatus();
}

// One round of the row's coil programs (in order, or reversed); copy 0's CPU shares counted.
void TimeCoil(const RoundsOptions& options, bool reversed, RowState& s) {
  ModelRow& row = s.row;
  const int n = static_cast<int>(s.programs.size());
  for (int k = 0; k < n; ++k) {
    const int c = reversed ? n - 1 - k : k;
    driver::Executable& program = *s.programs[c].compiled.executable;
    const CpuTimes before = ReadCpuTimes();
    absl::StatusOr<Timing> t =
        TimeRuns(options.model.timing, [&] { return program.Run(s.inputs).status(); });
    const CpuTimes after = ReadCpuTimes();
    if (!t.ok()) {
      row.set_error(absl::StrCat("run: ", t.status().message()));
      row.set_matches(false);
      s.programs.clear();
      return;
    }
    s.programs[c].round_ms.push_back(t->median_ms);
    if (c != 0) continue;
    row.add_coil_round_ms(t->median_ms);
    row.set_coil_min_ms(MinSoFar(t->min_ms, row.coil_min_ms()));
    row.set_reps(row.reps() + t->reps);
    CpuTimes& o = s.others;
    o.valid = o.valid && before.valid && after.valid;
    o.busy += after.busy - before.busy;
    o.steal += after.steal - before.steal;
    o.total += after.total - before.total;
    o.self += after.self - before.self;
  }
}

std::string Spread(double s) { return s > 0 ? absl::StrFormat("%.2fx", s) : std::string("-"); }

std::string RoundList(const google::protobuf::RepeatedField<double>& v) {
  std::vector<std::string> parts;
  for (double ms : v) parts.push_back(absl::StrFormat("%.3f", ms));
  return absl::StrJoin(parts, ", ");
}

}  // namespace

absl::StatusOr<TorchEagerResults> StartPeerServer(const TorchEagerRequest& request,
                                                  std::unique_ptr<PeerServer>& server) {
  absl::StatusOr<std::unique_ptr<PeerServer>> s =
      PeerServer::Start(TorchEagerCommand(request) + " --serve");
  if (!s.ok()) return s.status();
  server = *std::move(s);
  absl::StatusOr<std::string> first = server->ReadLine();
  if (!first.ok()) return first.status();
  return ParseTorchEagerJson(*first, request);
}

absl::StatusOr<PeerRound> ParsePeerRound(const std::string& json) {
  PeerRound round;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(json, &round, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("the peer script answered '", json.substr(0, 200),
                                                   "', not a round: ",
                                                   status.message().ToString()));
  }
  if (!round.has_eager()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the peer script's round has no torch eager time: '", json, "'"));
  }
  return round;
}

double RoundSpread(const google::protobuf::RepeatedField<double>& round_ms) {
  if (round_ms.empty()) return 0;
  const auto [lo, hi] = std::minmax_element(round_ms.begin(), round_ms.end());
  return *lo > 0 ? *hi / *lo : 0;
}

void SummarizeRounds(ModelRow& row) {
  row.set_torch_ms(Median(row.torch_round_ms()));
  const bool timed = row.matches() && !row.coil_round_ms().empty();
  row.set_coil_ms(timed ? Median(row.coil_round_ms()) : 0);
  row.set_speedup(timed && row.torch_ms() > 0 ? row.torch_ms() / row.coil_ms() : 0);
  for (PeerTiming* p : {row.mutable_compiled(), row.mutable_onnxruntime()}) {
    p->set_median_ms(Median(p->round_ms()));
  }
  if (!row.has_compiled() || row.compiled().ByteSizeLong() == 0) row.clear_compiled();
  if (!row.has_onnxruntime() || row.onnxruntime().ByteSizeLong() == 0) row.clear_onnxruntime();
}

absl::Status RunRounds(const TorchEagerResults& torch, PeerServer& server,
                       const RoundsOptions& options, CpuBenchResults& results) {
  std::vector<RowState> rows;
  for (const TorchEagerModel& m : torch.models()) {
    for (const TorchEagerRun& run : m.runs()) {
      RowState& s = rows.emplace_back();
      StartRow(m, run, s.row);
      s.others.valid = true;
      PrepareRow(m, run, options, s);
    }
  }
  const int n = static_cast<int>(rows.size());
  for (int r = 0; r < options.rounds; ++r) {
    const bool odd = r % 2 == 1;
    for (int k = 0; k < n; ++k) {
      RowState& s = rows[odd ? n - 1 - k : k];
      const bool coil = !s.programs.empty();
      if (odd && coil) TimeCoil(options, odd, s);
      if (absl::Status st = TimePeers(server, s); !st.ok()) return st;
      if (!odd && coil) TimeCoil(options, odd, s);
      const ModelRow& row = s.row;
      auto last = [](const PeerTiming& p) {
        return p.round_ms().empty() ? std::string("-")
                                    : absl::StrFormat("%.3f", p.round_ms(p.round_ms_size() - 1));
      };
      std::fprintf(stderr,
                   "coil bench: round %d/%d %s batch %d (%s first): eager %.3f, compile %s, ORT "
                   "%s, coil %s ms\n",
                   r + 1, options.rounds, row.model().c_str(), row.batch(),
                   odd ? "coil" : "peers", row.torch_round_ms(row.torch_round_ms_size() - 1),
                   last(row.compiled()).c_str(), last(row.onnxruntime()).c_str(),
                   row.coil_round_ms().empty()
                       ? "-"
                       : absl::StrFormat("%.3f", row.coil_round_ms(row.coil_round_ms_size() - 1))
                             .c_str());
    }
  }
  for (RowState& s : rows) {
    ModelRow& row = s.row;
    SummarizeRounds(row);
    if (s.programs.size() > 1) {
      for (const Program& p : s.programs) row.add_coil_copy_ms(Median(p.round_ms));
    }
    CpuTimes zero;
    zero.valid = true;
    const CpuShares shares = SharesBetween(zero, s.others);
    row.set_other_cpu_share(s.others.valid && shares.valid ? shares.other : -1);
    row.set_steal_cpu_share(s.others.valid && shares.valid ? shares.steal : -1);
    SetPeerRatios(row, row.tolerance());
    *results.add_models() = std::move(row);
  }
  return absl::OkStatus();
}

void AppendRoundsReport(const CpuBenchResults& r, std::string& out) {
  if (r.rounds() <= 0) return;
  absl::StrAppendFormat(
      &out,
      "\nrounds: %d (per row, torch eager, torch.compile, ONNX Runtime and coil timed in "
      "alternation, each round under the timing policy; the ms above are medians of the round "
      "medians; spread = slowest round median / fastest)\n",
      r.rounds());
  absl::StrAppendFormat(&out, "%-19s %5s %12s %12s %12s %12s\n", "spread", "batch", "eager",
                        "compile", "ORT", "coil");
  std::string noisy;
  for (const ModelRow& m : r.models()) {
    absl::StrAppendFormat(&out, "%-19s %5d %12s %12s %12s %12s\n", m.model(), m.batch(),
                          Spread(RoundSpread(m.torch_round_ms())),
                          Spread(RoundSpread(m.compiled().round_ms())),
                          Spread(RoundSpread(m.onnxruntime().round_ms())),
                          Spread(RoundSpread(m.coil_round_ms())));
    const std::pair<const char*, const google::protobuf::RepeatedField<double>*> systems[] = {
        {"torch eager", &m.torch_round_ms()},
        {"torch.compile", &m.compiled().round_ms()},
        {"onnxruntime", &m.onnxruntime().round_ms()},
        {"coil", &m.coil_round_ms()}};
    for (const auto& [name, rounds] : systems) {
      if (RoundSpread(*rounds) > kNoisySpread) {
        absl::StrAppendFormat(&noisy, "NOISY %s batch %d: %s's round medians %s ms (%.2fx)\n",
                              m.model(), m.batch(), name, RoundList(*rounds),
                              RoundSpread(*rounds));
      }
    }
    if (m.coil_copy_ms_size() > 1) {
      std::vector<std::string> ms;
      for (double v : m.coil_copy_ms()) ms.push_back(absl::StrFormat("%.3f", v));
      absl::StrAppendFormat(&noisy, "COPIES %s batch %d: coil programs' medians %s ms\n",
                            m.model(), m.batch(), absl::StrJoin(ms, ", "));
    }
  }
  out += noisy;
}

}  // namespace coil::bench

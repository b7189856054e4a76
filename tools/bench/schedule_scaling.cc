// schedule_scaling: how compile time grows with graph size, stage by stage and pass by pass
// (issue 15 item 8: scheduling must be near-linear in the number of nodes).
//
//   bazel build --jobs=2 --config=opt //tools/bench:schedule_scaling
//   bazel-out/k8-opt/bin/tools/bench/schedule_scaling [--shapes chain,wide,transformer,reductions]
//       [--sizes 1000,10000,100000] [--codegen] [--no-verify | --verify-each-pass]
//       [--max-seconds 60] [--decisions]
//
// Builds synthetic aten graphs of about N nodes in text IR, parses them and runs the compile
// driver (tools/driver/driver.h) to the end of inductor (prims + inductor), or through the CPU
// backend's code generator with --codegen. Prints one row per graph with each stage's time, the
// inductor passes' times, and the ratio against the budget: 100k nodes in 10 s for prims +
// inductor, i.e. 100 us per node (a ratio above 1 misses it), in CPU time (the stages' user +
// system time, StageTiming.cpu_seconds; on a shared machine wall time includes waiting for a
// core). A shape whose row takes longer than --max-seconds is not tried
// at larger sizes. The verifiers run as in `coil compile` (the driver's default: on each
// pipeline's input and result in an optimized build, after every pass as well in a debug one);
// --verify-each-pass verifies after every pass, --no-verify not at all. Shapes:
//   chain        alternating relu / neg on one f32[8, 16] value (the reproducer)
//   wide         branches sin -> mul -> row sum of one input, summed at the end (horizontal
//                fusion candidates: sibling reductions sharing the input)
//   transformer  a pre-norm transformer block (layer norm, q/k/v matmuls, softmax attention,
//                residual, gelu MLP) repeated; about 25 aten nodes a block
//   reductions   x = x - amax(x) ... softmax, then sum, repeated along a chain of reductions
// Exit status 0 unless a compile fails (missed budgets are printed, not an error).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "ir/graph.h"
#include "ir/parser.h"
#include "ir/pass_pipeline.h"
#include "tools/driver/cpu_backend.h"
#include "tools/driver/driver.h"
#include "tools/driver/schedule_backend.h"

namespace coil {
namespace {

constexpr double kBudgetSecondsPerNode = 10.0 / 100000;  // prims + inductor

// Text IR of a graph, built one node at a time.
class TextGraph {
 public:
  explicit TextGraph(std::string header) : text_(std::move(header)) {}
  // Appends `%id: type = rhs` and returns id.
  int Add(const std::string& type, const std::string& rhs) {
    absl::StrAppend(&text_, "  %", next_, ": ", type, " = ", rhs, "\n");
    ++nodes_;
    return next_++;
  }
  void SetNext(int next) { next_ = next; }
  std::string Finish(const std::string& ret) { return absl::StrCat(text_, "  return ", ret, "\n}\n"); }
  int nodes() const { return nodes_; }

 private:
  std::string text_;
  int next_ = 0;
  int nodes_ = 0;
};

std::string V(int id) { return absl::StrCat("%", id); }

std::string Chain(int n) {
  TextGraph g("graph @chain(%0 \"x\": f32[8, 16]) {\n");
  g.SetNext(1);
  int x = 0;
  while (g.nodes() < n) {
    x = g.Add("f32[8, 16]", absl::StrCat(g.nodes() % 2 ? "aten.neg(" : "aten.relu(", V(x), ")"));
  }
  return g.Finish(V(x));
}

std::string Wide(int n) {
  TextGraph g("graph @wide(%0 \"x\": f32[batch, 32], %1 \"w\": f32[batch, 32]) {\n"
              "  symbol batch min 2 max 0 hint 8\n");
  g.SetNext(2);
  int acc = -1;
  for (int b = 0; g.nodes() < n; ++b) {
    int s = g.Add("f32[batch, 32]", absl::StrCat(b % 2 ? "aten.sin(" : "aten.cos(", V(0), ")"));
    int m = g.Add("f32[batch, 32]", absl::StrCat("aten.mul(", V(s), ", ", V(1), ")"));
    int r = g.Add("f32[batch]",
                  absl::StrCat("aten.sum(", V(m), ") {dim = [1], keepdim = false, dtype = none}"));
    acc = acc < 0 ? r : g.Add("f32[batch]", absl::StrCat("aten.add(", V(acc), ", ", V(r),
                                                        ") {alpha = 1.0}"));
  }
  return g.Finish(V(acc));
}

std::string Transformer(int n) {
  const std::string t = "f32[seq, 64]";
  TextGraph g(
      "graph @transformer(%0 \"x\": f32[seq, 64], %1 \"ln_w\": f32[64], %2 \"ln_b\": f32[64], "
      "%3 \"wq\": f32[64, 64], %4 \"wk\": f32[64, 64], %5 \"wv\": f32[64, 64], "
      "%6 \"wo\": f32[64, 64], %7 \"w1\": f32[64, 256], %8 \"w2\": f32[256, 64]) {\n"
      "  symbol seq min 2 max 0 hint 32\n");
  g.SetNext(9);
  int x = 0;
  auto ln = [&](int in) {
    return g.Add(t, absl::StrCat("aten.layer_norm(", V(in),
                                 ", %1, %2) {eps = 1e-05, normalized_shape = syms[64]}"));
  };
  auto mm = [&](const std::string& type, int a, int b) {
    return g.Add(type, absl::StrCat("aten.mm(", V(a), ", ", V(b), ")"));
  };
  while (g.nodes() < n) {
    int h = ln(x);
    int q = mm(t, h, 3), k = mm(t, h, 4), v = mm(t, h, 5);
    int kt = g.Add("f32[64, seq]", absl::StrCat("aten.t(", V(k), ")"));
    int s = mm("f32[seq, seq]", q, kt);
    int p = g.Add("f32[seq, seq]",
                  absl::StrCat("aten.softmax(", V(s), ") {dim = -1, dtype = none}"));
    int a = mm(t, p, v);
    int o = mm(t, a, 6);
    x = g.Add(t, absl::StrCat("aten.add(", V(x), ", ", V(o), ") {alpha = 1.0}"));
    int h2 = ln(x);
    int u = mm("f32[seq, 256]", h2, 7);
    int ge = g.Add("f32[seq, 256]", absl::StrCat("aten.gelu(", V(u), ") {approximate = \"none\"}"));
    int d = mm(t, ge, 8);
    x = g.Add(t, absl::StrCat("aten.add(", V(x), ", ", V(d), ") {alpha = 1.0}"));
  }
  return g.Finish(V(x));
}

std::string Reductions(int n) {
  const std::string t = "f32[batch, 32]";
  TextGraph g("graph @reductions(%0 \"x\": f32[batch, 32]) {\n"
              "  symbol batch min 2 max 0 hint 8\n");
  g.SetNext(1);
  int x = 0;
  while (g.nodes() < n) {
    int m = g.Add("f32[batch, 1]",
                  absl::StrCat("aten.amax(", V(x), ") {dim = [1], keepdim = true}"));
    int c = g.Add(t, absl::StrCat("aten.sub(", V(x), ", ", V(m), ") {alpha = 1.0}"));
    int p = g.Add(t, absl::StrCat("aten.softmax(", V(c), ") {dim = -1, dtype = none}"));
    int s = g.Add("f32[batch, 1]",
                  absl::StrCat("aten.sum(", V(p), ") {dim = [1], keepdim = true, dtype = none}"));
    x = g.Add(t, absl::StrCat("aten.div(", V(p), ", ", V(s), ") {rounding_mode = \"\"}"));
  }
  return g.Finish(V(x));
}

// CPU seconds (user + system) of this process so far: on a shared machine the wall times above
// include waiting for a core.
double CpuSeconds() {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Fusion decisions by pass, kind and outcome, with the commonest reasons (numbers replaced by
// '#'): what the fusion passes spend their time deciding.
void PrintDecisionCounts(const proto::Schedule& schedule) {
  std::map<std::string, int> counts;
  for (const proto::FusionDecision& d : schedule.decisions()) {
    std::string reason;
    for (char c : d.reason()) {
      if (c >= '0' && c <= '9') {
        if (reason.empty() || reason.back() != '#') reason += '#';
      } else {
        reason += c;
      }
    }
    ++counts[absl::StrCat(d.pass(), " ", d.kind(), d.accepted() ? " accepted: " : " rejected: ",
                          reason.substr(0, 60))];
  }
  std::printf("  %d decisions\n", schedule.decisions_size());
  for (const auto& [what, n] : counts) {
    if (n * 200 >= schedule.decisions_size()) std::printf("  %8d  %s\n", n, what.c_str());
  }
}

struct Args {
  std::vector<std::string> shapes = {"chain", "wide", "transformer", "reductions"};
  std::vector<int> sizes = {1000, 10000, 100000};
  bool codegen = false;
  bool verify = true;
  bool verify_each_pass = kVerifyEachPassByDefault;
  double max_seconds = 60;
  bool decisions = false;
};

bool ParseArgs(int argc, char** argv, Args& args) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--shapes") {
      args.shapes = absl::StrSplit(value(), ',', absl::SkipEmpty());
    } else if (a == "--sizes") {
      args.sizes.clear();
      for (absl::string_view s : absl::StrSplit(value(), ',', absl::SkipEmpty())) {
        int n = 0;
        if (!absl::SimpleAtoi(s, &n) || n <= 0) return false;
        args.sizes.push_back(n);
      }
    } else if (a == "--codegen") {
      args.codegen = true;
    } else if (a == "--no-verify") {
      args.verify = false;
    } else if (a == "--verify-each-pass") {
      args.verify_each_pass = true;
    } else if (a == "--decisions") {
      args.decisions = true;
    } else if (a == "--max-seconds") {
      if (!absl::SimpleAtod(value(), &args.max_seconds)) return false;
    } else {
      return false;
    }
  }
  return true;
}

int Main(int argc, char** argv) {
  Args args;
  if (!ParseArgs(argc, argv, args)) {
    std::fprintf(stderr,
                 "usage: schedule_scaling [--shapes chain,wide,transformer,reductions] "
                 "[--sizes 1000,10000,100000] [--codegen] [--no-verify | --verify-each-pass] "
                 "[--max-seconds S] [--decisions]\n");
    return 2;
  }
  const std::map<std::string, std::string (*)(int)> shapes = {
      {"chain", Chain}, {"wide", Wide}, {"transformer", Transformer}, {"reductions", Reductions}};
  int status = 0;
  std::printf(
      "budget: prims + inductor within %.0f us per node of CPU time (100k nodes in 10 s)%s%s\n",
      kBudgetSecondsPerNode * 1e6,
      !args.verify              ? "; verifiers off"
      : args.verify_each_pass ? "; verifiers after every pass"
                              : "; verifiers on each pipeline's input and result",
      args.codegen ? "; codegen_cpu not in the budget" : "");
  for (const std::string& shape : args.shapes) {
    auto it = shapes.find(shape);
    if (it == shapes.end()) {
      std::fprintf(stderr, "unknown shape %s\n", shape.c_str());
      return 2;
    }
    for (int n : args.sizes) {
      auto start = std::chrono::steady_clock::now();
      const double cpu_start = CpuSeconds();
      absl::StatusOr<Graph> graph = ParseGraph(it->second(n));
      const double parse = Seconds(start);
      if (!graph.ok()) {
        std::printf("%s %d: %s\n", shape.c_str(), n, graph.status().ToString().c_str());
        return 1;
      }
      const int nodes = static_cast<int>(graph->nodes().size());
      driver::DriverOptions options;
      options.backend = args.codegen ? driver::CpuBackend() : driver::ScheduleInterpreterBackend();
      options.stop_after = args.codegen ? driver::Stage::kCodegen : driver::Stage::kInductor;
      options.cache = nullptr;
      options.verify_passes = args.verify;
      options.verify_each_pass = args.verify_each_pass;
      options.keep_intermediates = args.decisions;
      std::string detail;
      options.on_stage = [&detail](const driver::StageEvent& e) {
        if (e.stage == "inductor") detail = e.detail;
      };
      absl::StatusOr<driver::CompileResult> r = driver::CompileGraph(*std::move(graph), options);
      const double total = Seconds(start);
      const double cpu = CpuSeconds() - cpu_start;
      if (!r.ok()) {
        std::printf("%s %d: %s\n", shape.c_str(), nodes, r.status().ToString().c_str());
        status = 1;
        break;
      }
      double budgeted = 0, budgeted_cpu = 0;
      std::string stages = absl::StrCat("parse ", absl::StrFormat("%.3f", parse));
      for (const proto::StageTiming& t : r->report.timings()) {
        absl::StrAppend(&stages, "  ", t.stage(), " ", absl::StrFormat("%.3f", t.seconds()));
        if (t.stage() == "prims" || t.stage() == "inductor") {
          budgeted += t.seconds();
          budgeted_cpu += t.cpu_seconds();
        }
      }
      std::printf(
          "%-12s %7d nodes  prims+inductor cpu %7.3f s  ratio %6.3f  (wall %.3f s: %s s; row "
          "cpu %.3f of wall %.3f s)\n  %s\n",
          shape.c_str(), nodes, budgeted_cpu, budgeted_cpu / (kBudgetSecondsPerNode * nodes),
          budgeted, stages.c_str(), cpu, total, detail.c_str());
      std::string passes = " ";
      for (const proto::PassRun& p : r->report.passes()) {
        absl::StrAppend(&passes, " ", p.pass(), " ", absl::StrFormat("%.3f", p.seconds()));
      }
      std::printf("%s\n", passes.c_str());
      if (args.decisions && r->schedule.has_value()) PrintDecisionCounts(*r->schedule);
      std::fflush(stdout);
      if (total > args.max_seconds) {
        std::printf("  (%.1f s > --max-seconds %.0f: larger %s graphs skipped)\n", total,
                    args.max_seconds, shape.c_str());
        break;
      }
    }
  }
  return status;
}

}  // namespace
}  // namespace coil

int main(int argc, char** argv) { return coil::Main(argc, argv); }

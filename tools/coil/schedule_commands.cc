// `coil schedule GRAPH [-o OUT.pb] [--no-fusion] [--no-reuse] [--epilogues OPS] [--check]`:
// decompose (when the graph still has aten ops), schedule, print the summary, and optionally
// check the Schedule interpreter against the graph interpreter.
#include "tools/coil/schedule_commands.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "inductor/schedule.h"
#include "runtime/interpreter.h"
#include "runtime/schedule_interpreter.h"
#include "runtime/tensor_compare.h"
#include "tools/coil/args.h"
#include "tools/coil/graph_io.h"
#include "tools/driver/driver.h"
#include "tools/driver/schedule_backend.h"

namespace coil::cli {

// The integers --check draws (graph_io.h's RandomInputs).
constexpr int64_t kCheckIntMin = -8;
constexpr int64_t kCheckIntMax = 8;
namespace {

int Fail(const absl::Status& s) {
  std::cerr << "coil: " << s.message() << "\n";
  return 1;
}

}  // namespace

int ScheduleCommand(const std::vector<std::string>& argv) {
  std::vector<std::string> expanded = argv;
  for (std::string& a : expanded) {
    if (a == "-o") a = "--output";
  }
  absl::StatusOr<Args> args = ParseArgs(expanded, {"output", "epilogues", "dim", "seed"},
                                        {"no-fusion", "no-reuse", "check", "help"});
  if (!args.ok()) return Fail(args.status());
  if (args->positional.size() != 1 || args->Has("help")) {
    return Usage(
        "usage: coil schedule GRAPH [-o SCHEDULE.pb] [--no-fusion] [--no-reuse]\n"
        "                     [--epilogues OP,OP] [--check [--dim s=N] [--seed N]]\n"
        "  Decomposes GRAPH into prims (if needed) and schedules it with inductor: loop\n"
        "  kernels, fusion, memory plan. Prints kernels with their fused ops, bytes moved and\n"
        "  peak memory. --epilogues names externs the backend fuses epilogues into;\n"
        "  --check runs the schedule with the Schedule interpreter and the graph with the\n"
        "  reference interpreter on random inputs (integers in [-8, 8]: zero divisors,\n"
        "  negative and out-of-range indices) and prints the max relative error; inputs\n"
        "  the reference refuses pass only if the Schedule interpreter refuses them too.\n",
        args->Has("help"));
  }
  absl::StatusOr<Graph> graph = LoadGraph(args->positional[0]);
  if (!graph.ok()) return Fail(graph.status());
  Graph original = graph->Clone();
  std::vector<std::string> epilogues;
  for (absl::string_view op : absl::StrSplit(args->Get("epilogues"), ',', absl::SkipEmpty())) {
    epilogues.emplace_back(op);
  }
  driver::DriverOptions options;
  options.backend = driver::ScheduleInterpreterBackend(std::move(epilogues));
  options.stop_after = driver::Stage::kInductor;
  options.cache = nullptr;
  options.schedule.fusion = !args->Has("no-fusion");
  options.schedule.reuse_memory = !args->Has("no-reuse");
  absl::StatusOr<driver::CompileResult> compiled =
      driver::CompileGraph(*std::move(graph), options);
  if (!compiled.ok()) return Fail(compiled.status());
  const proto::Schedule* schedule = &*compiled->schedule;
  std::cout << inductor::SummarizeSchedule(*schedule);
  if (args->values.count("output")) {
    if (absl::Status s = WriteFile(args->Get("output"), schedule->SerializeAsString()); !s.ok()) {
      return Fail(s);
    }
  }
  if (!args->Has("check")) return 0;

  uint64_t seed = 0;
  if (args->values.count("seed") && !absl::SimpleAtoi(args->Get("seed"), &seed)) {
    return Fail(absl::InvalidArgumentError("--seed expects an integer"));
  }
  // Integers in [-8, 8]: zero divisors, negative indices that wrap, indices past a dimension.
  // Inputs the graph interpreter refuses must be refused by the Schedule interpreter too.
  absl::StatusOr<std::vector<HostTensor>> inputs =
      RandomInputs(original, args->Get("dim"), seed, kCheckIntMin, kCheckIntMax);
  if (!inputs.ok()) return Fail(inputs.status());
  // Both runs may write mutated inputs back, so each gets its own copy.
  std::vector<HostTensor> graph_inputs, schedule_inputs;
  for (const HostTensor& t : *inputs) {
    graph_inputs.push_back(HostTensor::FromDoubles(t.dtype(), t.shape(), t.ToDoubles()));
    schedule_inputs.push_back(HostTensor::FromDoubles(t.dtype(), t.shape(), t.ToDoubles()));
  }
  absl::StatusOr<std::vector<HostTensor>> want = Interpret(original, graph_inputs);
  ScheduleInterpreterOptions run_options;
  run_options.poison_dead_buffers = true;
  absl::StatusOr<std::vector<HostTensor>> got =
      InterpretSchedule(*schedule, schedule_inputs, run_options);
  if (!want.ok() || !got.ok()) {
    // An expected error: both refuse, with the same status code (exit 0, the error printed).
    if (!want.ok() && !got.ok() && want.status().code() == got.status().code()) {
      std::printf("both interpreters refuse the inputs (seed %llu)\n  graph: %s\n  schedule: %s\n",
                  static_cast<unsigned long long>(seed), want.status().ToString().c_str(),
                  got.status().ToString().c_str());
      return 0;
    }
    std::printf("the interpreters disagree on the inputs (seed %llu)\n  graph: %s\n  schedule: %s\n",
                static_cast<unsigned long long>(seed),
                want.ok() ? "ok" : want.status().ToString().c_str(),
                got.ok() ? "ok" : got.status().ToString().c_str());
    return 1;
  }
  double worst = 0;
  for (size_t i = 0; i < want->size(); ++i) {
    double err = MaxRelativeError((*got)[i], (*want)[i], NanPolicy::kNanMatchesNan);
    std::printf("output %zu: %s, max relative error vs the graph interpreter %.3g\n", i,
                (*got)[i].TypeString().c_str(), err);
    worst = std::max(worst, err);
  }
  return worst <= 1e-4 ? 0 : 1;
}

}  // namespace coil::cli

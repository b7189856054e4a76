// The graph-level CLI commands: print, verify, run (reference interpreter), ops.
#include "tools/coil/graph_commands.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "ir/op_registry.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "runtime/interpreter.h"
#include "runtime/tensor_compare.h"
#include "tools/coil/args.h"
#include "tools/coil/backend_run.h"
#include "tools/coil/graph_io.h"

namespace coil::cli {
namespace {

int Fail(const absl::Status& s) {
  std::cerr << "coil: " << s.message() << "\n";
  return 1;
}

}  // namespace

int PrintCommand(const std::vector<std::string>& argv) {
  absl::StatusOr<Args> args = ParseArgs(argv, {}, {});
  if (!args.ok()) return Fail(args.status());
  if (args->positional.size() != 1 || args->Has("help")) {
    return Usage("usage: coil print FILE\n"
                 "  Prints a graph (text IR, a binary coil.proto.Graph or an .onnx model) as text IR.\n",
                 args->Has("help"));
  }
  absl::StatusOr<Graph> g = LoadGraph(args->positional[0]);
  if (!g.ok()) return Fail(g.status());
  std::cout << PrintGraph(*g);
  return 0;
}

int VerifyCommand(const std::vector<std::string>& argv) {
  absl::StatusOr<Args> args = ParseArgs(argv, {}, {});
  if (!args.ok()) return Fail(args.status());
  if (args->positional.size() != 1 || args->Has("help")) {
    return Usage("usage: coil verify FILE\n"
                 "  Checks a graph against the op registry (types, shapes, attributes, symbols);\n"
                 "  prints 'FILE: ok (N nodes, ...)' or the first problem, naming the node.\n",
                 args->Has("help"));
  }
  absl::StatusOr<Graph> g = LoadGraph(args->positional[0]);
  if (!g.ok()) return Fail(g.status());
  if (absl::Status s = Verify(*g); !s.ok()) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(args->positional[0], ": ", s.message())));
  }
  std::cout << args->positional[0] << ": ok (" << g->num_nodes() << " nodes, "
            << g->inputs().size() << " inputs, " << g->outputs().size() << " outputs)\n";
  return 0;
}

int RunCommand(const std::vector<std::string>& argv) {
  absl::StatusOr<Args> args =
      ParseArgs(argv,
                {"inputs", "seed", "dim", "save", "backend", "repeat", "threads", "precision"},
                {"float64", "check", "profile", "cuda-graphs"});
  if (!args.ok()) return Fail(args.status());
  if (args->positional.size() != 1 || args->Has("help")) {
    return Usage("usage: coil run FILE [--inputs A.pb,B.pb] [--seed N] [--dim s0=8,...]\n"
                 "                [--float64] [--save OUT_PREFIX] [--backend B [--check]]\n"
                 "                [--repeat N [--profile]] [--threads N] [--cuda-graphs]\n"
                 "                [--precision f32|bf16]\n"
                 "  --backend reference (default) | schedule (prims + inductor + Schedule\n"
                 "  interpreter) | cpu (prims + inductor + LLVM codegen + CPU runtime) | cuda\n"
                 "  (NVRTC + the CUDA runtime); --check compares with the float64 reference\n"
                 "  interpreter and prints the max relative error (exit 1 above 1e-4). --repeat N\n"
                 "  (cpu, cuda) times N runs after the first and prints min / median / mean (cuda:\n"
                 "  also the device time, CUDA events from the first kernel to the end of the\n"
                 "  last, and the host copies); --profile adds each kernel's time;\n"
                 "  --threads N: the cpu runtime's threads (default: every CPU).\n"
                 "  --cuda-graphs (cuda): each set of shapes' launches captured once into a CUDA\n"
                 "  graph (on its second run) and replayed after (torch.compile's reduce-overhead).\n"
                 "  --precision bf16 (schedule, cpu, cuda): torch.autocast's bf16 policy, matrix\n"
                 "  products and convolutions in bf16, norms, softmax and sums in f32, inputs and\n"
                 "  outputs in the model's types (docs/prims.md, \"Autocast\"); --check then\n"
                 "  allows 3e-2 (bf16 keeps 8 significant bits) instead of 1e-4.\n"
                 "  Runs the graph (text IR, binary coil.proto.Graph, or an ONNX model ending in\n"
                 "  .onnx) with the reference interpreter. Inputs are serialized\n"
                 "  coil.proto.TensorValue files, or random (seeded) when --inputs is absent.\n",
                 args->Has("help"));
  }
  absl::StatusOr<Graph> g = LoadGraph(args->positional[0]);
  if (!g.ok()) return Fail(g.status());
  if (absl::Status s = Verify(*g); !s.ok()) return Fail(s);

  std::vector<HostTensor> inputs;
  if (args->values.count("inputs")) {
    std::vector<std::string> paths = absl::StrSplit(args->Get("inputs"), ',', absl::SkipEmpty());
    for (const std::string& p : paths) {
      absl::StatusOr<std::string> bytes = ReadFile(p);
      if (!bytes.ok()) return Fail(bytes.status());
      proto::TensorValue tv;
      if (!tv.ParseFromString(*bytes)) {
        return Fail(absl::InvalidArgumentError(absl::StrCat(p, ": not a coil.proto.TensorValue")));
      }
      absl::StatusOr<HostTensor> t = HostTensor::FromProto(tv);
      if (!t.ok()) return Fail(absl::InvalidArgumentError(absl::StrCat(p, ": ", t.status().message())));
      inputs.push_back(*std::move(t));
    }
  } else {
    uint64_t seed = 0;
    if (args->values.count("seed") && !absl::SimpleAtoi(args->Get("seed"), &seed)) {
      return Fail(absl::InvalidArgumentError("--seed expects an integer"));
    }
    absl::StatusOr<std::vector<HostTensor>> random = RandomInputs(*g, args->Get("dim"), seed);
    if (!random.ok()) return Fail(random.status());
    inputs = *std::move(random);
  }
  InterpreterOptions options;
  options.float64 = args->Has("float64");
  // External constants are relative to the graph file's folder (graph.proto).
  const std::string graph_dir =
      std::filesystem::path(args->positional[0]).parent_path().string();
  options.external_data_dir = graph_dir;
  std::string backend = args->Get("backend", "reference");
  RunOptions run;
  run.external_data_dir = graph_dir;
  if (args->values.count("repeat") && (!absl::SimpleAtoi(args->Get("repeat"), &run.repeat) ||
                                       run.repeat < 1 || run.repeat > 100000)) {
    return Fail(absl::InvalidArgumentError("--repeat expects an integer in [1, 100000]"));
  }
  if (args->values.count("threads") && (!absl::SimpleAtoi(args->Get("threads"), &run.threads) ||
                                        run.threads < 1 || run.threads > 1024)) {
    return Fail(absl::InvalidArgumentError("--threads expects an integer in [1, 1024]"));
  }
  if (args->values.count("precision")) {
    absl::StatusOr<prims::Precision> p = prims::ParsePrecision(args->Get("precision"));
    if (!p.ok()) {
      return Fail(absl::InvalidArgumentError(absl::StrCat("--precision: ", p.status().message())));
    }
    run.precision = *p;
    if (run.precision != prims::Precision::kF32 && backend == "reference") {
      return Fail(absl::InvalidArgumentError(
          "--precision bf16 compiles the model: it needs --backend schedule, cpu or cuda"));
    }
  }
  run.profile = args->Has("profile");
  run.cuda_graphs = args->Has("cuda-graphs");
  if (run.cuda_graphs && backend != "cuda") {
    return Fail(absl::InvalidArgumentError("--cuda-graphs needs --backend cuda"));
  }
  if (run.profile && backend != "cpu" && backend != "cuda") {
    return Fail(absl::InvalidArgumentError("--profile needs --backend cpu or cuda"));
  }
  if (run.threads > 0 && backend != "cpu") {
    return Fail(absl::InvalidArgumentError("--threads needs --backend cpu"));
  }
  // Backends may write mutated inputs back, so --check keeps a copy for the oracle.
  std::vector<HostTensor> oracle_inputs;
  for (const HostTensor& t : inputs) oracle_inputs.push_back(t.Contiguous().To(t.dtype()));
  absl::StatusOr<std::vector<HostTensor>> outs =
      backend == "reference" ? Interpret(*g, inputs, options)
                             : RunWithBackend(*g, inputs, backend, run);
  if (!outs.ok()) return Fail(outs.status());
  double worst = 0;
  if (args->Has("check")) {
    InterpreterOptions oracle;
    oracle.float64 = true;
    oracle.external_data_dir = graph_dir;
    absl::StatusOr<std::vector<HostTensor>> want = Interpret(*g, oracle_inputs, oracle);
    if (!want.ok()) return Fail(want.status());
    for (size_t i = 0; i < outs->size(); ++i) {
      worst = std::max(worst, MaxRelativeError((*outs)[i], (*want)[i], NanPolicy::kNanMatchesNan));
    }
    std::printf("check (%s vs float64 reference interpreter): max relative error %.3g\n",
                backend.c_str(), worst);
  }
  for (size_t i = 0; i < outs->size(); ++i) {
    const HostTensor& t = (*outs)[i];
    double sum = 0, abs_sum = 0;
    for (double v : t.ToDoubles()) {
      sum += v;
      abs_sum += std::fabs(v);
    }
    std::printf("output %zu: %s sum=%.9g abs_sum=%.9g\n", i, t.TypeString().c_str(), sum, abs_sum);
    if (args->values.count("save")) {
      std::string path = absl::StrCat(args->Get("save"), i, ".pb");
      if (absl::Status s = WriteFile(path, t.ToProto().SerializeAsString()); !s.ok()) return Fail(s);
    }
  }
  return worst <= (run.precision == prims::Precision::kBF16 ? 3e-2 : 1e-4) ? 0 : 1;
}

int OpsCommand(const std::vector<std::string>& argv) {
  absl::StatusOr<Args> args = ParseArgs(argv, {}, {});
  if (!args.ok()) return Fail(args.status());
  if (!args->positional.empty() || args->Has("help")) {
    return Usage("usage: coil ops\n"
                 "  Lists every registered op: name(inputs) {attributes with defaults}.\n",
                 args->Has("help"));
  }
  for (const OpSchema* op : OpRegistry::Global().All()) {
    std::vector<std::string> ins;
    for (const OpInput& in : op->inputs) {
      ins.push_back(absl::StrCat(in.name, in.variadic ? "..." : "", in.optional ? "?" : ""));
    }
    std::vector<std::string> attrs;
    for (const AttrSpec& a : op->attrs) {
      attrs.push_back(absl::StrCat(a.name, ": ", AttrKindName(a.kind),
                                   a.default_value ? absl::StrCat(" = ", AttrToString(*a.default_value))
                                                   : ""));
    }
    std::printf("%s(%s)%s\n", op->name.c_str(), absl::StrJoin(ins, ", ").c_str(),
                attrs.empty() ? "" : absl::StrCat(" {", absl::StrJoin(attrs, ", "), "}").c_str());
  }
  return 0;
}

}  // namespace coil::cli

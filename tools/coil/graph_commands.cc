// The graph-level CLI commands: print, verify, run (reference interpreter), ops.
#include "tools/coil/graph_commands.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "ir/op_registry.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "runtime/interpreter.h"
#include "tools/coil/args.h"
#include "tools/coil/graph_io.h"

namespace coil::cli {
namespace {

int Fail(const absl::Status& s) {
  std::cerr << "coil: " << s.message() << "\n";
  return 1;
}

// Random data for one graph input: floats uniform in [-1, 1), integers in [0, 10), bools.
HostTensor RandomTensor(DType dtype, std::vector<int64_t> shape, std::mt19937_64& rng) {
  HostTensor t = HostTensor::Zeros(dtype, std::move(shape));
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int64_t> integer(0, 9);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (IsFloating(dtype)) {
      t.StoreDouble(i, real(rng));
    } else if (IsBool(dtype)) {
      t.StoreInt(i, integer(rng) % 2);
    } else {
      t.StoreInt(i, integer(rng));
    }
  }
  return t;
}

// Binds symbols from --dim s0=8,s1=4, falling back to each symbol's hint.
absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> SymbolValues(const Graph& g,
                                                                      const std::string& dims) {
  absl::flat_hash_map<std::string, int64_t> values;
  for (const SymbolInfo& s : g.symbols()) {
    if (s.hint > 0) values[s.name] = s.hint;
  }
  for (absl::string_view item : absl::StrSplit(dims, ',', absl::SkipEmpty())) {
    std::pair<std::string, std::string> kv = absl::StrSplit(item, '=');
    int64_t v;
    if (kv.first.empty() || !absl::SimpleAtoi(kv.second, &v) || v < 0) {
      return absl::InvalidArgumentError(absl::StrCat("--dim expects NAME=SIZE, got '", item, "'"));
    }
    values[kv.first] = v;
  }
  return values;
}

}  // namespace

int PrintCommand(const std::vector<std::string>& argv) {
  absl::StatusOr<Args> args = ParseArgs(argv, {}, {});
  if (!args.ok()) return Fail(args.status());
  if (args->positional.size() != 1) {
    std::cerr << "usage: coil print FILE   (binary coil.proto.Graph or text IR)\n";
    return 2;
  }
  absl::StatusOr<Graph> g = LoadGraph(args->positional[0]);
  if (!g.ok()) return Fail(g.status());
  std::cout << PrintGraph(*g);
  return 0;
}

int VerifyCommand(const std::vector<std::string>& argv) {
  absl::StatusOr<Args> args = ParseArgs(argv, {}, {});
  if (!args.ok()) return Fail(args.status());
  if (args->positional.size() != 1) {
    std::cerr << "usage: coil verify FILE\n";
    return 2;
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
  absl::StatusOr<Args> args = ParseArgs(argv, {"inputs", "seed", "dim", "save"}, {"float64"});
  if (!args.ok()) return Fail(args.status());
  if (args->positional.size() != 1) {
    std::cerr << "usage: coil run FILE [--inputs A.pb,B.pb] [--seed N] [--dim s0=8,...]\n"
                 "                [--float64] [--save OUT_PREFIX]\n"
                 "  Runs the graph (text IR, binary coil.proto.Graph, or an ONNX model ending in\n"
                 "  .onnx) with the reference interpreter. Inputs are serialized\n"
                 "  coil.proto.TensorValue files, or random (seeded) when --inputs is absent.\n";
    return 2;
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
    absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> symbols =
        SymbolValues(*g, args->Get("dim"));
    if (!symbols.ok()) return Fail(symbols.status());
    std::mt19937_64 rng(seed);
    for (const Value* in : g->inputs()) {
      std::vector<int64_t> shape;
      for (const SymExpr& d : in->type().shape) {
        absl::StatusOr<int64_t> v = d.Evaluate(*symbols);
        if (!v.ok()) {
          return Fail(absl::InvalidArgumentError(absl::StrCat(
              "input '", in->name(), "': ", v.status().message(), " (give sizes with --dim)")));
        }
        shape.push_back(*v);
      }
      inputs.push_back(RandomTensor(in->type().dtype, shape, rng));
    }
  }
  InterpreterOptions options;
  options.float64 = args->Has("float64");
  absl::StatusOr<std::vector<HostTensor>> outs = Interpret(*g, inputs, options);
  if (!outs.ok()) return Fail(outs.status());
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
  return 0;
}

int OpsCommand(const std::vector<std::string>& argv) {
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

// Writes the seed corpus for graph_fuzzer: a few graphs built with GraphBuilder (so they verify
// with the ops registered at the time), each as text (.txt) and serialized proto (.pb), plus a
// truncated copy of each.
//   bazel run //ir/fuzz:make_corpus -- $PWD/ir/fuzz/corpus
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/io/write_file.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace coil {
namespace {

void Write(const std::string& path, const std::string& data) {
  // Every write checked (ir/io/write_file.h): a corpus with a truncated seed is worse than none.
  if (absl::Status s = coil::WriteFileAtomically(path, data); !s.ok()) {
    std::fprintf(stderr, "make_corpus: %s\n", std::string(s.message()).c_str());
    std::exit(1);
  }
}

// Adds an op, or leaves the graph as it is when the op is not registered (yet).
Value* Try(GraphBuilder& b, const char* op, std::vector<Value*> in, AttrMap attrs, Value* fallback) {
  absl::StatusOr<Value*> v = b.Op(op, std::move(in), std::move(attrs));
  if (!v.ok()) {
    std::cerr << "skipping " << op << ": " << v.status() << "\n";
    return fallback;
  }
  return *v;
}

void Emit(const std::string& dir, const std::string& name, const Graph& g) {
  absl::Status s = Verify(g);
  std::cerr << name << ": " << (s.ok() ? "verifies" : s.ToString()) << "\n";
  std::string text = PrintGraph(g);
  std::string bytes = g.ToProto().SerializeAsString();
  Write(dir + "/" + name + ".txt", text);
  Write(dir + "/" + name + ".pb", bytes);
  Write(dir + "/" + name + "_truncated.txt", text.substr(0, text.size() * 2 / 3));
  Write(dir + "/" + name + "_truncated.pb", bytes.substr(0, bytes.size() * 2 / 3));
}

}  // namespace
}  // namespace coil

int main(int argc, char** argv) {
  using namespace coil;
  if (argc != 2) {
    std::cerr << "usage: make_corpus OUT_DIR\n";
    return 2;
  }
  std::string dir = argv[1];
  SymExpr s0 = SymExpr::Symbol("s0");
  {
    Graph g("mlp");
    g.symbols().push_back(SymbolInfo{"s0", 2, 4096, 8});
    g.guards().push_back(GuardInfo{proto::Guard::LE, s0, 4096, "batch limit", {"m.py", 3, 1, "f"}});
    GraphBuilder b(g);
    Value* x = b.Input(TensorType(proto::FLOAT32, {s0, 4}), "x");
    Value* w = b.Input(TensorType(proto::FLOAT32, {4, 4}), "w");
    Value* bias = b.Constant(TensorType(proto::FLOAT32, {4}), std::string(16, '\1'), "bias");
    Value* h = Try(b, "aten.mm", {x, w}, {}, x);
    h = Try(b, "aten.add", {h, bias}, {{"alpha", Attribute(1.0)}}, h);
    h = Try(b, "aten.relu", {h}, {}, h);
    absl::StatusOr<std::vector<Value*>> mx =
        b.OpMulti("aten.max_dim", {h}, {{"dim", Attribute(int64_t{1})}, {"keepdim", Attribute(false)}});
    std::vector<Value*> outs = {h};
    if (mx.ok()) outs.insert(outs.end(), mx->begin(), mx->end());
    g.SetOutputs(outs);
    Emit(dir, "mlp", g);
  }
  {
    Graph g("shapes");
    g.symbols().push_back(SymbolInfo{"s0", 2, 0, 16});
    GraphBuilder b(g);
    Value* x = b.Input(TensorType(proto::FLOAT16, {s0, 6, 2}), "x");
    Value* r = Try(b, "aten.reshape", {x}, {{"shape", Attribute(SymList{s0, 12})}}, x);
    Value* p = Try(b, "aten.permute", {x}, {{"dims", Attribute(IntList{2, 0, 1})}}, x);
    Value* s = Try(b, "aten.sum", {r}, {{"dim", Attribute(IntList{1})}}, r);
    Value* sm = Try(b, "aten.softmax", {x}, {{"dim", Attribute(int64_t{-1})}}, x);
    g.SetOutputs({s, p, sm});
    Emit(dir, "shapes", g);
  }
  {
    Graph g("consts");
    GraphBuilder b(g);
    Value* a = b.Constant(TensorType(proto::INT64, {2}), std::string(16, '\0'), "a");
    ConstantData ext{"", "weights.bin", 128, 24};
    Value* e = g.AddConstant(TensorType(proto::INT32, {2, 3}), ext, "e");
    Value* y = Try(b, "aten.mul", {a, e}, {}, e);
    g.SetOutputs({y});
    Emit(dir, "consts", g);
  }
  return 0;
}

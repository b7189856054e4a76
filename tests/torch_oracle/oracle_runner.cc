// One oracle case: build, infer, interpret, compare (see oracle_runner.h).
#include "tests/torch_oracle/oracle_runner.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/builder.h"
#include "ir/verifier.h"
#include "prims/decompose.h"
#include "prims/decomposition_registry.h"
#include "runtime/interpreter.h"

namespace coil::oracle {
namespace {

absl::StatusOr<HostTensor> FromStrided(const StridedTensor& st) {
  absl::StatusOr<HostTensor> storage = HostTensor::FromProto(st.storage());
  if (!storage.ok()) return storage.status();
  std::vector<int64_t> shape(st.shape().begin(), st.shape().end());
  std::vector<int64_t> strides(st.strides().begin(), st.strides().end());
  if (storage->numel() == 0) return HostTensor::Zeros(storage->dtype(), shape);
  return storage->View(shape, strides, st.offset());
}

std::string Fmt(double v) {
  std::ostringstream s;
  s.precision(9);
  s << v;
  return s.str();
}

// Compares values; the message names the worst element.
absl::Status Compare(const HostTensor& got, const HostTensor& want, double rtol, double atol,
                     int output) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    return absl::InternalError(absl::StrCat("output ", output, ": coil gives ", got.TypeString(),
                                            ", torch gives ", want.TypeString()));
  }
  std::vector<double> g = got.ToDoubles();
  std::vector<double> w = want.ToDoubles();
  bool exact = !IsFloating(want.dtype());
  int64_t worst = -1;
  double worst_excess = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    bool bad;
    double excess = 0;
    if (std::isnan(w[i]) || std::isnan(g[i])) {
      bad = std::isnan(w[i]) != std::isnan(g[i]);
      excess = bad ? INFINITY : 0;
    } else if (std::isinf(w[i]) || std::isinf(g[i]) || exact) {
      bad = g[i] != w[i];
      excess = bad ? INFINITY : 0;
    } else {
      double err = std::fabs(g[i] - w[i]);
      double tol = atol + rtol * std::fabs(w[i]);
      bad = err > tol;
      excess = err - tol;
    }
    if (bad && (worst < 0 || excess > worst_excess)) {
      worst = static_cast<int64_t>(i);
      worst_excess = excess;
    }
  }
  if (worst < 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("output ", output, " ", got.TypeString(),
                                          ": worst element at flat index ", worst, ": coil ",
                                          Fmt(g[worst]), ", torch ", Fmt(w[worst]), " (rtol ",
                                          rtol, ", atol ", atol, ")"));
}

}  // namespace

absl::StatusOr<Suite> LoadSuite(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  Suite s;
  if (!s.ParseFromIstream(&f)) return absl::DataLossError(absl::StrCat("cannot parse ", path));
  return s;
}

absl::Status RunCase(const Case& c, const RunOptions& options) {
  const bool symbolic = options.symbolic;
  std::vector<HostTensor> inputs;
  for (const StridedTensor& st : c.inputs()) {
    absl::StatusOr<HostTensor> t = FromStrided(st);
    if (!t.ok()) return t.status();
    inputs.push_back(*std::move(t));
  }
  Graph graph(c.name());
  GraphBuilder b(graph);
  std::vector<Value*> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<SymExpr> shape;
    for (int64_t d : inputs[i].shape()) {
      if (!symbolic || d < 2) {
        shape.push_back(SymExpr(d));
        continue;
      }
      // One symbol per size, declared once (Verify refuses undeclared symbols).
      std::string name = absl::StrCat("s", d);
      bool declared = false;
      for (const SymbolInfo& s : graph.symbols()) declared = declared || s.name == name;
      if (!declared) graph.symbols().push_back(SymbolInfo{name, 2, 0, d});
      shape.push_back(SymExpr::Symbol(name));
    }
    args.push_back(b.Input(TensorType(inputs[i].dtype(), shape), absl::StrCat("in", i)));
  }
  AttrMap attrs;
  for (const proto::NamedAttribute& a : c.attrs()) {
    absl::StatusOr<Attribute> v = AttrFromProto(a.value());
    if (!v.ok()) return v.status();
    attrs.emplace(a.name(), *std::move(v));
  }
  absl::StatusOr<std::vector<Value*>> outs = b.OpMulti(c.op(), args, attrs);
  if (!outs.ok()) return outs.status();
  if (static_cast<int>(outs->size()) != c.expected_size()) {
    return absl::InternalError(absl::StrCat("coil gives ", outs->size(), " outputs, torch ",
                                            c.expected_size()));
  }
  graph.SetOutputs(*outs);
  if (absl::Status s = Verify(graph); !s.ok()) return s;
  double rtol = c.rtol(), atol = c.atol();
  if (options.decompose) {
    absl::StatusOr<bool> changed = prims::Decompose(graph);
    if (!changed.ok()) return changed.status();
    for (const Node* n : graph.nodes()) {
      if (!prims::IsPrim(n->op()) && !prims::IsExtern(n->op())) {
        return absl::InternalError(absl::StrCat("decomposed graph still has ", n->Describe()));
      }
    }
    rtol *= 4;
    atol *= 4;
  }
  absl::StatusOr<std::vector<HostTensor>> got = Interpret(graph, inputs);
  if (!got.ok()) return got.status();
  for (int k = 0; k < c.expected_size(); ++k) {
    absl::StatusOr<HostTensor> want = HostTensor::FromProto(c.expected(k));
    if (!want.ok()) return want.status();
    if (absl::Status s = Compare((*got)[k], *want, rtol, atol, k); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace coil::oracle

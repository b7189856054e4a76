// Gradcheck: joint-graph gradients vs. central finite differences, float64 on the reference
// interpreter.
#include "autograd/testing/gradcheck.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "autograd/joint_graph.h"
#include "ir/builder.h"
#include "ir/dtype.h"
#include "prims/decompose.h"
#include "runtime/interpreter.h"

namespace coil::autograd::testing {
namespace {

InterpreterOptions F64() {
  InterpreterOptions o;
  o.float64 = true;
  return o;
}

// sum_k <tangent_k, out_k> over the floating outputs.
double Dot(const std::vector<HostTensor>& outs, const std::vector<HostTensor>& tangents) {
  double s = 0;
  size_t t = 0;
  for (const HostTensor& o : outs) {
    if (!IsFloating(o.dtype())) continue;
    std::vector<double> a = o.ToDoubles(), b = tangents.at(t++).ToDoubles();
    for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  }
  return s;
}

}  // namespace

absl::StatusOr<Graph> SingleOpGraph(const std::string& op, const std::vector<TensorType>& inputs,
                                    AttrMap attrs) {
  Graph g(op);
  GraphBuilder b(g);
  std::set<std::string> symbols;
  std::vector<Value*> ins;
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (const SymExpr& d : inputs[i].shape) {
      for (const std::string& s : d.Symbols()) symbols.insert(s);
    }
    ins.push_back(b.Input(inputs[i], absl::StrCat("x", i)));
  }
  for (const std::string& s : symbols) g.symbols().push_back({s, 2, 0, 3});
  absl::StatusOr<std::vector<Value*>> outs = b.OpMulti(op, ins, std::move(attrs));
  if (!outs.ok()) return outs.status();
  g.SetOutputs(*outs);
  return g;
}

absl::StatusOr<std::vector<HostTensor>> RunJoint(const Graph& forward,
                                                 const std::vector<HostTensor>& inputs,
                                                 const std::vector<bool>& requires_grad,
                                                 const std::vector<HostTensor>& tangents,
                                                 bool decomposed, bool float64) {
  absl::StatusOr<JointGraph> joint = BuildJointGraph(forward, requires_grad);
  if (!joint.ok()) return joint.status();
  if (decomposed) {
    absl::StatusOr<bool> d = prims::Decompose(joint->graph);
    if (!d.ok()) return d.status();
    for (const Node* n : joint->graph.nodes()) {
      if (n->op().rfind("prims.", 0) != 0 && n->op() != "aten.mm" && n->op() != "aten.bmm" &&
          n->op() != "aten.convolution") {
        return absl::InternalError(absl::StrCat("decomposed joint graph keeps ", n->op()));
      }
    }
  }
  std::vector<HostTensor> args = inputs;
  args.insert(args.end(), tangents.begin(), tangents.end());
  return Interpret(joint->graph, args, float64 ? F64() : InterpreterOptions());
}

GradcheckResult Gradcheck(const Graph& forward, const std::vector<HostTensor>& inputs,
                          const std::vector<bool>& requires_grad,
                          const GradcheckOptions& options) {
  GradcheckResult result;
  absl::StatusOr<std::vector<HostTensor>> base = Interpret(forward, inputs, F64());
  if (!base.ok()) {
    result.status = base.status();
    return result;
  }
  std::mt19937_64 rng(options.seed * 7919 + 17);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  std::vector<HostTensor> tangents;
  for (size_t i = 0; i < base->size(); ++i) {
    const HostTensor& o = (*base)[i];
    DType dtype = forward.outputs()[i]->type().dtype;  // the float64 run widened it
    if (!IsFloating(dtype)) continue;
    std::vector<double> v(o.ToDoubles().size());
    for (double& x : v) x = uni(rng);
    std::vector<int64_t> shape(o.shape().begin(), o.shape().end());
    tangents.push_back(HostTensor::FromDoubles(dtype, shape, v));
  }
  int num_outputs = static_cast<int>(base->size());
  for (bool decomposed : {false, true}) {
    if (decomposed && !options.decomposed) continue;
    absl::StatusOr<std::vector<HostTensor>> joint =
        RunJoint(forward, inputs, requires_grad, tangents, decomposed);
    if (!joint.ok()) {
      result.status = absl::Status(joint.status().code(),
                                   absl::StrCat(decomposed ? "decomposed joint: " : "joint: ",
                                                joint.status().message()));
      return result;
    }
    int k = num_outputs;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!requires_grad[i]) continue;
      std::vector<double> analytic = (*joint)[k++].ToDoubles();
      std::vector<double> x = inputs[i].ToDoubles();
      std::vector<int64_t> shape(inputs[i].shape().begin(), inputs[i].shape().end());
      for (size_t j = 0; j < x.size(); ++j) {
        double numeric = 0;
        for (double sign : {1.0, -1.0}) {
          std::vector<double> xp = x;
          xp[j] += sign * options.step;
          std::vector<HostTensor> args = inputs;
          args[i] = HostTensor::FromDoubles(inputs[i].dtype(), shape, xp);
          absl::StatusOr<std::vector<HostTensor>> r = Interpret(forward, args, F64());
          if (!r.ok()) {
            result.status = r.status();
            return result;
          }
          numeric += sign * Dot(*r, tangents);
        }
        numeric /= 2 * options.step;
        double err = std::fabs(analytic[j] - numeric) - options.rtol * std::fabs(numeric);
        if (!(err <= result.max_error)) {  // NaN counts as the worst
          result.max_error = std::isnan(err) ? INFINITY : err;
          result.worst = absl::StrCat(decomposed ? "decomposed " : "", "input ", i, " element ",
                                      j, ": analytic ", analytic[j], ", numeric ", numeric);
        }
      }
    }
  }
  return result;
}

}  // namespace coil::autograd::testing

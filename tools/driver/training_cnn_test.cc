// A small CNN trained through the driver against torch 1.13 (training_cnn.py): conv2d (3x3,
// padding 1), batch_norm in training mode (its running statistics are graph outputs fed back
// as inputs the next step), relu, max_pool2d, flatten, linear and cross entropy (as
// -mean(sum(onehot * log_softmax))), on [8, 2, 6, 6] inputs; CompileTraining for the step and
// CompileOptimizer for SGD with momentum and weight decay, from torch's initial weights and
// data. Every step's loss, and the running statistics and parameters after the last step,
// must match torch's. Then the same CNN with dropout (train=true, seed 2024) on the flattened
// features, trained with AdamW: torch applies the mask coil's philox_uniform draws (computed
// in training_cnn.py from Philox's definition), so the losses match only if coil's forward
// and its backward's redrawn mask are that mask.
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "autograd/optimizer.h"
#include "gtest/gtest.h"
#include "runtime/testing/test_kit.h"
#include "tools/driver/training.h"
#include "tools/driver/training_test_data.h"

namespace coil::driver {
namespace {

using testing::F32;
using testing::LoadData;
using testing::Named;
using testing::Op;

const char* const kParams[] = {"conv_w", "conv_b", "bn_w", "bn_b", "fc_w", "fc_b"};

// Inputs x, onehot, the six parameters, running_mean, running_var; outputs the loss and the
// updated running statistics. With `dropout`, p = 0.25 (seed 2024, offset 0) before `fc`.
Graph CnnLoss(const std::map<std::string, Named>& data, bool dropout) {
  Graph g("cnn_loss");
  GraphBuilder b(g);
  auto in = [&](const std::string& name) {
    const std::vector<int64_t>& s = data.at(name).shape;
    return b.Input(TensorType(proto::FLOAT32, std::vector<SymExpr>(s.begin(), s.end())), name);
  };
  Value* x = in("x");
  Value* onehot = in("onehot");
  std::vector<Value*> p;
  for (const char* name : kParams) p.push_back(in(name));
  Value* rm = b.Input(TensorType(proto::FLOAT32, {4}), "running_mean");
  Value* rv = b.Input(TensorType(proto::FLOAT32, {4}), "running_var");
  Value* conv = Op(b, "aten.conv2d", {x, p[0], p[1]}, {{"padding", IntList{1}}});
  absl::StatusOr<std::vector<Value*>> bn =
      b.OpMulti("aten.batch_norm", {conv, rm, rv, p[2], p[3]},
                {{"training", true}, {"momentum", 0.1}, {"eps", 1e-5}});
  EXPECT_TRUE(bn.ok()) << bn.status();
  Value* pooled = Op(b, "aten.max_pool2d", {Op(b, "aten.relu", {(*bn)[0]})},
                     {{"kernel_size", IntList{2}}});
  Value* features = Op(b, "aten.flatten", {pooled}, {{"start_dim", int64_t{1}}});
  if (dropout) {
    features = Op(b, "aten.dropout", {features},
                  {{"p", 0.25}, {"train", true}, {"seed", int64_t{2024}}, {"offset", int64_t{0}}});
  }
  Value* logits = Op(b, "aten.linear", {features, p[4], p[5]});
  Value* lp = Op(b, "aten.log_softmax", {logits}, {{"dim", int64_t{-1}}});
  Value* picked = Op(b, "aten.sum", {Op(b, "aten.mul", {onehot, lp})}, {{"dim", IntList{-1}}});
  g.SetOutputs({Op(b, "aten.neg", {Op(b, "aten.mean", {picked})}), (*bn)[1], (*bn)[2]});
  return g;
}

// Trains CnnLoss(dropout) with `optimizer` for torch's steps; `prefix` names torch's numbers
// ("" for SGD, "dropout_adamw_" for the dropout run).
void TrainAndCompare(bool dropout, const std::string& prefix,
                     const std::function<absl::StatusOr<autograd::OptimizerGraph>(
                         const std::vector<TensorType>&)>& optimizer) {
  std::map<std::string, Named> data = LoadData(testing::Paths().cnn);
  ASSERT_EQ(data.count(prefix + "losses"), 1u) << "no data in " << testing::Paths().cnn;
  DriverOptions options;
  options.backend = testing::CompiledBackend();
  options.cache = nullptr;
  TrainingOptions training;
  training.requires_grad = {false, false, true, true, true, true, true, true, false, false};
  training.output_tangents = {true, false, false};  // the loss; not the running statistics
  absl::StatusOr<TrainingCompileResult> r = CompileTraining(CnnLoss(data, dropout), training, options);
  ASSERT_TRUE(r.ok()) << r.status();
  std::printf("cnn%s: saved %lld bytes (save-everything %lld), %d recomputed nodes\n",
              dropout ? " with dropout" : "", static_cast<long long>(r->saved_bytes),
              static_cast<long long>(r->save_everything_bytes), r->recomputed_nodes);
  EXPECT_LE(r->saved_bytes, r->save_everything_bytes);

  std::vector<HostTensor> params;
  std::vector<TensorType> types;
  for (const char* name : kParams) {
    params.push_back(F32(data[name]));
    std::vector<SymExpr> shape(data[name].shape.begin(), data[name].shape.end());
    types.push_back(TensorType(proto::FLOAT32, shape));
  }
  absl::StatusOr<autograd::OptimizerGraph> graph = optimizer(types);
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<CompiledOptimizer> opt = CompileOptimizer(*std::move(graph), options);
  ASSERT_TRUE(opt.ok()) << opt.status();

  HostTensor rm = HostTensor::FromDoubles(proto::FLOAT32, {4}, std::vector<double>(4, 0.0));
  HostTensor rv = HostTensor::FromDoubles(proto::FLOAT32, {4}, std::vector<double>(4, 1.0));
  // The loss's tangent is 1; the running statistics take none (torch updates them outside
  // autograd).
  std::vector<HostTensor> tangents = {HostTensor::FromDoubles(proto::FLOAT32, {}, {1.0})};
  const std::vector<double>& want = data[prefix + "losses"].values;
  for (size_t step = 0; step < want.size(); ++step) {
    std::vector<HostTensor> primals = {F32(data["x"]), F32(data["onehot"])};
    primals.insert(primals.end(), params.begin(), params.end());
    primals.push_back(rm);
    primals.push_back(rv);
    absl::StatusOr<TrainingStepResult> s = r->Run(primals, tangents);
    ASSERT_TRUE(s.ok()) << s.status();
    double loss = s->outputs[0].ToDoubles()[0];
    std::printf("step %zu: coil %.7f torch %.7f\n", step, loss, want[step]);
    EXPECT_NEAR(loss, want[step], 1e-4 * std::fabs(want[step])) << "step " << step;
    rm = s->outputs[1];
    rv = s->outputs[2];
    absl::Status st = opt->Step(params, s->gradients);
    ASSERT_TRUE(st.ok()) << st;
  }
  EXPECT_LT(want.back(), want.front() / 4);
  if (prefix.empty()) {
    test_kit::ExpectClose(F32(data["running_mean"]), rm, {.abs = 1e-6, .rel = 1e-4},
                          "running_mean");
    test_kit::ExpectClose(F32(data["running_var"]), rv, {.abs = 1e-6, .rel = 1e-4},
                          "running_var");
  }
  for (size_t i = 0; i < params.size(); ++i) {
    // conv_b's true gradient is zero (batch_norm subtracts each channel's batch mean), so both
    // frameworks see rounding noise there, which Adam scales up to steps of size lr.
    if (!prefix.empty() && std::string(kParams[i]) == "conv_b") continue;
    test_kit::ExpectClose(F32(data[prefix + "final_" + kParams[i]]), params[i],
                          {.abs = 1e-5, .rel = 1e-3}, std::string("final ") + kParams[i]);
  }
}

TEST(TrainingCnn, SgdMomentumMatchesTorchOnCompiledBackend) {
  SKIP_WITHOUT_COMPILED_BACKEND();
  TrainAndCompare(false, "", [](const std::vector<TensorType>& types) {
    return autograd::SgdGraph(types, {.lr = 0.1, .momentum = 0.9, .weight_decay = 1e-3});
  });
}

TEST(TrainingCnn, DropoutAdamWMatchesTorchOnCompiledBackend) {
  SKIP_WITHOUT_COMPILED_BACKEND();
  TrainAndCompare(true, "dropout_adamw_", [](const std::vector<TensorType>& types) {
    return autograd::AdamGraph(types,
                               {.lr = 0.01, .weight_decay = 0.05, .decoupled_weight_decay = true});
  });
}

}  // namespace
}  // namespace coil::driver

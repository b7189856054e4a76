// A training step through the compile driver (CompileTraining) against torch 1.13: a 2-layer
// MLP classifier (linear, relu, linear, cross entropy as -mean(sum(onehot * log_softmax)))
// trained for 8 SGD steps from torch's initial weights and data (training_mlp.py); coil's loss
// at each step must match torch's F.cross_entropy within 1e-4 (relative), on the compiled backend
// and on the Schedule interpreter. Also: the default partition saves no more bytes than
// save-everything, dropout's mask on the compiled backend is the reference's (forward and the
// backward's redrawn one), and a bad requires_grad is an autograd error.
#include "tools/driver/training.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/builder.h"
#include "runtime/interpreter.h"
#include "tools/driver/schedule_backend.h"
#include "tools/driver/training_test_data.h"

namespace coil::driver {
namespace {

using testing::F32;
using testing::LoadData;
using testing::Named;
using testing::Op;

// loss = -mean_n sum_c onehot[n, c] * log_softmax(linear(relu(linear(x, w1, b1)), w2, b2))[n, c]
Graph MlpLoss() {
  Graph g("mlp_loss");
  GraphBuilder b(g);
  auto in = [&](const char* name, std::vector<SymExpr> shape) {
    return b.Input(TensorType(proto::FLOAT32, std::move(shape)), name);
  };
  Value* x = in("x", {8, 4});
  Value* onehot = in("onehot", {8, 3});
  Value* w1 = in("w1", {16, 4});
  Value* b1 = in("b1", {16});
  Value* w2 = in("w2", {3, 16});
  Value* b2 = in("b2", {3});
  Value* h = Op(b, "aten.relu", {Op(b, "aten.linear", {x, w1, b1})});
  Value* lp = Op(b, "aten.log_softmax", {Op(b, "aten.linear", {h, w2, b2})},
                 {{"dim", int64_t{-1}}});
  Value* picked = Op(b, "aten.sum", {Op(b, "aten.mul", {onehot, lp})}, {{"dim", IntList{-1}}});
  g.SetOutputs({Op(b, "aten.neg", {Op(b, "aten.mean", {picked})})});
  return g;
}

void TrainAndCompare(std::shared_ptr<Backend> backend) {
  std::map<std::string, Named> data = LoadData(testing::Paths().mlp);
  ASSERT_EQ(data.count("losses"), 1u) << "no data in " << testing::Paths().mlp;
  DriverOptions options;
  options.backend = std::move(backend);
  options.cache = nullptr;
  options.record_artifacts = true;
  TrainingOptions training;
  training.requires_grad = {false, false, true, true, true, true};
  absl::StatusOr<TrainingCompileResult> r = CompileTraining(MlpLoss(), training, options);
  ASSERT_TRUE(r.ok()) << r.status();
  std::printf("%s: saved %lld bytes (save-everything %lld), %d recomputed nodes, autograd %.3f s\n",
              options.backend->name().c_str(), static_cast<long long>(r->saved_bytes),
              static_cast<long long>(r->save_everything_bytes), r->recomputed_nodes,
              r->autograd_seconds);
  EXPECT_LE(r->saved_bytes, r->save_everything_bytes);
  // The report's autograd artifact: first stage of the forward compile, with the three graphs.
  ASSERT_GT(r->forward.report.stages_size(), 0);
  const proto::StageArtifact& a = r->forward.report.stages(0);
  EXPECT_EQ(a.stage(), "autograd");
  EXPECT_EQ(a.autograd().saved_values_size(), static_cast<int>(r->saved.size()));
  EXPECT_EQ(a.autograd().saved_bytes(), r->saved_bytes);
  EXPECT_GT(a.autograd().joint().nodes_size(), a.autograd().forward().nodes_size());
  EXPECT_GT(a.autograd().backward().nodes_size(), 0);

  std::vector<Named> params = {data["w1"], data["b1"], data["w2"], data["b2"]};
  const std::vector<double>& want = data["losses"].values;
  const double lr = 0.5;
  for (size_t step = 0; step < want.size(); ++step) {
    std::vector<HostTensor> primals = {F32(data["x"]), F32(data["onehot"])};
    for (const Named& p : params) primals.push_back(F32(p));
    std::vector<HostTensor> tangents = {HostTensor::FromDoubles(proto::FLOAT32, {}, {1.0})};
    absl::StatusOr<TrainingStepResult> s = r->Run(primals, tangents);
    ASSERT_TRUE(s.ok()) << s.status();
    double loss = s->outputs[0].ToDoubles()[0];
    EXPECT_NEAR(loss, want[step], 1e-4 * std::fabs(want[step])) << "step " << step;
    std::printf("step %zu: coil %.7f torch %.7f\n", step, loss, want[step]);
    ASSERT_EQ(s->gradients.size(), params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      std::vector<double> g = s->gradients[i].ToDoubles();
      for (size_t k = 0; k < g.size(); ++k) {
        // SGD in f32, as torch's parameters are f32.
        params[i].values[k] = static_cast<float>(params[i].values[k] - lr * static_cast<float>(g[k]));
      }
    }
  }
  EXPECT_LT(want.back(), want.front());
}

TEST(Training, MlpSgdMatchesTorchOnCompiledBackend) {
  SKIP_WITHOUT_COMPILED_BACKEND();
  TrainAndCompare(testing::CompiledBackend());
}

TEST(Training, MlpSgdMatchesTorchOnScheduleInterpreter) {
  TrainAndCompare(ScheduleInterpreterBackend());
}

// Dropout with train=true compiled for the backend under test (CPU or CUDA): the forward's mask (generated code's
// Philox) is the reference kernel's, and the backward, which draws the mask again, sends the
// gradient exactly through the kept elements: dL/dx = t * w / (1 - p) there, 0 elsewhere.
TEST(Training, DropoutOnCompiledBackendMatchesReferenceMask) {
  SKIP_WITHOUT_COMPILED_BACKEND();
  Graph g("dropout");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(proto::FLOAT32, {5, 7}), "x");
  Value* w = b.Input(TensorType(proto::FLOAT32, {7}), "w");
  const double p = 0.25;
  g.SetOutputs({Op(b, "aten.dropout", {Op(b, "aten.mul", {x, w})},
                   {{"p", p}, {"train", true}, {"seed", int64_t{1234}}, {"offset", int64_t{7}}})});
  std::vector<double> xs(35), ws(7), ts(35);
  for (int i = 0; i < 35; ++i) xs[i] = 0.5 + 0.03 * i, ts[i] = 1.0 - 0.05 * i;
  for (int i = 0; i < 7; ++i) ws[i] = 1.5 - 0.2 * i;
  std::vector<HostTensor> primals = {HostTensor::FromDoubles(proto::FLOAT32, {5, 7}, xs),
                                     HostTensor::FromDoubles(proto::FLOAT32, {7}, ws)};
  absl::StatusOr<std::vector<HostTensor>> want = Interpret(g, primals);
  ASSERT_TRUE(want.ok()) << want.status();
  DriverOptions options;
  options.backend = testing::CompiledBackend();
  options.cache = nullptr;
  absl::StatusOr<TrainingCompileResult> r = CompileTraining(g.Clone(), {{true, true}, {}}, options);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<TrainingStepResult> s =
      r->Run(primals, {HostTensor::FromDoubles(proto::FLOAT32, {5, 7}, ts)});
  ASSERT_TRUE(s.ok()) << s.status();
  std::vector<double> y = s->outputs[0].ToDoubles(), ref = (*want)[0].ToDoubles();
  std::vector<double> gx = s->gradients[0].ToDoubles();
  int kept = 0;
  for (int i = 0; i < 35; ++i) {
    EXPECT_NEAR(y[i], ref[i], 1e-6 * std::fabs(ref[i])) << "element " << i;
    double expect = ref[i] == 0 ? 0.0 : ts[i] * ws[i % 7] / (1 - p);
    EXPECT_NEAR(gx[i], expect, 1e-6 * std::fabs(expect)) << "element " << i;
    kept += ref[i] != 0;
  }
  EXPECT_GT(kept, 15);
  EXPECT_LT(kept, 35);
}

TEST(Training, NonFloatingRequiresGradIsAnAutogradError) {
  Graph g("f");
  GraphBuilder b(g);
  Value* i = b.Input(TensorType(proto::INT64, {3}), "i");
  g.SetOutputs({Op(b, "aten.neg", {i})});
  DriverOptions options;
  options.backend = ScheduleInterpreterBackend();
  options.cache = nullptr;
  absl::StatusOr<TrainingCompileResult> r = CompileTraining(std::move(g), {{true}, {}}, options);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message().rfind("autograd: input 0", 0), 0u) << r.status();
}

TEST(Training, BadOutputTangentsAreAutogradErrors) {
  Graph g("f");
  GraphBuilder b(g);
  Value* x = b.Input(TensorType(proto::FLOAT32, {3}), "x");
  g.SetOutputs({Op(b, "aten.neg", {x}), Op(b, "aten.argmax", {x})});
  DriverOptions options;
  options.backend = ScheduleInterpreterBackend();
  options.cache = nullptr;
  absl::StatusOr<TrainingCompileResult> r = CompileTraining(g.Clone(), {{true}, {true}}, options);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "autograd: output_tangents has 1 entries for 2 graph outputs");
  r = CompileTraining(g.Clone(), {{true}, {true, true}}, options);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "autograd: output 1 (i64[]) takes a tangent but is not floating");
  // Without a tangent on the only floating output, nothing reaches x: its gradient is zero.
  r = CompileTraining(g.Clone(), {{true}, {false, false}}, options);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<TrainingStepResult> s =
      r->Run({HostTensor::FromDoubles(proto::FLOAT32, {3}, {1, 5, 2})}, {});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->gradients[0].ToDoubles(), std::vector<double>({0, 0, 0}));
}

}  // namespace
}  // namespace coil::driver

namespace coil::driver::testing {
DataPaths& Paths() {
  static DataPaths* paths = new DataPaths();
  return *paths;
}
}  // namespace coil::driver::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s MLP_DATA.txt OPTIMIZER_DATA.txt CNN_DATA.txt\n", argv[0]);
    return 2;
  }
  coil::driver::testing::Paths() = {argv[1], argv[2], argv[3]};
  return RUN_ALL_TESTS();
}

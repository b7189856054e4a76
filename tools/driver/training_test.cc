// A training step through the compile driver (CompileTraining) against torch 1.13: a 2-layer
// MLP classifier (linear, relu, linear, cross entropy as -mean(sum(onehot * log_softmax)))
// trained for 8 SGD steps from torch's initial weights and data (training_mlp.py); coil's loss
// at each step must match torch's F.cross_entropy within 1e-4 (relative), on the CPU backend
// and on the Schedule interpreter. Also: the default partition saves no more bytes than
// save-everything, and a bad requires_grad is an autograd error.
#include "tools/driver/training.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/builder.h"
#include "tools/driver/cpu_backend.h"
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

TEST(Training, MlpSgdMatchesTorchOnCpuBackend) { TrainAndCompare(CpuBackend()); }

TEST(Training, MlpSgdMatchesTorchOnScheduleInterpreter) {
  TrainAndCompare(ScheduleInterpreterBackend());
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

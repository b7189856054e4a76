// Optimizer steps compiled by the driver (autograd/optimizer.h, CompileOptimizer) against
// torch.optim in torch 1.13 (training_optim.py): SGD with momentum and weight decay, nesterov,
// plain SGD with weight decay, Adam with L2 weight decay and AdamW, five steps each with the
// same gradients; the parameters after every step must match torch's, on the compiled backend
// (CPU in training_test, CUDA in training_cuda_test) and on the Schedule interpreter. The parameters are updated in place: the test's tensors are the
// ones the compiled graph writes. Also the errors of bad hyperparameters and inputs.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "autograd/optimizer.h"
#include "gtest/gtest.h"
#include "runtime/testing/test_kit.h"
#include "tools/driver/schedule_backend.h"
#include "tools/driver/training.h"
#include "tools/driver/training_test_data.h"

namespace coil::driver {
namespace {

using testing::F32;
using testing::LoadData;
using testing::Named;

constexpr int kParams = 3;
constexpr int kSteps = 5;

absl::StatusOr<autograd::OptimizerGraph> Build(const std::string& name,
                                               const std::vector<TensorType>& types) {
  if (name == "sgd_momentum") {
    return autograd::SgdGraph(types, {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01});
  }
  if (name == "sgd_nesterov") {
    return autograd::SgdGraph(types, {.lr = 0.05, .momentum = 0.8, .nesterov = true});
  }
  if (name == "sgd") return autograd::SgdGraph(types, {.lr = 0.1, .weight_decay = 0.1});
  if (name == "adam") return autograd::AdamGraph(types, {.lr = 0.01, .weight_decay = 0.02});
  return autograd::AdamGraph(types, {.lr = 0.01, .beta1 = 0.8, .beta2 = 0.99,
                                     .weight_decay = 0.1, .decoupled_weight_decay = true});
}

// The first `params_used` of the kParams parameters: torch's updates are per parameter, so a
// graph for them must give torch's numbers for those. With one parameter, Adam's bias
// corrections are computed inside its update kernel from the 0-d step count (with three,
// they are a kernel of their own): codegen_cpu reads the step once before the loop
// (kernel_emitter.cc, [Note: scalar loads before the loop]).
void StepsMatchTorch(std::shared_ptr<Backend> backend, int params_used = kParams) {
  std::map<std::string, Named> data = LoadData(testing::Paths().optimizers);
  ASSERT_EQ(data.count("p0"), 1u) << "no data in " << testing::Paths().optimizers;
  std::vector<TensorType> types;
  for (int i = 0; i < params_used; ++i) {
    std::vector<SymExpr> shape(data["p" + std::to_string(i)].shape.begin(),
                               data["p" + std::to_string(i)].shape.end());
    types.push_back(TensorType(proto::FLOAT32, shape));
  }
  DriverOptions options;
  options.backend = backend;
  options.cache = nullptr;
  for (const char* name : {"sgd_momentum", "sgd_nesterov", "sgd", "adam", "adamw"}) {
    SCOPED_TRACE(absl::StrCat(name, ", ", params_used, " parameter(s)"));
    absl::StatusOr<autograd::OptimizerGraph> graph = Build(name, types);
    ASSERT_TRUE(graph.ok()) << graph.status();
    absl::StatusOr<CompiledOptimizer> opt = CompileOptimizer(*std::move(graph), options);
    ASSERT_TRUE(opt.ok()) << opt.status();
    std::vector<HostTensor> params;
    for (int i = 0; i < params_used; ++i) params.push_back(F32(data["p" + std::to_string(i)]));
    for (int k = 0; k < kSteps; ++k) {
      std::vector<HostTensor> grads;
      for (int i = 0; i < params_used; ++i) {
        grads.push_back(F32(data[absl::StrCat("g", i, "_s", k)]));
      }
      absl::Status s = opt->Step(params, grads);
      ASSERT_TRUE(s.ok()) << s;
      for (int i = 0; i < params_used; ++i) {
        test_kit::ExpectClose(F32(data[absl::StrCat(name, "_p", i, "_s", k)]), params[i],
                              {.abs = 1e-7, .rel = 2e-6},
                              absl::StrCat(name, " param ", i, " after step ", k + 1));
      }
    }
  }
}

TEST(Optimizer, StepsMatchTorchOnCompiledBackend) {
  SKIP_WITHOUT_COMPILED_BACKEND();
  StepsMatchTorch(testing::CompiledBackend());
  StepsMatchTorch(testing::CompiledBackend(), /*params_used=*/1);
}

TEST(Optimizer, StepsMatchTorchOnScheduleInterpreter) {
  StepsMatchTorch(ScheduleInterpreterBackend());
}

TEST(Optimizer, BadHyperparametersAndInputsAreErrors) {
  std::vector<TensorType> types = {TensorType(proto::FLOAT32, {2})};
  auto message = [](const absl::StatusOr<autograd::OptimizerGraph>& g) {
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(g.status().message());
  };
  EXPECT_EQ(message(autograd::SgdGraph(types, {.lr = -1})), "SGD: invalid learning rate value: -1");
  EXPECT_EQ(message(autograd::SgdGraph(types, {.nesterov = true})),
            "SGD: nesterov momentum requires a momentum");
  EXPECT_EQ(message(autograd::AdamGraph(types, {.beta2 = 1.0})),
            "Adam: invalid beta parameter at index 1: 1");
  EXPECT_EQ(message(autograd::AdamGraph({}, {.decoupled_weight_decay = true})),
            "AdamW: no parameters");
  EXPECT_EQ(message(autograd::SgdGraph({TensorType(proto::INT64, {2})}, {})),
            "SGD: parameter 0 is i64[2] (expected a floating dtype)");

  DriverOptions options;
  options.backend = ScheduleInterpreterBackend();
  options.cache = nullptr;
  absl::StatusOr<CompiledOptimizer> opt =
      CompileOptimizer(*autograd::SgdGraph(types, {.momentum = 0.5}), options);
  ASSERT_TRUE(opt.ok()) << opt.status();
  HostTensor p = HostTensor::FromDoubles(proto::FLOAT32, {2}, {1, 2});
  HostTensor g3 = HostTensor::FromDoubles(proto::FLOAT32, {3}, {1, 2, 3});
  absl::Status s = opt->Step({p}, {g3});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "optimizer step: gradient 0 differs from its parameter in shape or dtype");
  s = opt->Step({p, p}, {g3});
  EXPECT_EQ(s.message(), "optimizer step: expected 1 parameters and gradients, got 2 and 1");
}

}  // namespace
}  // namespace coil::driver

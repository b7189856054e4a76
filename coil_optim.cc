// coil::optim (coil_optim.h): optimizer graphs compiled once by the compile driver.
#include "coil_optim.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "capture/autograd.h"
#include "capture/error.h"
#include "tools/driver/cpu_backend.h"
#include "tools/driver/training.h"

namespace coil::optim {

Optimizer::Optimizer(std::vector<Tensor> params) : params_(std::move(params)) {
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    if (!p.defined() || p.is_lazy() || !IsFloating(p.dtype())) {
      throw Error(absl::InvalidArgumentError(absl::StrCat(
          "optimizer: parameter ", i, " must be a defined, concrete floating tensor; it is ",
          p.TypeString())));
    }
  }
}

Optimizer::~Optimizer() = default;

void Optimizer::zero_grad() { coil::zero_grad(params_); }

void Optimizer::step() {
  std::vector<HostTensor> params, grads;
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor g = params_[i].grad();
    if (!g.defined()) {
      throw Error(absl::FailedPreconditionError(absl::StrCat(
          "optimizer step: parameter ", i, " (", params_[i].TypeString(),
          ") has no gradient; did backward() reach it?")));
    }
    params.push_back(params_[i].host());
    grads.push_back(g.host());
  }
  if (compiled_ == nullptr) {
    std::vector<TensorType> types;
    for (const HostTensor& p : params) {
      std::vector<SymExpr> shape(p.shape().begin(), p.shape().end());
      types.push_back(TensorType(p.dtype(), std::move(shape)));
    }
    absl::StatusOr<autograd::OptimizerGraph> graph = BuildGraph(types);
    if (!graph.ok()) throw Error(graph.status());
    driver::DriverOptions options;
    options.backend = backend_ != nullptr ? backend_ : driver::CpuBackend();
    absl::StatusOr<driver::CompiledOptimizer> c =
        driver::CompileOptimizer(*std::move(graph), options);
    if (!c.ok()) throw Error(c.status());
    compiled_ = std::make_unique<driver::CompiledOptimizer>(*std::move(c));
  }
  if (absl::Status s = compiled_->Step(params, grads); !s.ok()) throw Error(s);
}

SGD::SGD(std::vector<Tensor> params, autograd::SgdOptions options)
    : Optimizer(std::move(params)), options_(options) {}

absl::StatusOr<autograd::OptimizerGraph> SGD::BuildGraph(
    const std::vector<TensorType>& types) const {
  return autograd::SgdGraph(types, options_);
}

Adam::Adam(std::vector<Tensor> params, autograd::AdamOptions options)
    : Optimizer(std::move(params)), options_(options) {}

absl::StatusOr<autograd::OptimizerGraph> Adam::BuildGraph(
    const std::vector<TensorType>& types) const {
  return autograd::AdamGraph(types, options_);
}

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions o)
    : Adam(std::move(params), autograd::AdamOptions{.lr = o.lr,
                                                    .beta1 = o.beta1,
                                                    .beta2 = o.beta2,
                                                    .eps = o.eps,
                                                    .weight_decay = o.weight_decay,
                                                    .decoupled_weight_decay = true}) {}

}  // namespace coil::optim

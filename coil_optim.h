// coil::optim: torch.optim-style optimizers over coil::Tensor parameters whose update of every
// parameter runs as one compiled graph (autograd/optimizer.h's graphs through the compile
// driver's CompileOptimizer, on the compiled CPU backend), the role of torch's fused/foreach
// implementations.
//
//   std::vector<Tensor> params = {w, b};        // leaves with set_requires_grad(true)
//   optim::AdamW opt(params, {.lr = 1e-3, .weight_decay = 0.01});
//   for (...) {
//     opt.zero_grad();
//     loss_fn(x).backward();
//     opt.step();                              // updates w and b in place
//   }
//
// The first step compiles the graph (parameter shapes and dtypes are fixed then); the
// optimizer owns its state (momentum buffers; exp_avg, exp_avg_sq and the step count),
// zero-initialized as torch does. Errors throw coil::Error: a parameter without a gradient at
// step() (torch skips those; here every parameter must have one), an undefined or
// non-floating parameter.
#ifndef COIL_COIL_OPTIM_H_
#define COIL_COIL_OPTIM_H_

#include <memory>
#include <utility>
#include <vector>

#include "autograd/optimizer.h"
#include "capture/tensor.h"

namespace coil::driver {
class Backend;
struct CompiledOptimizer;
}

namespace coil::optim {

class Optimizer {
 public:
  virtual ~Optimizer();
  // One update of every parameter from its .grad() (outside the autograd tape).
  void step();
  // Clears every parameter's .grad() (torch's zero_grad(set_to_none=True)).
  void zero_grad();
  const std::vector<Tensor>& params() const { return params_; }
  // The compile driver backend the update compiles for at the first step (default:
  // driver::CpuBackend(), every CPU's thread); set before the first step().
  void set_backend(std::shared_ptr<driver::Backend> backend) { backend_ = std::move(backend); }

 protected:
  explicit Optimizer(std::vector<Tensor> params);
  virtual absl::StatusOr<autograd::OptimizerGraph> BuildGraph(
      const std::vector<TensorType>& types) const = 0;

 private:
  std::vector<Tensor> params_;
  std::shared_ptr<driver::Backend> backend_;
  std::unique_ptr<driver::CompiledOptimizer> compiled_;
};

// torch.optim.SGD (momentum, weight decay, nesterov; no dampening).
class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, autograd::SgdOptions options);

 private:
  absl::StatusOr<autograd::OptimizerGraph> BuildGraph(
      const std::vector<TensorType>& types) const override;
  autograd::SgdOptions options_;
};

// torch.optim.Adam (L2 weight decay) and AdamW (decoupled weight decay); no amsgrad.
class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, autograd::AdamOptions options);

 private:
  absl::StatusOr<autograd::OptimizerGraph> BuildGraph(
      const std::vector<TensorType>& types) const override;
  autograd::AdamOptions options_;
};

struct AdamWOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 1e-2;  // torch.optim.AdamW's default
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, AdamWOptions options);
};

}  // namespace coil::optim

#endif  // COIL_COIL_OPTIM_H_

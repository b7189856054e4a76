// coil::Tensor: the eager tensor of coil's C++ API.
//
// A Tensor has a dtype, a device, sizes, strides and a storage offset over shared storage:
// views (slice, transpose, reshape when possible, ...) share storage with their base, and
// in-place ops (`add_`, `copy_`, ...) are seen through every view, as in PyTorch. Every op of
// the registry (`coil ops`) is a free function in namespace coil and, when its first input is
// `self`/`input`, a method; both are generated from the op schemas (capture/gen_ops.cc), with
// PyTorch's attribute defaults. Eager execution uses the reference kernels.
//
//   Tensor x = Tensor::Randn({2, 3}, /*seed=*/0);
//   Tensor y = relu(x.matmul(w) + b).softmax(-1);
//   double total = y.sum().item();
//
// Generated signatures (rules in capture/gen_ops.cc): `aten.add` -> `add`, `aten.add_` ->
// `add_` (returns the self Tensor); parameters are tensor inputs, required attributes,
// optional tensor inputs, defaulted attributes, then `loc`. Tuple-returning ops (max_dim,
// min_dim, var_mean, std_mean, split, chunk) return std::vector<Tensor>; others their first
// output. Keyword-named parameters get a trailing `_`. Operators report errors at their own
// definition (they cannot take `loc`); the named functions report the caller's file:line.
//
// Inside coil::compile the same code is traced: tensors are lazy, sizes are SymInts, and
// reading values (`item()`, `tolist()`, printing) is a graph break. Errors throw coil::Error.
#ifndef COIL_CAPTURE_TENSOR_H_
#define COIL_CAPTURE_TENSOR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <source_location>
#include <string>
#include <vector>

#include "capture/error.h"
#include "capture/sym_int.h"
#include "ir/dtype.h"
#include "ir/tensor_type.h"
#include "runtime/host_tensor.h"

namespace coil {

namespace capture_internal {
class TensorImpl;
}

class Tensor {
 public:
  // An undefined tensor.
  Tensor() = default;
  explicit Tensor(std::shared_ptr<capture_internal::TensorImpl> impl) : impl_(std::move(impl)) {}

  // ---- factories (concrete, CPU) ----
  // Wraps a HostTensor (sharing its storage).
  static Tensor FromHost(HostTensor t);
  // Contiguous from values (rounded to the dtype).
  static Tensor FromValues(std::vector<double> values, std::vector<int64_t> shape,
                           DType dtype = proto::FLOAT32);
  static Tensor Scalar(double value, DType dtype = proto::FLOAT32);
  static Tensor Zeros(std::vector<int64_t> shape, DType dtype = proto::FLOAT32);
  static Tensor Ones(std::vector<int64_t> shape, DType dtype = proto::FLOAT32);
  // Deterministic pseudo-random data: uniform in [0, 1) / standard normal.
  static Tensor Rand(std::vector<int64_t> shape, uint64_t seed, DType dtype = proto::FLOAT32);
  static Tensor Randn(std::vector<int64_t> shape, uint64_t seed, DType dtype = proto::FLOAT32);

  // ---- metadata ----
  bool defined() const { return impl_ != nullptr; }
  DType dtype() const;
  Device device() const;
  int64_t dim() const;
  // Sizes are SymInts: symbolic while a function is compiled with dynamic shapes.
  SymInt size(int64_t d) const;
  std::vector<SymInt> sizes() const;
  SymInt numel() const;
  // Layout of a concrete tensor (a lazy one reports contiguous strides).
  std::vector<int64_t> strides() const;
  int64_t storage_offset() const;
  bool is_contiguous() const;
  // Whether this tensor is a value of a trace being recorded (inside coil::compile).
  bool is_lazy() const;

  // ---- values (a graph break while compiling) ----
  double item(std::source_location loc = std::source_location::current()) const;
  std::vector<double> tolist(std::source_location loc = std::source_location::current()) const;
  // The concrete data (sharing storage).
  HostTensor host(std::source_location loc = std::source_location::current()) const;

  // "f32[2, 3]" (no values, never a break).
  std::string TypeString() const;

  // ---- autograd (capture/autograd.h) ----
  // Whether gradients flow to this tensor: a leaf marked with set_requires_grad, or a tensor
  // computed (with grad mode on) from one.
  bool requires_grad() const;
  // Marks a floating leaf tensor (not one an op computed) as wanting .grad().
  Tensor& set_requires_grad(bool requires_grad = true,
                            std::source_location loc = std::source_location::current());
  bool is_leaf() const;
  // The gradient backward() accumulated into this leaf; undefined before (or after zero_grad).
  Tensor grad() const;
  void zero_grad();
  // The same data, outside the tape (shares storage).
  Tensor detach() const;
  // Accumulates d(this)/d(leaf) into every leaf's grad(); `gradient` is required unless this
  // tensor has one element. The graph's saved values are freed unless `retain_graph`.
  void backward(const Tensor& gradient = Tensor(), bool retain_graph = false,
                std::source_location loc = std::source_location::current()) const;

  // ---- generated: one method per op whose first input is `self` or `input` ----
#include "capture/tensor_methods.inc"

  capture_internal::TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<capture_internal::TensorImpl>& impl_ptr() const { return impl_; }

 private:
  std::shared_ptr<capture_internal::TensorImpl> impl_;
};

// Prints the values (a graph break while compiling).
std::ostream& operator<<(std::ostream& os, const Tensor& t);

// Operators (tensor-tensor broadcast and promote; a double is a Python-style scalar).
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, double b);
Tensor operator-(const Tensor& a, double b);
Tensor operator*(const Tensor& a, double b);
Tensor operator/(const Tensor& a, double b);
Tensor operator+(double a, const Tensor& b);
Tensor operator-(double a, const Tensor& b);
Tensor operator*(double a, const Tensor& b);
Tensor operator/(double a, const Tensor& b);
// Integer scalars keep integral dtypes (`int_tensor * 2` is integral, as in PyTorch); `int`
// literals pick these exactly.
Tensor operator+(const Tensor& a, int64_t b);
Tensor operator-(const Tensor& a, int64_t b);
Tensor operator*(const Tensor& a, int64_t b);
Tensor operator/(const Tensor& a, int64_t b);  // true division: float
Tensor operator+(int64_t a, const Tensor& b);
Tensor operator-(int64_t a, const Tensor& b);
Tensor operator*(int64_t a, const Tensor& b);
Tensor operator/(int64_t a, const Tensor& b);
inline Tensor operator+(const Tensor& a, int b) { return a + int64_t{b}; }
inline Tensor operator-(const Tensor& a, int b) { return a - int64_t{b}; }
inline Tensor operator*(const Tensor& a, int b) { return a * int64_t{b}; }
inline Tensor operator/(const Tensor& a, int b) { return a / int64_t{b}; }
inline Tensor operator+(int a, const Tensor& b) { return int64_t{a} + b; }
inline Tensor operator-(int a, const Tensor& b) { return int64_t{a} - b; }
inline Tensor operator*(int a, const Tensor& b) { return int64_t{a} * b; }
inline Tensor operator/(int a, const Tensor& b) { return int64_t{a} / b; }
Tensor operator-(const Tensor& a);
// Comparisons give bool tensors.
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, double b);
Tensor operator>(const Tensor& a, double b);
Tensor operator<=(const Tensor& a, double b);
Tensor operator>=(const Tensor& a, double b);

}  // namespace coil

// ---- generated: one free function per registry op ----
#include "capture/ops.inc"

#endif  // COIL_CAPTURE_TENSOR_H_

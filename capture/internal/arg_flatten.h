// Flattening the arguments and results of a function given to coil::compile. Internal.
//
// A compiled function sees its arguments as a flat list of tensors plus plain scalars (guarded
// by value) and list lengths; that is what guards check and what the tracer turns into graph
// inputs. Rebuild does the reverse: it makes the argument tuple again with other tensors in
// the tensors' places (lazy ones while tracing), so the user's function can be called.
//
//   Supported arguments: Tensor, std::vector<Tensor>, int64_t, int, double, float, bool.
//   Supported results:   Tensor, std::vector<Tensor>, std::tuple<Tensor, ...>.
//
// Other types fail to compile with a static_assert that names the supported ones.
#ifndef COIL_CAPTURE_INTERNAL_ARG_FLATTEN_H_
#define COIL_CAPTURE_INTERNAL_ARG_FLATTEN_H_

#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "capture/tensor.h"

namespace coil::capture_internal {

// The flattened arguments of one call. Pointers refer to the caller's arguments and are valid
// for the duration of the call only. No allocation for up to 8 tensors and 4 scalars.
struct FlatArgs {
  absl::InlinedVector<const Tensor*, 8> tensors;
  // Where each tensor came from: argument position, and index within a vector argument (-1).
  absl::InlinedVector<std::pair<int32_t, int32_t>, 8> tensor_origin;
  absl::InlinedVector<double, 4> scalars;
  absl::InlinedVector<int32_t, 4> scalar_origin;  // argument position
  absl::InlinedVector<int32_t, 4> list_lengths;   // one per vector argument, in order
};

template <typename T>
inline constexpr bool kAlwaysFalse = false;

// Per-argument-type flattening; the primary template rejects unsupported types.
template <typename T, typename Enable = void>
struct ArgTraits {
  static_assert(kAlwaysFalse<T>,
                "coil::compile: unsupported argument type. A compiled function takes "
                "coil::Tensor, std::vector<coil::Tensor>, int64_t, int, double, float or bool.");
};

template <>
struct ArgTraits<Tensor> {
  static void Flatten(const Tensor& t, int position, FlatArgs& out) {
    out.tensors.push_back(&t);
    out.tensor_origin.push_back({position, -1});
  }
  static Tensor Rebuild(const Tensor&, absl::Span<const Tensor> tensors, size_t& next) {
    return tensors[next++];
  }
};

template <>
struct ArgTraits<std::vector<Tensor>> {
  static void Flatten(const std::vector<Tensor>& v, int position, FlatArgs& out) {
    out.list_lengths.push_back(static_cast<int32_t>(v.size()));
    for (size_t i = 0; i < v.size(); ++i) {
      out.tensors.push_back(&v[i]);
      out.tensor_origin.push_back({position, static_cast<int32_t>(i)});
    }
  }
  static std::vector<Tensor> Rebuild(const std::vector<Tensor>& v,
                                     absl::Span<const Tensor> tensors, size_t& next) {
    std::vector<Tensor> result(tensors.begin() + next, tensors.begin() + next + v.size());
    next += v.size();
    return result;
  }
};

// Plain scalars: specialization inputs (the compiled artifact is valid for this value only).
template <typename T>
struct ArgTraits<T, std::enable_if_t<std::is_arithmetic_v<T>>> {
  static void Flatten(T v, int position, FlatArgs& out) {
    out.scalars.push_back(static_cast<double>(v));
    out.scalar_origin.push_back(position);
  }
  static T Rebuild(T v, absl::Span<const Tensor>, size_t&) { return v; }
};

template <typename... Args>
void FlattenArgs(FlatArgs& out, const Args&... args) {
  int position = 0;
  (ArgTraits<std::decay_t<Args>>::Flatten(args, position++, out), ...);
}

// The argument tuple with `tensors` (in FlattenArgs order) in place of the tensors.
template <typename... Args>
std::tuple<std::decay_t<Args>...> RebuildArgs(absl::Span<const Tensor> tensors,
                                              const Args&... args) {
  size_t next = 0;
  // Braced initialization evaluates left to right.
  return std::tuple<std::decay_t<Args>...>{
      ArgTraits<std::decay_t<Args>>::Rebuild(args, tensors, next)...};
}

// Results.
template <typename R>
struct ResultTraits {
  static_assert(kAlwaysFalse<R>,
                "coil::compile: unsupported result type. A compiled function returns "
                "coil::Tensor, std::vector<coil::Tensor> or std::tuple<coil::Tensor, ...>.");
};

template <>
struct ResultTraits<Tensor> {
  static constexpr int kArity = 1;  // -1: any number
  static std::vector<Tensor> Flatten(Tensor r) { return {std::move(r)}; }
  static Tensor Unflatten(std::vector<Tensor> v) { return std::move(v[0]); }
};

template <>
struct ResultTraits<std::vector<Tensor>> {
  static constexpr int kArity = -1;
  static std::vector<Tensor> Flatten(std::vector<Tensor> r) { return r; }
  static std::vector<Tensor> Unflatten(std::vector<Tensor> v) { return v; }
};

template <typename... Ts>
struct ResultTraits<std::tuple<Ts...>> {
  static_assert((std::is_same_v<Ts, Tensor> && ...),
                "coil::compile: a tuple result must hold only coil::Tensor elements.");
  static constexpr int kArity = sizeof...(Ts);
  static std::vector<Tensor> Flatten(std::tuple<Ts...> r) {
    return std::apply([](Ts&... t) { return std::vector<Tensor>{std::move(t)...}; }, r);
  }
  static std::tuple<Ts...> Unflatten(std::vector<Tensor> v) {
    return UnflattenImpl(v, std::index_sequence_for<Ts...>());
  }

 private:
  template <size_t... I>
  static std::tuple<Ts...> UnflattenImpl(std::vector<Tensor>& v, std::index_sequence<I...>) {
    return std::tuple<Ts...>{std::move(v[I])...};
  }
};

}  // namespace coil::capture_internal

#endif  // COIL_CAPTURE_INTERNAL_ARG_FLATTEN_H_

// The vectors the direct convolution kernels (conv_direct.h) are written in: GCC/clang vector
// types of 16 and 8 floats, their loads and stores, and the extern epilogue applied to a vector
// of results before it is stored. As in gemv.cc, each kernel file's task functions are
// compiled for AVX-512, AVX2 and the baseline and picked at load time (COIL_CONV_CLONES, an
// ifunc); everything here is always inlined into those clones, so that the vectors are the
// clone's registers.
//
//   COIL_CONV_CLONES void SomeTask(const Job& j, int64_t begin, int64_t end) {
//     V16 acc = Load<V16>(j.bias + c0);
//     ...
//     StoreV(j.out + idx, Steps(acc, j.steps, idx));
//   }
//
// Not an API: included by conv_direct_*.cc only.
#ifndef COIL_RUNTIME_CPU_INTERNAL_CONV_DIRECT_VECTORS_H_
#define COIL_RUNTIME_CPU_INTERNAL_CONV_DIRECT_VECTORS_H_

#include <cstdint>

#include "absl/types/span.h"
#include "runtime/cpu/externs.h"

// GCC needs -O3 to unroll the accumulator loops into registers, so the clones ask for it.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define COIL_CONV_CLONES \
  __attribute__((target_clones("avx512f", "avx2", "default"), optimize("O3")))
#elif defined(__x86_64__) && defined(__clang__) && __clang_major__ >= 14
#define COIL_CONV_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define COIL_CONV_CLONES
#endif
// Kept out of line (one copy per ISA, called through the ifunc). clang refuses `noinline` on a
// target_clones function: it never inlines one.
#if defined(__clang__)
#define COIL_CONV_NOINLINE
#else
#define COIL_CONV_NOINLINE __attribute__((noinline))
#endif
#define COIL_CONV_INLINE inline __attribute__((always_inline))
// The same for a lambda inside such a helper (a lambda left out of line would be compiled for
// the baseline target and pass vectors by another convention than its caller's clone).
#define COIL_CONV_LAMBDA_INLINE __attribute__((always_inline))

namespace coil::cpu::internal::conv_direct {

typedef float V16 __attribute__((vector_size(64)));
typedef float V8 __attribute__((vector_size(32)));

template <typename V>
COIL_CONV_INLINE V Load(const float* p) {
  V v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
template <typename V>
COIL_CONV_INLINE void StoreV(float* p, V v) {
  __builtin_memcpy(p, &v, sizeof v);
}
template <typename V>
COIL_CONV_INLINE V Splat(float f) {
  return V{} + f;
}
template <>
COIL_CONV_INLINE float Splat<float>(float f) {
  return f;
}

// max(v, lo) and min(v, hi) as std::max / std::min compute them (a NaN v stays NaN).
template <typename V>
COIL_CONV_INLINE V MaxOf(V v, V lo) {
  return v < lo ? lo : v;
}
template <typename V>
COIL_CONV_INLINE V MinOf(V v, V hi) {
  return hi < v ? hi : v;
}

// The epilogue steps on the results at output index `idx` (gemv.cc's Store, lane by lane).
template <typename V>
COIL_CONV_INLINE V Steps(V v, absl::Span<const ExternEpilogueStep> steps, int64_t idx) {
  for (const ExternEpilogueStep& step : steps) {
    switch (step.kind) {
      case ExternEpilogueStep::kAdd:
        v += Load<V>(reinterpret_cast<const float*>(step.other->data) + idx);
        break;
      case ExternEpilogueStep::kRelu:
        v = MaxOf(v, Splat<V>(0.0f));
        break;
      case ExternEpilogueStep::kClip:
        v = MinOf(MaxOf(v, Splat<V>(step.lo)), Splat<V>(step.hi));
        break;
      case ExternEpilogueStep::kHardswish:
        // A multiply by 1/6, not a division (a vector division is ~10x a multiply's
        // throughput, and this runs once per output); within an ulp of the quotient.
        v = v * MinOf(MaxOf(v + 3.0f, Splat<V>(0.0f)), Splat<V>(6.0f)) * (1.0f / 6.0f);
        break;
      case ExternEpilogueStep::kBias:  // aten.mm's: ConvolutionWithEpilogue declines them
      case ExternEpilogueStep::kGeluErf:
      case ExternEpilogueStep::kGeluTanh:
        break;
    }
  }
  return v;
}

}  // namespace coil::cpu::internal::conv_direct

#endif  // COIL_RUNTIME_CPU_INTERNAL_CONV_DIRECT_VECTORS_H_

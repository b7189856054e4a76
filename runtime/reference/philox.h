// Philox4x32-10 and the uniform value prims.philox_uniform draws from it (docs/prims.md),
// shared by the reference kernel and the Schedule interpreter's RANDOM expressions.
//
//   double u = PhiloxUniformAt(/*seed=*/42, /*counter=*/offset + i);   // in [0, 1)
#ifndef COIL_RUNTIME_REFERENCE_PHILOX_H_
#define COIL_RUNTIME_REFERENCE_PHILOX_H_

#include <array>
#include <cstdint>

namespace coil {
namespace prims_internal {

// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11; the
// Random123 reference): ten rounds over a 128-bit counter with a 64-bit key. Checked against
// Random123's known-answer vectors in prims_kernels_test.cc.
std::array<uint32_t, 4> Philox4x32_10(std::array<uint32_t, 4> ctr, std::array<uint32_t, 2> key);

}  // namespace prims_internal

// The philox_uniform element for `counter` (offset + row-major position) under `seed`: the
// first word of Philox4x32-10 with key `seed` and counter {counter, 0}, as (u >> 8) * 2^-24.
double PhiloxUniformAt(int64_t seed, int64_t counter);

}  // namespace coil

#endif  // COIL_RUNTIME_REFERENCE_PHILOX_H_

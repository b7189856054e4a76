// The Tensor API's default random generator (torch.manual_seed's role).
//
// Random ops given no seed draw from it: `coil::dropout(x, p, /*train=*/true)` keeps element i
// where Philox4x32-10 with key `seed` and counter `offset + i` is below 1 - p, taking the
// generator's next numel(x) counters. Eagerly the seed and counter become the op's
// attributes. Inside coil::compile the counter enters the graph as a run-time input (a 0-d
// int64 whose value binds a symbol, ir/graph.h SymbolInfo::value_of): every call of a
// compiled function draws a fresh mask without recompiling, the same one eager would draw
// from the same generator state, and its backward draws that mask again instead of saving it.
//
//   coil::manual_seed(7);
//   Tensor y = coil::dropout(x, 0.1, true);   // counters [0, numel); the next draw continues
#ifndef COIL_CAPTURE_RANDOM_H_
#define COIL_CAPTURE_RANDOM_H_

#include <cstdint>

namespace coil {

// Sets the default generator's seed (>= 0) and resets its counter to 0. The seed starts at 0.
void manual_seed(int64_t seed);

// The default generator's seed and next counter.
struct RandomState {
  int64_t seed = 0;
  int64_t offset = 0;
};
RandomState random_state();
// Restores a state random_state() returned (seed and offset >= 0): the next draws repeat.
void set_random_state(const RandomState& state);

}  // namespace coil

#endif  // COIL_CAPTURE_RANDOM_H_

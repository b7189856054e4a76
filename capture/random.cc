// The default random generator (random.h) and how dispatch fills a random op's seed and
// counter from it (capture_internal::DrawRandomAttrs, dispatch.h).
#include "capture/random.h"

#include <mutex>

#include "absl/strings/str_cat.h"

#include "capture/dispatch.h"
#include "capture/error.h"
#include "capture/internal/tensor_impl.h"
#include "capture/internal/trace.h"
#include "capture/tensor.h"
#include "ir/attribute.h"

namespace coil {
namespace {

struct Generator {
  std::mutex mu;
  RandomState state;
};

Generator& Default() {
  static Generator* g = new Generator();
  return *g;
}

}  // namespace

void manual_seed(int64_t seed) {
  if (seed < 0) {
    throw Error(absl::InvalidArgumentError(absl::StrCat("manual_seed: seed must be >= 0, got ",
                                                        seed)));
  }
  Generator& g = Default();
  std::lock_guard<std::mutex> lock(g.mu);
  g.state = RandomState{seed, 0};
}

void set_random_state(const RandomState& state) {
  if (state.seed < 0 || state.offset < 0) {
    throw Error(absl::InvalidArgumentError(absl::StrCat(
        "set_random_state: seed and offset must be >= 0, got ", state.seed, ", ", state.offset)));
  }
  Generator& g = Default();
  std::lock_guard<std::mutex> lock(g.mu);
  g.state = state;
}

RandomState random_state() {
  Generator& g = Default();
  std::lock_guard<std::mutex> lock(g.mu);
  return g.state;
}

namespace capture_internal {

void DrawRandomAttrs(absl::string_view op, const std::vector<Tensor>& inputs, AttrMap& attrs,
                     Trace* trace) {
  if (op != "aten.dropout" || inputs.empty() || inputs[0].impl() == nullptr) return;
  absl::StatusOr<bool> train = GetBool(attrs, "train");
  absl::StatusOr<double> p = GetFloat(attrs, "p");
  absl::StatusOr<int64_t> seed = GetInt(attrs, "seed");
  // Malformed attributes are the meta function's to report; a given seed is the caller's.
  if (!train.ok() || !p.ok() || !seed.ok() || !*train || !(*p > 0 && *p < 1) || *seed >= 0) {
    return;
  }
  int64_t numel = 1;
  for (int64_t d : inputs[0].impl()->shape()) numel *= d;
  RandomState drawn = DrawCounters(numel);
  attrs["seed"] = Attribute(drawn.seed);
  attrs["offset"] =
      trace != nullptr
          ? Attribute(trace->RuntimeInt(drawn.offset, "rng_offset",
                                        inputs[0].impl()->type().NumElements()))
          : Attribute(drawn.offset);
}

RandomState DrawCounters(int64_t n) {
  Generator& g = Default();
  std::lock_guard<std::mutex> lock(g.mu);
  RandomState drawn = g.state;
  g.state.offset += n;
  return drawn;
}

}  // namespace capture_internal
}  // namespace coil

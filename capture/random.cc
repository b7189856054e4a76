// The default random generator (random.h) and how dispatch fills a random op's seed and
// counter from it (capture_internal::DrawRandomAttrs, dispatch.h).
#include "capture/random.h"

#include <algorithm>
#include <mutex>
#include <vector>

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

namespace {

// How many counters a random op draws: dropout's input elements, or attention's weights
// [batch..., L, S] (the batch dims of q, k and v broadcast; the meta function checks that).
// `shape_of(i)` gives input i's shape as int64_t (concrete) or SymExpr (traced) dims.
template <typename Dim, typename ShapeOf>
Dim DrawCount(absl::string_view op, ShapeOf shape_of) {
  Dim n(1);
  if (op == "aten.dropout") {
    for (const Dim& d : shape_of(0)) n = n * d;
    return n;
  }
  const auto q = shape_of(0), k = shape_of(1), v = shape_of(2);
  size_t batch = std::max({q.size(), k.size(), v.size()}) - 2;
  for (size_t b = 0; b < batch; ++b) {  // the b-th batch dim from the right
    Dim dim(1);
    for (const auto* shape : {&q, &k, &v}) {
      if (shape->size() - 2 > b && (*shape)[shape->size() - 3 - b] != Dim(1)) {
        dim = (*shape)[shape->size() - 3 - b];
      }
    }
    n = n * dim;
  }
  return n * q[q.size() - 2] * k[k.size() - 2];
}

}  // namespace

void DrawRandomAttrs(absl::string_view op, const std::vector<Tensor>& inputs, AttrMap& attrs,
                     Trace* trace) {
  const bool attention = op == "aten.scaled_dot_product_attention";
  if (op != "aten.dropout" && !attention) return;
  if (inputs.size() < (attention ? 3u : 1u)) return;
  for (size_t i = 0; i < (attention ? 3u : 1u); ++i) {
    // Missing inputs and ranks the meta function refuses are its to report.
    if (inputs[i].impl() == nullptr || (attention && inputs[i].impl()->shape().size() < 2)) {
      return;
    }
  }
  absl::StatusOr<bool> train = GetBool(attrs, "train");
  absl::StatusOr<double> p = GetFloat(attrs, attention ? "dropout_p" : "p");
  absl::StatusOr<int64_t> seed = GetInt(attrs, "seed");
  // Malformed attributes are the meta function's to report; a given seed is the caller's.
  // dropout with p = 1 draws too (its meta function wants a seed; the mask drops everything);
  // attention with dropout_p = 1 needs none (zero weights).
  if (!train.ok() || !p.ok() || !seed.ok() || !*train || *seed >= 0) return;
  if (!(*p > 0 && (attention ? *p < 1 : *p <= 1))) return;
  const int64_t numel =
      DrawCount<int64_t>(op, [&](size_t i) { return inputs[i].impl()->shape(); });
  RandomState drawn = DrawCounters(numel);
  attrs["seed"] = Attribute(drawn.seed);
  if (trace == nullptr) {
    attrs["offset"] = Attribute(drawn.offset);
    return;
  }
  const SymExpr draw =
      DrawCount<SymExpr>(op, [&](size_t i) { return inputs[i].impl()->type().shape; });
  attrs["offset"] = Attribute(trace->RuntimeInt(drawn.offset, "rng_offset", draw));
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

// EvaluateView and GatherView (extern_view.h).
#include "runtime/cpu/internal/extern_view.h"

#include <algorithm>
#include <atomic>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "ir/dtype.h"
#include "ir/sym_expr.h"

namespace coil::cpu {
namespace {

absl::StatusOr<int64_t> Eval(const proto::SymExpr& p,
                             const absl::flat_hash_map<std::string, int64_t>& bindings) {
  absl::StatusOr<SymExpr> e = SymExpr::FromProto(p);
  if (!e.ok()) return e.status();
  return e->Evaluate(bindings);
}

absl::Status Bad(const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("extern input view: ", what));
}

}  // namespace

absl::StatusOr<EvaluatedView> EvaluateView(
    const proto::ExternView& view, const absl::flat_hash_map<std::string, int64_t>& bindings,
    int64_t numel) {
  EvaluatedView v;
  absl::StatusOr<int64_t> offset = view.has_offset() ? Eval(view.offset(), bindings) : 0;
  if (!offset.ok()) return Bad(std::string(offset.status().message()));
  v.offset = *offset;
  int64_t last = v.offset, count = 1;  // the highest element read; the operand's elements
  for (const proto::ExternView::Dim& d : view.dims()) {
    if (d.sizes_size() != d.strides_size()) return Bad("a dim's sizes and strides differ");
    int64_t n = 1;
    std::vector<ExternFactor> fs;
    for (int f = 0; f < d.sizes_size(); ++f) {
      absl::StatusOr<int64_t> size = Eval(d.sizes(f), bindings);
      absl::StatusOr<int64_t> stride = Eval(d.strides(f), bindings);
      if (!size.ok()) return Bad(std::string(size.status().message()));
      if (!stride.ok()) return Bad(std::string(stride.status().message()));
      if (*size < 0 || *stride < 0 || *size > (int64_t{1} << 40) || *stride > (int64_t{1} << 40)) {
        return Bad(absl::StrCat("size ", *size, ", stride ", *stride));
      }
      // Each factor is at most 2^40, so no product or sum below overflows before its check.
      int64_t step = 0;
      if (__builtin_mul_overflow(n, *size, &n) || n > (int64_t{1} << 40) ||
          __builtin_mul_overflow(std::max<int64_t>(*size - 1, 0), *stride, &step) ||
          __builtin_add_overflow(last, step, &last)) {
        return Bad("too many elements");
      }
      if (*size == 1) continue;
      if (!fs.empty() && fs.back().stride == *size * *stride) {
        fs.back() = {fs.back().size * *size, *stride};
      } else {
        fs.push_back({*size, *stride});
      }
    }
    if (__builtin_mul_overflow(count, n, &count) || count > (int64_t{1} << 40)) {
      return Bad("too many elements");
    }
    v.shape.push_back(n);
    v.factors.push_back(std::move(fs));
  }
  if (count == 0) {  // nothing is read
    v.offset = 0;
    v.factors.clear();
    return v;
  }
  if (v.offset < 0 || last >= numel) {
    return Bad(absl::StrCat("reads elements ", v.offset, " to ", last, " of a buffer of ", numel));
  }
  // Contiguous row-major after all (a reshape): no view.
  int64_t expect = 1;
  bool contiguous = true;
  for (size_t d = v.factors.size(); d-- > 0 && contiguous;) {
    for (size_t f = v.factors[d].size(); f-- > 0;) {
      if (v.factors[d][f].stride != expect) {
        contiguous = false;
        break;
      }
      expect *= v.factors[d][f].size;
    }
  }
  if (contiguous) v.factors.clear();
  return v;
}

namespace {

// Visits the runs of `t`'s innermost factor in row-major order: fn(element offset of the run,
// its length, its stride).
template <typename Fn>
void ForEachRun(const ExternTensor& t, Fn fn) {
  std::vector<ExternFactor> fs;
  for (const std::vector<ExternFactor>& d : t.view) fs.insert(fs.end(), d.begin(), d.end());
  const int64_t n = t.numel();
  if (n == 0) return;
  if (fs.empty()) {
    fn(int64_t{0}, n, int64_t{1});
    return;
  }
  const ExternFactor inner = fs.back();
  fs.pop_back();
  std::vector<int64_t> digit(fs.size(), 0);
  for (int64_t done = 0; done < n; done += inner.size) {
    int64_t pos = 0;
    for (size_t f = 0; f < fs.size(); ++f) pos += digit[f] * fs[f].stride;
    fn(pos, inner.size, inner.stride);
    for (size_t f = fs.size(); f-- > 0;) {
      if (++digit[f] < fs[f].size) break;
      digit[f] = 0;
    }
  }
}

std::atomic<int64_t> view_copies{0};

}  // namespace

int64_t ViewCopiesForTesting() { return view_copies.load(std::memory_order_relaxed); }

void GatherView(const ExternTensor& t, char* dst) {
  view_copies.fetch_add(1, std::memory_order_relaxed);
  const int64_t elem = ElementSize(t.dtype);
  ForEachRun(t, [&](int64_t pos, int64_t len, int64_t stride) {
    const char* src = t.data + pos * elem;
    if (stride == 1) {
      std::memcpy(dst, src, len * elem);
      dst += len * elem;
      return;
    }
    for (int64_t j = 0; j < len; ++j, dst += elem) std::memcpy(dst, src + j * stride * elem, elem);
  });
}

void ScatterView(const char* src, const ExternTensor& t) {
  view_copies.fetch_add(1, std::memory_order_relaxed);
  const int64_t elem = ElementSize(t.dtype);
  ForEachRun(t, [&](int64_t pos, int64_t len, int64_t stride) {
    char* dst = t.data + pos * elem;
    if (stride == 1) {
      std::memcpy(dst, src, len * elem);
      src += len * elem;
      return;
    }
    for (int64_t j = 0; j < len; ++j, src += elem) std::memcpy(dst + j * stride * elem, src, elem);
  });
}

}  // namespace coil::cpu

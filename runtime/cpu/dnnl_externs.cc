// f32 aten.mm / aten.bmm / aten.convolution through oneDNN 2.6 (the library chosen by
// measurement: docs/benchmarks.md). Unsupported dtypes and variants return false, so the
// reference kernel runs them. oneDNN's own primitive cache (1024 entries by default) makes
// re-creating a primitive for shapes seen before cheap; its threads are OpenMP's, set per
// call to ExternArgs::num_threads.
#include <omp.h>

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "runtime/cpu/externs.h"

namespace coil::cpu {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

dnnl::engine& Engine() {
  static dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

bool AllF32(const ExternArgs& a) {
  if (a.output.dtype != proto::FLOAT32) return false;
  for (const ExternTensor& t : a.inputs) {
    if (t.dtype != proto::FLOAT32) return false;
  }
  return true;
}

std::string Shape(const ExternTensor& t) { return absl::StrCat("[", absl::StrJoin(t.shape, ", "), "]"); }

absl::Status ShapeError(absl::string_view op, const ExternArgs& a) {
  std::vector<std::string> ins;
  for (const ExternTensor& t : a.inputs) ins.push_back(Shape(t));
  return absl::InvalidArgumentError(absl::StrCat(op, " of ", absl::StrJoin(ins, ", "),
                                                 " cannot produce ", Shape(a.output)));
}

// Runs `fn` translating oneDNN's exceptions into a Status.
template <typename Fn>
absl::StatusOr<bool> Guarded(absl::string_view op, Fn&& fn) {
  try {
    fn();
  } catch (const dnnl::error& e) {
    return absl::InternalError(absl::StrCat("oneDNN ", op, ": ", e.what()));
  }
  return true;
}

absl::StatusOr<bool> Mm(const ExternArgs& a) {
  if (a.inputs.size() != 2 || !AllF32(a)) return false;
  const ExternTensor &x = a.inputs[0], &y = a.inputs[1], &out = a.output;
  if (x.shape.size() != 2 || y.shape.size() != 2 || out.shape.size() != 2 ||
      x.shape[1] != y.shape[0] || out.shape[0] != x.shape[0] || out.shape[1] != y.shape[1]) {
    return ShapeError("aten.mm", a);
  }
  const int64_t m = x.shape[0], k = x.shape[1], n = y.shape[1];
  if (m == 0 || n == 0) return true;
  if (k == 0) {
    std::memset(out.data, 0, m * n * sizeof(float));
    return true;
  }
  omp_set_num_threads(a.num_threads);
  dnnl_status_t s = dnnl_sgemm('N', 'N', m, n, k, 1.0f, reinterpret_cast<const float*>(x.data), k,
                               reinterpret_cast<const float*>(y.data), n, 0.0f,
                               reinterpret_cast<float*>(out.data), n);
  if (s != dnnl_success) return absl::InternalError(absl::StrCat("dnnl_sgemm failed: ", s));
  return true;
}

absl::StatusOr<bool> Bmm(const ExternArgs& a) {
  if (a.inputs.size() != 2 || !AllF32(a)) return false;
  const ExternTensor &x = a.inputs[0], &y = a.inputs[1], &out = a.output;
  if (x.shape.size() != 3 || y.shape.size() != 3 || out.shape.size() != 3 ||
      x.shape[0] != y.shape[0] || x.shape[2] != y.shape[1] || out.shape[0] != x.shape[0] ||
      out.shape[1] != x.shape[1] || out.shape[2] != y.shape[2]) {
    return ShapeError("aten.bmm", a);
  }
  const int64_t b = x.shape[0], m = x.shape[1], k = x.shape[2], n = y.shape[2];
  if (b == 0 || m == 0 || n == 0) return true;
  if (k == 0) {
    std::memset(out.data, 0, b * m * n * sizeof(float));
    return true;
  }
  omp_set_num_threads(a.num_threads);
  return Guarded("aten.bmm", [&] {
    dnnl::memory::desc xd({b, m, k}, dt::f32, tag::abc), yd({b, k, n}, dt::f32, tag::abc),
        od({b, m, n}, dt::f32, tag::abc);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(xd, yd, od), Engine());
    dnnl::memory xm(xd, Engine(), x.data), ym(yd, Engine(), y.data), om(od, Engine(), out.data);
    dnnl::stream strm(Engine());
    dnnl::matmul(pd).execute(strm, {{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, ym},
                                    {DNNL_ARG_DST, om}});
    strm.wait();
  });
}

// A list attribute with one value per spatial dim (a single value applies to all).
bool Expand(const AttrMap& attrs, const char* name, size_t d, std::vector<int64_t>& out) {
  absl::StatusOr<IntList> v = GetInts(attrs, name);
  if (!v.ok() || (v->size() != 1 && v->size() != d)) return false;
  out = v->size() == 1 ? std::vector<int64_t>(d, (*v)[0]) : *v;
  return true;
}

absl::StatusOr<bool> Convolution(const ExternArgs& a) {
  if (a.inputs.size() < 2 || a.inputs.size() > 3 || !AllF32(a)) return false;
  absl::StatusOr<bool> transposed = GetBool(a.attrs, "transposed");
  absl::StatusOr<int64_t> groups = GetInt(a.attrs, "groups");
  if (!transposed.ok() || *transposed || !groups.ok() || *groups < 1) return false;
  const ExternTensor &x = a.inputs[0], &w = a.inputs[1], &out = a.output;
  const size_t rank = w.shape.size();
  if (rank < 3 || rank > 5 || x.shape.size() != rank || out.shape.size() != rank) return false;
  const size_t d = rank - 2;
  std::vector<int64_t> stride, padding, dilation;
  if (!Expand(a.attrs, "stride", d, stride) || !Expand(a.attrs, "padding", d, padding) ||
      !Expand(a.attrs, "dilation", d, dilation)) {
    return false;
  }
  const int64_t g = *groups, n = x.shape[0], c = x.shape[1], oc = w.shape[0];
  // Degenerate sizes (empty tensors) go to the reference kernel.
  if (x.numel() == 0 || w.numel() == 0 || out.numel() == 0 || oc % g != 0) return false;
  // The output's shape must be the convolution's (as the op's meta function computes it).
  bool ok = c == w.shape[1] * g && out.shape[0] == n && out.shape[1] == oc;
  for (size_t i = 0; ok && i < d; ++i) {
    const int64_t extent = dilation[i] * (w.shape[2 + i] - 1) + 1;
    ok = x.shape[2 + i] + 2 * padding[i] >= extent &&
         out.shape[2 + i] == (x.shape[2 + i] + 2 * padding[i] - extent) / stride[i] + 1;
  }
  if (a.inputs.size() == 3) {
    ok = ok && a.inputs[2].shape.size() == 1 && a.inputs[2].shape[0] == oc;
  }
  if (!ok) return ShapeError("aten.convolution", a);

  omp_set_num_threads(a.num_threads);
  return Guarded("aten.convolution", [&] {
    static const tag kData[] = {tag::ncw, tag::nchw, tag::ncdhw};
    static const tag kWeights[] = {tag::oiw, tag::oihw, tag::oidhw};
    static const tag kGroupWeights[] = {tag::goiw, tag::goihw, tag::goidhw};
    dnnl::memory::dims wdims;
    if (g > 1) wdims = {g, oc / g};
    else wdims = {oc};
    wdims.insert(wdims.end(), w.shape.begin() + 1, w.shape.end());
    const dnnl::memory::desc x_plain(x.shape, dt::f32, kData[d - 1]),
        w_plain(wdims, dt::f32, g > 1 ? kGroupWeights[d - 1] : kWeights[d - 1]),
        o_plain(out.shape, dt::f32, kData[d - 1]);
    dnnl::memory::dims strides(stride.begin(), stride.end()), pad(padding.begin(), padding.end()),
        dil;
    for (int64_t v : dilation) dil.push_back(v - 1);  // oneDNN counts the gaps
    // `any` lets oneDNN pick its blocked layouts (measured faster even with the reorders).
    const dnnl::memory::desc x_any(x.shape, dt::f32, tag::any), w_any(wdims, dt::f32, tag::any),
        o_any(out.shape, dt::f32, tag::any);
    const bool bias = a.inputs.size() == 3;
    dnnl::convolution_forward::desc desc =
        bias ? dnnl::convolution_forward::desc(
                   dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                   x_any, w_any, dnnl::memory::desc({oc}, dt::f32, tag::x), o_any, strides,
                   dil, pad, pad)
             : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                               dnnl::algorithm::convolution_direct, x_any, w_any,
                                               o_any, strides, dil, pad, pad);
    dnnl::convolution_forward::primitive_desc pd(desc, Engine());
    dnnl::stream strm(Engine());
    dnnl::memory xm(x_plain, Engine(), x.data), wm(w_plain, Engine(), w.data),
        om(o_plain, Engine(), out.data);
    // Reorders into (and out of) the primitive's layouts where they differ from plain.
    auto to = [&](dnnl::memory& plain, const dnnl::memory::desc& want) {
      if (want == plain.get_desc()) return plain;
      dnnl::memory m(want, Engine());
      dnnl::reorder(plain, m).execute(strm, plain, m);
      return m;
    };
    dnnl::memory xs = to(xm, pd.src_desc()), ws = to(wm, pd.weights_desc());
    dnnl::memory os = pd.dst_desc() == o_plain ? om : dnnl::memory(pd.dst_desc(), Engine());
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, xs}, {DNNL_ARG_WEIGHTS, ws}, {DNNL_ARG_DST, os}};
    if (bias) {
      args[DNNL_ARG_BIAS] = dnnl::memory({{oc}, dt::f32, tag::x}, Engine(), a.inputs[2].data);
    }
    dnnl::convolution_forward(pd).execute(strm, args);
    if (os != om) dnnl::reorder(os, om).execute(strm, os, om);
    strm.wait();
  });
}

}  // namespace

void RegisterDnnlExterns(ExternRegistry& registry) {
  registry.Register("aten.mm", Mm);
  registry.Register("aten.bmm", Bmm);
  registry.Register("aten.convolution", Convolution);
}

}  // namespace coil::cpu

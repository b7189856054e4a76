// Measures the candidate libraries for the CPU runtime's f32 externs (aten.mm / aten.bmm /
// aten.convolution): oneDNN 2.6 (libdnnl-dev) against OpenBLAS (libopenblas-dev), on shapes
// from the real models, with 1 and 2 threads. The numbers and the choice are in
// docs/benchmarks.md ("CPU extern library choice").
//
//   bazel run --jobs=2 //tools/bench:extern_libraries   (optimized via its copts)
//
// Each line: the case, the variant, the median time of one call (ms) and GFLOP/s. oneDNN
// primitives are created once outside the timed loop (the runtime caches them per kernel);
// weights are reordered once (they are constants in the models). "coil RunExtern" is the
// runtime's own path (runtime/cpu/externs.h): primitive creation (served by oneDNN's primitive
// cache) and the weight reorder on every call.
#include <openblas-pthread/cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"
#include "runtime/cpu/externs.h"

// libgomp's (oneDNN's OpenMP runtime), declared here: <omp.h> is the compiler's header, and
// clang's belongs to another runtime (libomp).
extern "C" void omp_set_num_threads(int threads);

namespace {

using Clock = std::chrono::steady_clock;

// Median milliseconds of `fn` over enough repetitions to take ~0.3 s (at least 5).
double MedianMs(const std::function<void()>& fn) {
  fn();  // warm-up (JIT, caches)
  std::vector<double> times;
  const auto start = Clock::now();
  while (times.size() < 5 ||
         (std::chrono::duration<double>(Clock::now() - start).count() < 0.3 && times.size() < 1000)) {
    const auto t0 = Clock::now();
    fn();
    times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

std::vector<float> Random(int64_t n) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

void Report(const std::string& what, const char* variant, int threads, double ms, double flops) {
  std::printf("%-34s %-26s threads=%d %9.3f ms %8.1f GFLOP/s\n", what.c_str(), variant, threads,
              ms, flops / ms / 1e6);
}

void BenchMm(dnnl::engine& eng, dnnl::stream& strm, int threads, int64_t m, int64_t k,
             int64_t n) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  std::vector<float> a = Random(m * k), b = Random(k * n), c(m * n);
  const std::string what = "mm [" + std::to_string(m) + "x" + std::to_string(k) + "] x [" +
                           std::to_string(k) + "x" + std::to_string(n) + "]";
  const double flops = 2.0 * m * n * k;
  Report(what, "openblas cblas_sgemm", threads, MedianMs([&] {
           cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), k,
                       b.data(), n, 0.0f, c.data(), n);
         }),
         flops);
  dnnl::memory::desc ad({m, k}, dt::f32, tag::ab), bd({k, n}, dt::f32, tag::ab),
      cd({m, n}, dt::f32, tag::ab);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(ad, bd, cd), eng);
  dnnl::matmul prim(pd);
  dnnl::memory am(ad, eng, a.data()), bm(bd, eng, b.data()), cm(cd, eng, c.data());
  Report(what, "onednn matmul", threads, MedianMs([&] {
           prim.execute(strm, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
           strm.wait();
         }),
         flops);
  Report(what, "onednn dnnl_sgemm", threads, MedianMs([&] {
           dnnl_sgemm('N', 'N', m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);
         }),
         flops);
  std::vector<coil::cpu::ExternTensor> args = {
      {coil::proto::FLOAT32, {m, k}, reinterpret_cast<char*>(a.data())},
      {coil::proto::FLOAT32, {k, n}, reinterpret_cast<char*>(b.data())}};
  const coil::cpu::ExternTensor out{coil::proto::FLOAT32, {m, n}, reinterpret_cast<char*>(c.data())};
  const coil::AttrMap attrs;
  Report(what, "coil RunExtern (dnnl)", threads, MedianMs([&] {
           if (!coil::cpu::RunExtern("aten.mm", {args, out, attrs, threads}).ok()) std::abort();
         }),
         flops);
}

// im2col of one image [C, H, W] for a KxK kernel, stride 1, padding p: [C*K*K, OH*OW].
void Im2Col(const float* x, int64_t c, int64_t h, int64_t w, int64_t kk, int64_t p, float* col) {
  const int64_t oh = h + 2 * p - kk + 1, ow = w + 2 * p - kk + 1;
  for (int64_t ci = 0; ci < c; ++ci) {
    for (int64_t ky = 0; ky < kk; ++ky) {
      for (int64_t kx = 0; kx < kk; ++kx) {
        float* row = col + ((ci * kk + ky) * kk + kx) * oh * ow;
        for (int64_t y = 0; y < oh; ++y) {
          const int64_t iy = y + ky - p;
          for (int64_t xo = 0; xo < ow; ++xo) {
            const int64_t ix = xo + kx - p;
            row[y * ow + xo] = (iy >= 0 && iy < h && ix >= 0 && ix < w)
                                   ? x[(ci * h + iy) * w + ix] : 0.0f;
          }
        }
      }
    }
  }
}

void BenchConv(dnnl::engine& eng, dnnl::stream& strm, int threads, int64_t nb, int64_t c,
               int64_t hw) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  const int64_t kk = 3, p = 1, oc = c;
  std::vector<float> x = Random(nb * c * hw * hw), w = Random(oc * c * kk * kk),
                     y(nb * oc * hw * hw);
  const std::string what = "conv3x3 N=" + std::to_string(nb) + " C=" + std::to_string(c) + " " +
                           std::to_string(hw) + "x" + std::to_string(hw);
  const double flops = 2.0 * nb * oc * hw * hw * c * kk * kk;
  // OpenBLAS: im2col per image, then [OC, C*9] x [C*9, H*W].
  std::vector<float> col(c * kk * kk * hw * hw);
  Report(what, "openblas im2col+sgemm", threads, MedianMs([&] {
           for (int64_t i = 0; i < nb; ++i) {
             Im2Col(x.data() + i * c * hw * hw, c, hw, hw, kk, p, col.data());
             cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, oc, hw * hw, c * kk * kk,
                         1.0f, w.data(), c * kk * kk, col.data(), hw * hw, 0.0f,
                         y.data() + i * oc * hw * hw, hw * hw);
           }
         }),
         flops);
  dnnl::memory::dims src{nb, c, hw, hw}, wei{oc, c, kk, kk}, dst{nb, oc, hw, hw};
  for (bool blocked : {false, true}) {
    // Plain: NCHW activations as the runtime stores them. Blocked: oneDNN's preferred layout
    // with a reorder of the input and output per call (what NCHW buffers would cost).
    dnnl::memory::desc sd(src, dt::f32, blocked ? tag::any : tag::nchw),
        wd(wei, dt::f32, tag::any), dd(dst, dt::f32, blocked ? tag::any : tag::nchw);
    dnnl::convolution_forward::primitive_desc pd(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                        dnnl::algorithm::convolution_direct, sd, wd, dd,
                                        {1, 1}, {p, p}, {p, p}),
        eng);
    dnnl::memory xm({src, dt::f32, tag::nchw}, eng, x.data());
    dnnl::memory ym({dst, dt::f32, tag::nchw}, eng, y.data());
    dnnl::memory wm_plain({wei, dt::f32, tag::oihw}, eng, w.data());
    dnnl::memory wm(pd.weights_desc(), eng);
    dnnl::reorder(wm_plain, wm).execute(strm, wm_plain, wm);
    dnnl::memory xs = blocked ? dnnl::memory(pd.src_desc(), eng) : xm;
    dnnl::memory ys = blocked ? dnnl::memory(pd.dst_desc(), eng) : ym;
    dnnl::convolution_forward conv(pd);
    dnnl::reorder rin, rout;
    if (blocked) {
      rin = dnnl::reorder(xm, xs);
      rout = dnnl::reorder(ys, ym);
    }
    Report(what, blocked ? "onednn conv blocked+reorder" : "onednn conv nchw", threads,
           MedianMs([&] {
             if (blocked) rin.execute(strm, xm, xs);
             conv.execute(strm, {{DNNL_ARG_SRC, xs}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, ys}});
             if (blocked) rout.execute(strm, ys, ym);
             strm.wait();
           }),
           flops);
  }
  std::vector<coil::cpu::ExternTensor> args = {
      {coil::proto::FLOAT32, {nb, c, hw, hw}, reinterpret_cast<char*>(x.data())},
      {coil::proto::FLOAT32, {oc, c, kk, kk}, reinterpret_cast<char*>(w.data())}};
  const coil::cpu::ExternTensor out{coil::proto::FLOAT32, {nb, oc, hw, hw},
                                    reinterpret_cast<char*>(y.data())};
  const coil::AttrMap attrs = {{"stride", coil::IntList{1}},   {"padding", coil::IntList{p}},
                               {"dilation", coil::IntList{1}}, {"transposed", false},
                               {"groups", int64_t{1}},         {"output_padding", coil::IntList{0}}};
  Report(what, "coil RunExtern (dnnl)", threads, MedianMs([&] {
           if (!coil::cpu::RunExtern("aten.convolution", {args, out, attrs, threads}).ok()) {
             std::abort();
           }
         }),
         flops);
}

}  // namespace

int main() {
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  std::printf("oneDNN %d.%d.%d, OpenBLAS %s\n", dnnl_version()->major, dnnl_version()->minor,
              dnnl_version()->patch, openblas_get_config());
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    openblas_set_num_threads(threads);
    for (int64_t m : {1, 8}) BenchMm(eng, strm, threads, m, 512, 1000);
    BenchMm(eng, strm, threads, 64, 256, 256);
    BenchMm(eng, strm, threads, 256, 1024, 256);
    for (int64_t nb : {1, 8}) BenchConv(eng, strm, threads, nb, 64, 56);
  }
  return 0;
}

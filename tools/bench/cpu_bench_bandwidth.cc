// BenchBandwidth: the copy baseline and the two memory-bound graphs (see cpu_bench_bandwidth.h).
#include "tools/bench/cpu_bench_bandwidth.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ir/check.h"
#include "ir/parser.h"
#include "runtime/host_tensor.h"
#include "tools/bench/cpu_bench_compare.h"
#include "tools/bench/cpu_bench_compile.h"

namespace coil::bench {
namespace {

constexpr int64_t kCopyBlock = 16384;  // floats: 64 KiB

HostTensor RandomTensor(std::vector<int64_t> shape, float lo, float hi, uint64_t seed) {
  HostTensor t = HostTensor::Zeros(proto::FLOAT32, std::move(shape));
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  float* p = reinterpret_cast<float*>(t.RawData());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(gen);
  return t;
}

const float* Floats(const HostTensor& t) { return reinterpret_cast<const float*>(t.RawData()); }

double GigabytesPerSecond(int64_t bytes, double ms) { return bytes / (ms * 1e-3) / 1e9; }

std::string ShapeText(int64_t rows, int64_t cols) {
  return absl::StrCat("f32[", rows, ", ", cols, "]");
}

// y = gelu(x * a + b) * c in float64, a/b/c broadcast along rows.
std::vector<double> PointwiseReference(const std::vector<HostTensor>& in, int64_t rows,
                                       int64_t cols) {
  const float *x = Floats(in[0]), *a = Floats(in[1]), *b = Floats(in[2]), *c = Floats(in[3]);
  std::vector<double> y(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < cols; ++j) {
      const double z = static_cast<double>(x[r * cols + j]) * a[j] + b[j];
      y[r * cols + j] = 0.5 * z * (1 + std::erf(z / std::sqrt(2.0))) * c[j];
    }
  }
  return y;
}

std::vector<double> SoftmaxReference(const std::vector<HostTensor>& in, int64_t rows,
                                     int64_t cols) {
  const float* x = Floats(in[0]);
  std::vector<double> y(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    const double m = *std::max_element(row, row + cols);
    double sum = 0;
    for (int64_t j = 0; j < cols; ++j) sum += y[r * cols + j] = std::exp(row[j] - m);
    for (int64_t j = 0; j < cols; ++j) y[r * cols + j] /= sum;
  }
  return y;
}

using Reference = std::function<std::vector<double>(const std::vector<HostTensor>&)>;

// Compiles `text`, checks one run against `reference`, then times runs.
BandwidthRow BenchGraph(const std::string& name, const std::string& text,
                        const std::vector<HostTensor>& inputs, const Reference& reference,
                        int64_t bytes, const BandwidthOptions& options) {
  BandwidthRow row;
  row.set_name(name);
  row.set_shape(ShapeText(options.rows, options.cols));
  row.set_bytes(bytes);
  absl::StatusOr<Graph> graph = ParseGraph(text);
  COIL_CHECK(graph.ok()) << graph.status();  // the text is generated here
  absl::StatusOr<CompiledModel> compiled =
      CompileGraph(*std::move(graph), /*cache=*/nullptr, options.threads);
  if (!compiled.ok()) {
    row.set_error(absl::StrCat("compile: ", compiled.status().message()));
    return row;
  }
  row.set_kernels(compiled->kernels);
  CpuProgram& program = *compiled->program;
  absl::StatusOr<std::vector<HostTensor>> got = program.Run(inputs);
  if (!got.ok()) {
    row.set_error(absl::StrCat("run: ", got.status().message()));
    return row;
  }
  const double err = MaxRelativeError((*got)[0].ToDoubles(), reference(inputs));
  row.set_max_relative_error(err);
  if (!(err <= options.tolerance)) {
    row.set_error(
        absl::StrFormat("output differs from the float64 evaluation: max relative "
                        "error %.3g > %.3g",
                        err, options.tolerance));
    return row;
  }
  got = std::vector<HostTensor>();  // free the checked output before timing
  absl::StatusOr<Timing> t =
      TimeRuns(options.timing, [&]() { return program.Run(inputs).status(); });
  if (!t.ok()) {
    row.set_error(absl::StrCat("run: ", t.status().message()));
    return row;
  }
  row.set_matches(true);
  row.set_median_ms(t->median_ms);
  row.set_gb_per_s(GigabytesPerSecond(bytes, t->median_ms));
  return row;
}

BandwidthRow BenchCopy(const BandwidthOptions& options) {
  const int64_t n = options.rows * options.cols;
  BandwidthRow row;
  row.set_name("copy");
  row.set_shape(ShapeText(options.rows, options.cols));
  row.set_bytes(2 * 4 * n);
  cpu::ThreadPool pool(options.threads);
  HostTensor src = RandomTensor({n}, -1, 1, 7);
  std::vector<float> dst(n);  // zeroed: its pages are mapped before timing
  absl::StatusOr<Timing> t = TimeRuns(options.timing, [&]() {
    ParallelCopy(Floats(src), dst.data(), n, pool);
    return absl::OkStatus();
  });
  COIL_CHECK(t.ok());
  const bool same = std::memcmp(dst.data(), Floats(src), n * 4) == 0;
  row.set_matches(same);
  if (!same) row.set_error("the copy differs from its source");
  row.set_median_ms(t->median_ms);
  row.set_gb_per_s(GigabytesPerSecond(row.bytes(), t->median_ms));
  return row;
}

}  // namespace

void ParallelCopy(const float* src, float* dst, int64_t n, cpu::ThreadPool& pool) {
  const int64_t blocks = (n + kCopyBlock - 1) / kCopyBlock;
  pool.ParallelFor(blocks, 1, [&](int64_t begin, int64_t end) {
    const int64_t lo = begin * kCopyBlock, hi = std::min(n, end * kCopyBlock);
    std::memcpy(dst + lo, src + lo, (hi - lo) * sizeof(float));
  });
}

std::string PointwiseChainGraph(int64_t rows, int64_t cols) {
  const std::string t = ShapeText(rows, cols);
  return absl::StrFormat(
      "graph @pointwise_chain(%%0 \"x\": %s, %%1 \"a\": f32[%d], %%2 \"b\": f32[%d], "
      "%%3 \"c\": f32[%d]) {\n"
      "  %%4: %s = aten.mul(%%0, %%1)\n"
      "  %%5: %s = aten.add(%%4, %%2) {alpha = 1}\n"
      "  %%6: %s = aten.gelu(%%5) {approximate = \"none\"}\n"
      "  %%7: %s = aten.mul(%%6, %%3)\n"
      "  return %%7\n"
      "}\n",
      t, cols, cols, cols, t, t, t, t);
}

std::string SoftmaxGraph(int64_t rows, int64_t cols) {
  const std::string t = ShapeText(rows, cols);
  return absl::StrFormat(
      "graph @softmax(%%0 \"x\": %s) {\n"
      "  %%1: %s = aten.softmax(%%0) {dim = -1, dtype = none}\n"
      "  return %%1\n"
      "}\n",
      t, t);
}

std::vector<BandwidthRow> BenchBandwidth(const BandwidthOptions& options) {
  COIL_CHECK(options.rows > 0 && options.cols > 0);
  const int64_t rows = options.rows, cols = options.cols, n = rows * cols;
  std::vector<BandwidthRow> out;
  out.push_back(BenchCopy(options));

  std::vector<HostTensor> chain = {
      RandomTensor({rows, cols}, -4, 4, 1), RandomTensor({cols}, 0.5, 1.5, 2),
      RandomTensor({cols}, -0.5, 0.5, 3), RandomTensor({cols}, 0.5, 1.5, 4)};
  out.push_back(BenchGraph(
      "pointwise_chain", PointwiseChainGraph(rows, cols), chain,
      [&](const std::vector<HostTensor>& in) { return PointwiseReference(in, rows, cols); },
      2 * 4 * n + 3 * 4 * cols, options));
  chain.clear();

  std::vector<HostTensor> logits = {RandomTensor({rows, cols}, -8, 8, 5)};
  out.push_back(BenchGraph(
      "softmax", SoftmaxGraph(rows, cols), logits,
      [&](const std::vector<HostTensor>& in) { return SoftmaxReference(in, rows, cols); },
      2 * 4 * n, options));

  const double copy = out[0].gb_per_s();
  for (BandwidthRow& r : out) {
    if (r.matches() && copy > 0) r.set_fraction_of_copy(r.gb_per_s() / copy);
  }
  return out;
}

}  // namespace coil::bench

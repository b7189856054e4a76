// Symbols bound by an input's value (ir/graph.h SymbolInfo::value_of: a dropout's Philox
// counter offset as a run-time input) through the whole driver: one compile serves every
// value, and each backend's draws equal the float64 reference interpreter's at that value,
// which in turn equal a graph with the value written in as a constant. The draws are exact
// (Philox on integers); x * (1 / (1 - p)) may differ from the reference in the last bit.
// The attention graph's dropout (of its softmax weights) is decomposed by every backend, also
// the CPU backend, which otherwise keeps attention whole: its mask is the reference kernel's.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/host_tensor.h"
#include "runtime/interpreter.h"
#include "runtime/testing/test_kit.h"
#include "tools/driver/cpu_backend.h"
#include "tools/driver/driver.h"
#include "tools/driver/schedule_backend.h"

namespace coil::driver {
namespace {

// OFFSET is the run-time symbol, or a constant in the oracle's copy.
constexpr char kGraph[] = R"(graph @rng(%0 "x": f32[batch, 7], %1 "rng_offset0": i64[]) {
  symbol batch min 1 max 0 hint 4
  symbol rng_offset0 min 0 max 0 hint 0 value_of "rng_offset0"
  %2: f32[batch, 7] = prims.philox_uniform() {dtype = f32, offset = sym(OFFSET + 3), seed = 77, shape = syms[batch, 7]}
  %3: f32[batch, 7] = aten.dropout(%0) {offset = sym(OFFSET), p = 0.25, seed = 5, train = true}
  %4: f32[batch, 7] = aten.add(%2, %3) {alpha = 1}
  return %4
})";

// Attention with dropout of its weights [batch, 2, 5, 6] (v broadcast over the batch).
constexpr char kAttention[] = R"(graph @attention(%0 "q": f32[batch, 2, 5, 4], %1 "k": f32[batch, 2, 6, 4], %2 "v": f32[1, 2, 6, 3], %3 "rng_offset0": i64[]) {
  symbol batch min 1 max 0 hint 4
  symbol rng_offset0 min 0 max 0 hint 0 value_of "rng_offset0"
  %4: f32[batch, 2, 5, 3] = aten.scaled_dot_product_attention(%0, %1, %2) {dropout_p = 0.3, is_causal = true, offset = sym(OFFSET), scale = 0.0, seed = 11, train = true}
  return %4
})";

constexpr char kAttentionOp[] = "aten.scaled_dot_product_attention";

Graph Parse(const std::string& text) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status() << "\n" << text;
  return *std::move(g);
}

std::string WithOffset(const std::string& offset, const char* graph = kGraph) {
  return absl::StrReplaceAll(graph, {{"OFFSET", offset}});
}

HostTensor Offset(int64_t v) {
  HostTensor t = HostTensor::Zeros(proto::INT64, {});
  t.StoreInt(0, v);
  return t;
}

// `graph`'s last input is the offset; `tolerance` for the backend against the reference.
void ExpectBackendMatches(std::shared_ptr<Backend> backend, const std::string& name,
                          const char* graph = kGraph, double tolerance = 1e-6) {
  SCOPED_TRACE(name);
  DriverOptions o;
  o.backend = std::move(backend);
  o.cache = nullptr;
  absl::StatusOr<CompileResult> r = CompileGraph(Parse(WithOffset("rng_offset0", graph)), o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_NE(r->executable, nullptr) << r->load_error;
  std::vector<double> previous;
  for (int64_t offset : {int64_t{0}, int64_t{5}, int64_t{1} << 50, int64_t{5}}) {
    for (int64_t batch : {3, 11}) {
      SCOPED_TRACE(absl::StrCat("offset ", offset, " batch ", batch));
      std::vector<HostTensor> in =
          test_kit::RandomInputs(Parse(WithOffset("0", graph)), {{"batch", batch}}, 7);
      in.back() = Offset(offset);
      std::vector<HostTensor> oracle_in = in;
      oracle_in.back() = Offset(0);
      // The oracle: the same graph with the offset written in, reference kernels (each
      // computing in double, rounded to f32).
      absl::StatusOr<std::vector<HostTensor>> want =
          Interpret(Parse(WithOffset(absl::StrCat(offset), graph)), oracle_in);
      ASSERT_TRUE(want.ok()) << want.status();
      // The reference interpreter binds the symbol from the input too.
      absl::StatusOr<std::vector<HostTensor>> bound =
          Interpret(Parse(WithOffset("rng_offset0", graph)), in);
      ASSERT_TRUE(bound.ok()) << bound.status();
      test_kit::ExpectClose((*want)[0], (*bound)[0], {.abs = 0, .rel = 0}, "interpreter");
      absl::StatusOr<std::vector<HostTensor>> got = r->executable->Run(in);
      ASSERT_TRUE(got.ok()) << got.status();
      test_kit::ExpectClose((*want)[0], (*got)[0], {.abs = tolerance, .rel = tolerance}, name);
      if (batch == 3) {
        std::vector<double> now = (*got)[0].ToDoubles();
        if (!previous.empty() && offset != 5) {
          EXPECT_NE(previous, now) << "the offset changed nothing";
        }
        previous = now;
      }
    }
  }
}

TEST(ValueSymbolsTest, OneCompileDrawsAtEveryOffset) {
  ExpectBackendMatches(ScheduleInterpreterBackend(), "schedule interpreter");
  ExpectBackendMatches(CpuBackend({.runtime = {.num_threads = 2}}), "cpu");
}

TEST(ValueSymbolsTest, AttentionDropoutDrawsTheReferenceMask) {
  ExpectBackendMatches(ScheduleInterpreterBackend(), "schedule interpreter", kAttention, 1e-5);
  std::shared_ptr<Backend> cpu =
      CpuBackend({.runtime = {.num_threads = 2}, .fused_attention = true});
  ExpectBackendMatches(cpu, "cpu", kAttention, 1e-5);
  // The fused attention extern has no dropout: the CPU backend decomposes this one.
  DriverOptions o;
  o.backend = cpu;
  o.cache = nullptr;
  o.keep_intermediates = true;
  absl::StatusOr<CompileResult> r = CompileGraph(Parse(WithOffset("rng_offset0", kAttention)), o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->schedule.has_value());
  for (const proto::Kernel& k : r->schedule->kernels()) EXPECT_NE(k.extern_op(), kAttentionOp);
}

TEST(ValueSymbolsTest, ANegativeOffsetIsRefused) {
  DriverOptions o;
  o.backend = CpuBackend({.runtime = {.num_threads = 1}});
  o.cache = nullptr;
  absl::StatusOr<CompileResult> r = CompileGraph(Parse(WithOffset("rng_offset0")), o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_NE(r->executable, nullptr) << r->load_error;
  HostTensor x = HostTensor::Zeros(proto::FLOAT32, {2, 7});
  absl::StatusOr<std::vector<HostTensor>> got = r->executable->Run({x, Offset(-1)});
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("symbol rng_offset0 = -1 is outside its range"),
            std::string::npos)
      << got.status();
  // A non-scalar where the offset goes.
  got = r->executable->Run({x, HostTensor::Zeros(proto::INT64, {1})});
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("rank"), std::string::npos) << got.status();
}

}  // namespace
}  // namespace coil::driver

// Writes the seed corpus for schedule_fuzzer: real schedules, i.e. aten graphs taken through the
// compile driver's prims and inductor stages (with and without fusion; mm and convolution
// epilogues when fused), each serialized (.pb) plus a truncated copy.
//   bazel run //runtime/fuzz:make_corpus -- $PWD/runtime/fuzz/corpus
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/io/write_file.h"
#include "ir/graph.h"
#include "ir/parser.h"
#include "ir/proto/schedule.pb.h"
#include "tools/driver/driver.h"
#include "tools/driver/schedule_backend.h"

namespace {

const std::pair<const char*, const char*> kGraphs[] = {
    {"mlp", R"(
graph @mlp(%0 "x": f32[batch, 6], %1 "w": f32[4, 6], %2 "b": f32[4]) {
  symbol batch min 2 max 0 hint 4
  %3: f32[batch, 4] = aten.linear(%0, %1, %2)
  %4: f32[batch, 4] = aten.relu(%3)
  %5: i64[batch] = aten.argmax(%4) {dim = [1], keepdim = false}
  %6: f32[4] = aten.mean(%4) {dim = [0], keepdim = false, dtype = none}
  %7: f32[batch, 4] = aten.cumsum(%3) {dim = 1, dtype = none}
  return %5, %6, %7
}
)"},
    {"conv", R"(
graph @conv(%0 "x": f32[batch, 2, 5, 5], %1 "w": f32[3, 2, 3, 3], %2 "i": i64[batch, 3, 2]) {
  symbol batch min 2 max 0 hint 4
  %3: f32[batch, 3, 5, 5] = aten.convolution(%0, %1) {dilation = [1], groups = 1, output_padding = [0], padding = [1], stride = [1], transposed = false}
  %4: f32[batch, 3, 5, 5] = aten.sigmoid(%3)
  %5: f32[batch, 3, 5] = aten.amax(%4) {dim = [3], keepdim = false}
  %6: f32[batch, 5, 3] = aten.permute(%5) {dims = [0, 2, 1]}
  %7: f32[batch, 3, 2] = aten.gather(%5, %2) {dim = 2, sparse_grad = false}
  return %6, %7
}
)"},
    {"inplace", R"(
graph @inplace(%0 "x": f32[batch, 5], %1 "y": f32[batch, 5]) {
  symbol batch min 2 max 0 hint 8
  %2: f32[batch, 5] = aten.exp(%0)
  %3: f32[batch, 5] = aten.add_(%0, %1) {alpha = 1}
  %4: f32[batch, 5] = aten.mul(%2, %0)
  %5: f32[batch] = aten.sum(%0) {dim = [1], keepdim = false, dtype = none}
  return %4, %5
}
)"},
    {"block", R"(
graph @block(%0 "x": f32[batch, 8], %1 "w": f32[8], %2 "b": f32[8], %3 "r": f32[batch, 8]) {
  symbol batch min 2 max 0 hint 4
  %4: f32[batch, 8] = aten.add(%0, %3) {alpha = 1}
  %5: f32[batch, 8] = aten.layer_norm(%4, %1, %2) {normalized_shape = [8], eps = 1e-05}
  %6: f32[batch, 8] = aten.gelu(%5) {approximate = "none"}
  %7: f32[batch, 8] = aten.softmax(%6) {dim = 1, dtype = none}
  return %7, %4
}
)"},
    {"attention", R"(
graph @attention(%0 "q": f32[batch, 2, seq, 4], %1 "k": f32[batch, 2, seq, 4], %2 "v": f32[batch, 2, seq, 4]) {
  symbol batch min 2 max 0 hint 2
  symbol seq min 2 max 0 hint 4
  %3: f32[batch, 2, seq, 4] = aten.scaled_dot_product_attention(%0, %1, %2) {dropout_p = 0.0, is_causal = true, offset = 0, scale = 0.0, seed = -1, train = true}
  return %3
}
)"},
    {"layer_norm_bf16", R"(
graph @layer_norm(%0 "x": bf16[batch, 3, 8], %1 "w": bf16[8], %2 "b": bf16[8]) {
  symbol batch min 2 max 0 hint 2
  %3: bf16[batch, 3, 8] = aten.layer_norm(%0, %1, %2) {eps = 1e-05, normalized_shape = syms[8]}
  return %3
}
)"},
};

void Write(const std::string& path, const std::string& data) {
  // Every write checked (ir/io/write_file.h): a corpus with a truncated seed is worse than none.
  if (absl::Status s = coil::WriteFileAtomically(path, data); !s.ok()) {
    std::fprintf(stderr, "make_corpus: %s\n", std::string(s.message()).c_str());
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace coil;
  if (argc != 2) {
    std::cerr << "usage: make_corpus OUT_DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  int failures = 0;
  for (const auto& [name, text] : kGraphs) {
    for (bool fusion : {true, false}) {
      absl::StatusOr<Graph> g = ParseGraph(text);
      if (!g.ok()) {
        std::cerr << name << ": " << g.status() << "\n";
        ++failures;
        break;
      }
      // prims and inductor through the compile driver, stopping at the Schedule.
      driver::DriverOptions options;
      // The Schedule interpreter (the corpus is for it) with mm and convolution epilogues.
      options.backend = driver::ScheduleInterpreterBackend({"aten.mm", "aten.convolution"});
      options.stop_after = driver::Stage::kInductor;
      options.cache = nullptr;
      options.schedule.fusion = fusion;
      absl::StatusOr<driver::CompileResult> r = driver::CompileGraph(*std::move(g), options);
      if (!r.ok()) {
        std::cerr << name << ": " << r.status() << "\n";
        ++failures;
        continue;
      }
      const proto::Schedule& s = *r->schedule;
      const std::string base = dir + "/" + name + (fusion ? "" : "_unfused");
      const std::string bytes = s.SerializeAsString();
      Write(base + ".pb", bytes);
      Write(base + "_truncated.pb", bytes.substr(0, bytes.size() * 2 / 3));
      std::cerr << base << ".pb: " << s.kernels_size() << " kernels, " << bytes.size()
                << " bytes\n";
    }
  }
  return failures == 0 ? 0 : 1;
}

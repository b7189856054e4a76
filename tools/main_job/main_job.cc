// The main job: build a real network as a coil graph, take it through every stage that
// exists, check it, report, and write the artifacts the inspector opens.
//
// usage: main_job [--out DIR]     (default out/)
//
// Today's stages: build (GraphBuilder) -> verify -> text IR round trip -> structural hash ->
// reference interpreter at two batch sizes (one symbolic graph) -> float64 oracle check.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "ir/graph_hash.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/proto/report.pb.h"
#include "ir/verifier.h"
#include "runtime/interpreter.h"
#include "tools/coil/graph_io.h"
#include "tools/main_job/decoder_block.h"

namespace coil::main_job {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int Fail(const std::string& what, const absl::Status& s) {
  std::fprintf(stderr, "main job FAILED at %s: %s\n", what.c_str(), std::string(s.message()).c_str());
  return 1;
}

HostTensor RandomInput(std::vector<int64_t> shape, uint64_t seed) {
  HostTensor t = HostTensor::Zeros(proto::FLOAT32, std::move(shape));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n(0.0, 1.0);
  for (int64_t i = 0; i < t.numel(); ++i) t.StoreDouble(i, n(rng));
  return t;
}

}  // namespace

int Main(int argc, char** argv) {
  std::string out_dir = "out";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) {
      out_dir = argv[++i];
    } else {
      std::fprintf(stderr, "usage: main_job [--out DIR]\n");
      return 2;
    }
  }
  std::filesystem::create_directories(out_dir);
  proto::CompileReport report;
  report.set_model("decoder_block (GPT-style: causal attention, layer norm, GELU MLP, softmax head)");
  report.set_coil_version("0.1.0");
  auto stage = [&](const std::string& name, double seconds) {
    proto::StageTiming* t = report.add_timings();
    t->set_stage(name);
    t->set_seconds(seconds);
    std::printf("  %-28s %8.3f ms\n", name.c_str(), seconds * 1e3);
  };
  std::printf("coil main job: decoder block through the stages that exist\n");

  DecoderConfig config;
  auto t0 = Clock::now();
  absl::StatusOr<Graph> graph = BuildDecoderBlock(config);
  if (!graph.ok()) return Fail("build", graph.status());
  stage("build graph", Seconds(t0));

  t0 = Clock::now();
  if (absl::Status s = Verify(*graph); !s.ok()) return Fail("verify", s);
  stage("verify", Seconds(t0));

  t0 = Clock::now();
  std::string text = PrintGraph(*graph);
  absl::StatusOr<Graph> reparsed = ParseGraph(text);
  if (!reparsed.ok()) return Fail("text IR round trip", reparsed.status());
  if (PrintGraph(*reparsed) != text || StructuralHash(*reparsed) != StructuralHash(*graph)) {
    return Fail("text IR round trip", absl::InternalError("reparsed graph differs"));
  }
  stage("text IR round trip", Seconds(t0));
  uint64_t hash = StructuralHash(*graph);

  proto::StageArtifact* artifact = report.add_stages();
  artifact->set_stage("graph");
  *artifact->mutable_graph() = graph->ToProto();

  // One symbolic graph, two batch sizes; float32 against the float64 oracle.
  double worst_rel = 0;
  for (int64_t batch : {2, 3}) {
    HostTensor x = RandomInput({batch, config.seq, config.d_model}, 42 + batch);
    t0 = Clock::now();
    absl::StatusOr<std::vector<HostTensor>> f32 = Interpret(*graph, {x});
    if (!f32.ok()) return Fail("interpret", f32.status());
    stage(absl::StrCat("interpret f32, batch ", batch), Seconds(t0));
    t0 = Clock::now();
    InterpreterOptions oracle;
    oracle.float64 = true;
    absl::StatusOr<std::vector<HostTensor>> f64 = Interpret(*graph, {x}, oracle);
    if (!f64.ok()) return Fail("interpret float64", f64.status());
    stage(absl::StrCat("interpret f64 oracle, batch ", batch), Seconds(t0));
    std::vector<double> a = (*f32)[0].ToDoubles(), b = (*f64)[0].ToDoubles();
    for (size_t i = 0; i < a.size(); ++i) {
      worst_rel = std::max(worst_rel, std::fabs(a[i] - b[i]) / std::max(std::fabs(b[i]), 1e-6));
    }
    // Each softmax row sums to one.
    int64_t vocab = config.vocab;
    for (size_t row = 0; row < b.size() / vocab; ++row) {
      double sum = 0;
      for (int64_t j = 0; j < vocab; ++j) sum += b[row * vocab + j];
      if (std::fabs(sum - 1.0) > 1e-9) {
        return Fail("check", absl::InternalError(absl::StrCat("softmax row ", row, " sums to ", sum)));
      }
    }
  }
  bool ok = worst_rel < 1e-4;
  std::printf("\n  nodes %d, constants %zu, structural hash %016llx\n", graph->num_nodes(),
              graph->constants().size(), static_cast<unsigned long long>(hash));
  std::printf("  float32 vs float64 oracle: max relative error %.3g (%s, bound 1e-4)\n", worst_rel,
              ok ? "ok" : "FAILED");

  std::string base = out_dir + "/decoder_block";
  if (absl::Status s = cli::WriteFile(base + ".txt", text); !s.ok()) return Fail("write", s);
  if (absl::Status s = cli::WriteFile(base + ".pb", graph->ToProto().SerializeAsString()); !s.ok()) {
    return Fail("write", s);
  }
  (*report.mutable_options())["batch_sizes"] = "2,3";
  if (absl::Status s = cli::WriteFile(out_dir + "/report.pb", report.SerializeAsString()); !s.ok()) {
    return Fail("write", s);
  }
  std::printf("  wrote %s.txt, %s.pb, %s/report.pb\n", base.c_str(), base.c_str(), out_dir.c_str());
  std::printf("  not yet in the pipeline: prims, autograd, inductor, codegen (see README)\n");
  return ok ? 0 : 1;
}

}  // namespace coil::main_job

int main(int argc, char** argv) { return coil::main_job::Main(argc, argv); }

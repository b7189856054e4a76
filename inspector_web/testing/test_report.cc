// MakeTestReport (test_report.h).
#include "inspector_web/testing/test_report.h"

#include <string>

#include "inspector_web/core/check.h"
#include "ir/graph.h"
#include "ir/parser.h"
#include "tools/driver/driver.h"
#include "tools/driver/schedule_backend.h"

namespace coil::inspector::testing {

const char kBlockGraphText[] =
    R"(graph @block(%0 "x": f32[s0, 8, 16], %1 "ln_w": f32[16], %2 "ln_b": f32[16], %3 "w1": f32[32, 16]) {
  symbol s0 min 2 max 64 hint 4
  guard s0 <= 64 "batch limit" loc("model.py":3:1 in "forward")
  %4 "bias": f32[32] = constant dense "0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f"
  %5: f32[s0, 8, 16] = aten.layer_norm(%0, %1, %2) {eps = 1e-05, normalized_shape = syms[16]} name "ln" loc("model.py":10:4 in "forward")
  %6: f32[s0, 8, 32] = aten.linear(%5, %3, %4) name "fc" loc("model.py":11:4 in "forward")
  %7: f32[s0, 8, 32] = aten.gelu(%6) {approximate = "tanh"} loc("model.py":12:4 in "forward")
  %8: f32[s0, 256] = aten.reshape(%7) {shape = syms[s0, 256]}
  %9: f32[s0, 256] = aten.softmax(%8) {dim = -1, dtype = none}
  %10: f32[s0, 128] = aten.slice(%9) {dim = 1, end = sym(128), start = sym(0), step = 1}
  %11: f32[s0, 128] = aten.mul(%10, %10)
  %12: f32[s0] = aten.sum(%11) {dim = [1], dtype = none, keepdim = false}
  return %12, %9
}
)";

namespace {

// The second capture segment: what runs after the graph break.
const char kTailGraphText[] = R"(graph @block_1(%0 "y": f32[s0]) {
  symbol s0 min 2 max 64 hint 4
  %1: f32[s0] = aten.exp(%0) loc("model.py":15:4 in "forward")
  %2: f32[s0] = aten.add(%1, %0) {alpha = 1} loc("model.py":16:4 in "forward")
  return %2
}
)";

proto::Graph Parse(const char* text) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  INSPECTOR_CHECK(g.ok(), std::string(g.status().message()).c_str());
  return g->ToProto();
}

proto::SourceLocation Loc(const char* file, int line, const char* function) {
  proto::SourceLocation loc;
  loc.set_file(file);
  loc.set_line(line);
  loc.set_function(function);
  return loc;
}

}  // namespace

proto::CompileReport MakeTestReport() {
  proto::Graph aten = Parse(kBlockGraphText);
  proto::Graph tail = Parse(kTailGraphText);
  // The real prims and inductor stages, through the compile driver. The codegen artifact below
  // is made up (no LLVM here), so the driver stops after inductor; the Schedule interpreter
  // backend declares no extern epilogues, so the mm stays a kernel of its own.
  driver::DriverOptions options;
  options.backend = driver::ScheduleInterpreterBackend();
  options.stop_after = driver::Stage::kInductor;
  options.cache = nullptr;
  absl::StatusOr<Graph> graph = ParseGraph(kBlockGraphText);
  INSPECTOR_CHECK(graph.ok(), std::string(graph.status().message()).c_str());
  absl::StatusOr<driver::CompileResult> compiled =
      driver::CompileGraph(*std::move(graph), options);
  INSPECTOR_CHECK(compiled.ok(), std::string(compiled.status().message()).c_str());
  const proto::Graph* prims_graph = &*compiled->prims_graph;
  const proto::Schedule* schedule = &*compiled->schedule;

  proto::CompileReport report;
  report.set_model("block: layer norm, linear, gelu, softmax (inspector test report)");
  report.set_coil_version("0.1.0");
  (*report.mutable_options())["dynamic"] = "auto";
  (*report.mutable_options())["backend"] = "cpu";

  proto::StageArtifact* capture = report.add_stages();
  capture->set_stage("capture");
  capture->set_seconds(0.004);
  proto::CaptureResult* c = capture->mutable_capture();
  *c->add_graphs() = aten;
  *c->add_graphs() = tail;
  *c->add_guards() = aten.guards(0);
  proto::GraphBreak* b = c->add_breaks();
  b->set_reason("data-dependent read: Tensor::item()");
  b->set_op("aten.item");
  *b->mutable_loc() = Loc("model.py", 14, "forward");
  proto::CaptureResult::Recompile* r = c->add_recompiles();
  r->set_reason("x.size(0) == 4");
  r->set_count(2);

  proto::StageArtifact* import = report.add_stages();
  import->set_stage("import");
  import->set_seconds(0.001);
  *import->mutable_graph() = aten;

  proto::StageArtifact* autograd = report.add_stages();
  autograd->set_stage("autograd");
  autograd->set_seconds(0.002);
  proto::AutogradResult* ag = autograd->mutable_autograd();
  *ag->mutable_joint() = aten;
  *ag->mutable_forward() = aten;
  *ag->mutable_backward() = tail;
  ag->add_saved_values(5);  // the layer norm's output
  ag->add_saved_values(6);  // the linear's output
  ag->add_saved_values(0);  // an input
  ag->set_saved_bytes(4 * 4 * 8 * (16 + 32) + 4 * 4 * 8 * 16);

  proto::StageArtifact* prims = report.add_stages();
  prims->set_stage("prims");
  prims->set_seconds(0.003);
  *prims->mutable_graph() = *prims_graph;

  proto::StageArtifact* inductor = report.add_stages();
  inductor->set_stage("inductor");
  inductor->set_seconds(0.02);
  *inductor->mutable_schedule() = *schedule;

  proto::StageArtifact* codegen = report.add_stages();
  codegen->set_stage("codegen_cpu");
  codegen->set_seconds(0.3);
  proto::KernelModule* km = codegen->mutable_kernel_module();
  km->set_backend("cpu");
  *km->mutable_schedule() = *schedule;
  km->set_target_triple("x86_64-unknown-linux-gnu");
  km->set_cpu("x86-64-v3");
  km->set_compiler_version("LLVM 16 (test)");
  km->set_object_code(std::string(1024, '\x7f'));
  km->set_wrapper_symbol("coil_main");
  km->set_wrapper_source("define void @coil_main(ptr %args) {\nentry:\n  ret void\n}\n");
  for (const proto::Kernel& k : schedule->kernels()) {
    proto::CompiledKernel* ck = km->add_kernels();
    ck->set_kernel_id(k.id());
    ck->set_name(k.name());
    ck->set_symbol("coil_" + k.name());
    ck->set_source("; kernel " + k.name() + " \xc2\xb5s\ndefine void @coil_" + k.name() +
                   "(ptr noalias %args, i64 %begin) #0 {\nentry:\n  %p = getelementptr inbounds"
                   " float, ptr %args, i64 %begin\n  store float 1.500000e+00, ptr %p, align 4\n"
                   "  ret void\n}\nattributes #0 = { nounwind }\n");
  }

  for (const auto& [name, seconds] : {std::pair<const char*, double>{"capture", 0.004},
                                      {"prims", 0.003},
                                      {"inductor", 0.02},
                                      {"codegen_cpu", 0.3}}) {
    proto::StageTiming* t = report.add_timings();
    t->set_stage(name);
    t->set_seconds(seconds);
  }
  proto::LogLine* log = report.add_logs();
  log->set_channel("graph_breaks");
  log->set_text("graph break in forward at model.py:14: Tensor::item()");
  return report;
}

}  // namespace coil::inspector::testing

// libFuzzer entry point for decomposition and scheduling: the bytes are a serialized
// proto::Graph (ParseFromArray -> Graph::FromProto -> Verify). A graph that verifies goes
// through the compile driver's prims and inductor stages (tools/driver/driver.h, stopping after
// inductor): prims must either fail with a status or produce a graph that loads, verifies and
// holds only prims and externs; inductor must then return a schedule or a status. A violation
// aborts, so libFuzzer reports it like a crash. (An inductor error on a decomposed graph is not
// a crash but is worth a look: run the replayer with COIL_FUZZ_VERBOSE=1 to print those.)
//
// Build and run (see docs/fuzzing.md):
//   bazel --output_base=/root/.cache/bazel_fuzz build --config=fuzz //prims/fuzz:decompose_fuzzer
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/stubs/logging.h"
#include "ir/graph.h"
#include "ir/printer.h"
#include "ir/proto/graph.pb.h"
#include "ir/proto/report.pb.h"
#include "ir/verifier.h"
#include "tools/driver/driver.h"
#include "tools/driver/schedule_backend.h"

namespace coil {
namespace {

[[noreturn]] void Fail(absl::string_view what, absl::string_view detail) {
  std::cerr << "decompose_fuzzer: " << what << "\n" << detail << std::endl;
  std::abort();
}

bool IsPrimOrExtern(absl::string_view op) {
  return absl::StartsWith(op, "prims.") || op == "aten.mm" || op == "aten.bmm" ||
         op == "aten.convolution";
}

void Run(const proto::Graph& p) {
  absl::StatusOr<Graph> g = Graph::FromProto(p);
  if (!g.ok() || !Verify(*g).ok()) return;
  const std::string before = PrintGraph(*g);
  // prims and inductor through the compile driver, stopping at the Schedule. The stages'
  // artifacts are recorded so that the decomposed graph is checked even when inductor fails.
  driver::DriverOptions options;
  options.backend = driver::ScheduleInterpreterBackend();
  options.stop_after = driver::Stage::kInductor;
  options.cache = nullptr;
  options.record_artifacts = true;
  proto::CompileReport partial;
  absl::StatusOr<driver::CompileResult> r = driver::CompileGraph(*std::move(g), options, &partial);
  const proto::Graph* d = nullptr;
  for (const proto::StageArtifact& a : (r.ok() ? r->report : partial).stages()) {
    if (a.stage() == "prims") d = &a.graph();
  }
  if (d == nullptr) return;  // prims failed with a status
  absl::StatusOr<Graph> dg = Graph::FromProto(*d);
  if (!dg.ok()) Fail("decomposed graph does not load: " + dg.status().ToString(), before);
  if (absl::Status s = Verify(*dg); !s.ok()) {
    Fail("decomposed graph does not verify: " + s.ToString(), before + "----\n" + PrintGraph(*dg));
  }
  for (const Node* n : dg->nodes()) {
    if (!IsPrimOrExtern(n->op())) {
      Fail("decomposed graph holds " + n->op(), before + "----\n" + PrintGraph(*dg));
    }
  }
  static const bool verbose = std::getenv("COIL_FUZZ_VERBOSE") != nullptr;
  if (!r.ok() && verbose) {
    std::cerr << "decompose_fuzzer: " << r.status() << "\n" << PrintGraph(*dg) << std::endl;
  }
}

}  // namespace
}  // namespace coil

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Protobuf logs every string field with invalid UTF-8; that is noise here.
  static const bool quiet = (google::protobuf::SetLogHandler(nullptr), true);
  (void)quiet;
  coil::proto::Graph p;
  if (p.ParseFromArray(data, static_cast<int>(size))) coil::Run(p);
  return 0;
}

// libFuzzer entry point for decomposition and scheduling: the bytes are a serialized
// proto::Graph (ParseFromArray -> Graph::FromProto -> Verify). A graph that verifies goes
// through prims::Decompose, which must either fail with a status or return a graph that loads,
// verifies and holds only prims and externs; that graph goes through inductor::BuildSchedule,
// which must return a schedule or a status. A violation aborts, so libFuzzer reports it like a
// crash. (A BuildSchedule error on a decomposed graph is not a crash but is worth a look: run
// the replayer with COIL_FUZZ_VERBOSE=1 to print those.)
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
#include "inductor/schedule.h"
#include "ir/graph.h"
#include "ir/printer.h"
#include "ir/proto/graph.pb.h"
#include "ir/verifier.h"
#include "prims/decompose.h"

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
  absl::StatusOr<proto::Graph> d = prims::Decompose(g->ToProto());
  if (!d.ok()) return;
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
  absl::StatusOr<proto::Schedule> s = inductor::BuildSchedule(*d);
  static const bool verbose = std::getenv("COIL_FUZZ_VERBOSE") != nullptr;
  if (!s.ok() && verbose) {
    std::cerr << "decompose_fuzzer: BuildSchedule failed: " << s.status() << "\n"
              << PrintGraph(*dg) << std::endl;
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

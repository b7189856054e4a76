// libFuzzer entry point for "load + verify": the bytes are tried both as a serialized
// proto::Graph (ParseFromArray -> Graph::FromProto -> Verify) and as graph text
// (ParseGraph -> Verify). Whatever loads must also survive the printer, the parser and the
// structural hash, and print -> parse -> print must be a fixed point; a violation aborts, so
// the fuzzer reports it like a crash.
//
// Build and run (see docs/fuzzing.md):
//   bazel --output_base=/root/.cache/bazel_fuzz build --config=fuzz //ir/fuzz:graph_fuzzer
//   bazel-bin/ir/fuzz/graph_fuzzer -max_total_time=600 ir/fuzz/corpus
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/stubs/logging.h"
#include "ir/graph.h"
#include "ir/graph_hash.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/proto/graph.pb.h"
#include "ir/verifier.h"

namespace coil {
namespace {

[[noreturn]] void Fail(absl::string_view what, absl::string_view detail) {
  std::cerr << "graph_fuzzer: " << what << "\n" << detail << std::endl;
  std::abort();
}

// Print -> parse -> print must reproduce the text and the hash.
void CheckRoundTrip(const Graph& g) {
  std::string text = PrintGraph(g);
  absl::StatusOr<Graph> again = ParseGraph(text);
  if (!again.ok()) Fail("printed graph does not parse: " + again.status().ToString(), text);
  std::string text2 = PrintGraph(*again);
  if (text2 != text) Fail("print -> parse -> print changed the text", text + "----\n" + text2);
  if (StructuralHash(*again) != StructuralHash(g)) Fail("hash changed in the round trip", text);
}

void Load(const proto::Graph& p) {
  absl::StatusOr<Graph> g = Graph::FromProto(p);
  if (!g.ok()) return;
  (void)Verify(*g).ok();
  CheckRoundTrip(*g);
}

}  // namespace
}  // namespace coil

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Protobuf logs every string field with invalid UTF-8; that is noise here.
  static const bool quiet = (google::protobuf::SetLogHandler(nullptr), true);
  (void)quiet;
  coil::proto::Graph p;
  if (p.ParseFromArray(data, static_cast<int>(size))) coil::Load(p);
  absl::StatusOr<coil::Graph> g =
      coil::ParseGraph(absl::string_view(reinterpret_cast<const char*>(data), size));
  if (g.ok()) {
    (void)coil::Verify(*g).ok();
    coil::CheckRoundTrip(*g);
    // The text path and the proto path must agree.
    coil::Load(g->ToProto());
  }
  return 0;
}

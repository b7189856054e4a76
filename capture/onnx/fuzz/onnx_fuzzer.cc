// libFuzzer entry point for the ONNX importer: the bytes are a serialized onnx.ModelProto.
// Whatever imports must be a valid coil graph: it must load back from its proto
// (Graph::FromProto) and verify; any crash, sanitizer report or CHECK failure is a finding.
// External data is never read (the corpus has none, and locations are confined to the
// model's folder, which here is a folder that does not exist).
//
// Build and run (see docs/fuzzing.md):
//   bazel --output_base=/root/.cache/bazel_fuzz build --config=fuzz //capture/onnx/fuzz:onnx_fuzzer
//   /bazel-bin/capture/onnx/fuzz/onnx_fuzzer -max_total_time=600 capture/onnx/fuzz/corpus
#include <cstddef>
#include <cstdint>
#include <iostream>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "capture/onnx/onnx_importer.h"
#include "google/protobuf/stubs/logging.h"
#include "ir/graph.h"
#include "ir/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Protobuf logs every string field with invalid UTF-8; that is noise here.
  static const bool quiet = (google::protobuf::SetLogHandler(nullptr), true);
  (void)quiet;
  coil::onnx::ImportOptions options;
  options.external_data_dir = "/nonexistent-onnx-fuzz-dir";
  absl::StatusOr<coil::proto::Graph> g = coil::onnx::ImportOnnxModel(
      absl::string_view(reinterpret_cast<const char*>(data), size), options);
  if (!g.ok()) {
    if (g.status().code() == absl::StatusCode::kInternal) {
      std::cerr << "onnx_fuzzer: internal error: " << g.status() << std::endl;
      std::abort();
    }
    return 0;
  }
  absl::StatusOr<coil::Graph> graph = coil::Graph::FromProto(*g);
  if (!graph.ok()) {
    std::cerr << "onnx_fuzzer: imported graph does not load: " << graph.status() << std::endl;
    std::abort();
  }
  absl::Status s = coil::Verify(*graph);
  if (!s.ok()) {
    std::cerr << "onnx_fuzzer: imported graph does not verify: " << s << std::endl;
    std::abort();
  }
  return 0;
}

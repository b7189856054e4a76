// ONNX frontend: reads an ONNX ModelProto into a coil graph of aten-level ops.
//
//   absl::StatusOr<proto::Graph> g = coil::onnx::ImportOnnxFile("resnet18.onnx");
//   absl::StatusOr<Graph> graph = coil::onnx::ImportOnnxFileAsGraph("resnet18.onnx");
//
// Initializers become constants (inline, or external data loaded from the model's folder),
// graph inputs that are not initializers become graph inputs, `dim_param` dimensions become
// shape symbols, and each ONNX node becomes one or more aten ops with ONNX's broadcasting and
// type rules made explicit. Shape arithmetic (Shape -> Gather -> Concat -> Reshape chains that
// exporters emit for dynamic axes) is folded into symbolic attributes at import time.
//
// Errors: an op, attribute value or domain coil does not implement is Unimplemented and names
// the op and node; malformed or inconsistent models are InvalidArgument naming the node.
#ifndef COIL_CAPTURE_ONNX_ONNX_IMPORTER_H_
#define COIL_CAPTURE_ONNX_ONNX_IMPORTER_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/graph.h"
#include "ir/proto/graph.pb.h"

namespace coil::onnx {

struct ImportOptions {
  // Folder that external-data locations are relative to (ImportOnnxFile sets the model's).
  std::string external_data_dir;
  // Load external initializer data into the graph (true), or keep references to the files.
  bool inline_external_data = true;
};

absl::StatusOr<proto::Graph> ImportOnnxModel(absl::string_view model_bytes,
                                             const ImportOptions& options = {});
absl::StatusOr<proto::Graph> ImportOnnxFile(const std::string& path,
                                            ImportOptions options = {});

// The same, returning the Graph itself: no proto round trip (for a 46 MB model, two fewer
// copies of the weights than ImportOnnxFile + Graph::FromProto).
absl::StatusOr<Graph> ImportOnnxModelAsGraph(absl::string_view model_bytes,
                                             const ImportOptions& options = {});
absl::StatusOr<Graph> ImportOnnxFileAsGraph(const std::string& path, ImportOptions options = {});

}  // namespace coil::onnx

#endif  // COIL_CAPTURE_ONNX_ONNX_IMPORTER_H_

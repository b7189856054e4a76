// Reading and writing graph files for the CLI: binary proto::Graph, text IR or ONNX models.
#ifndef COIL_TOOLS_COIL_GRAPH_IO_H_
#define COIL_TOOLS_COIL_GRAPH_IO_H_

#include <string>

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace coil::cli {

// Reads a whole file; errors name the path.
absl::StatusOr<std::string> ReadFile(const std::string& path);
absl::Status WriteFile(const std::string& path, const std::string& bytes);

// A path ending in ".onnx" is an ONNX model, imported with capture/onnx; otherwise a file that
// starts (after blanks and comments) with "graph" is text IR, and anything else is a serialized
// proto::Graph. Errors name the path and what failed.
absl::StatusOr<Graph> LoadGraph(const std::string& path);

}  // namespace coil::cli

#endif  // COIL_TOOLS_COIL_GRAPH_IO_H_

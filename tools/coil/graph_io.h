// Reading and writing graph files for the CLI: binary proto::Graph or text IR, by content.
#ifndef COIL_TOOLS_COIL_GRAPH_IO_H_
#define COIL_TOOLS_COIL_GRAPH_IO_H_

#include <string>

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace coil::cli {

// Reads a whole file; errors name the path.
absl::StatusOr<std::string> ReadFile(const std::string& path);
absl::Status WriteFile(const std::string& path, const std::string& bytes);

// A file that starts (after blanks and comments) with "graph" is text IR; anything else is a
// serialized proto::Graph. Errors name the path and what failed.
absl::StatusOr<Graph> LoadGraph(const std::string& path);

}  // namespace coil::cli

#endif  // COIL_TOOLS_COIL_GRAPH_IO_H_

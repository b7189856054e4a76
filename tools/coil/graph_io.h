// Reading and writing graph files for the CLI: binary proto::Graph, text IR or ONNX models.
#ifndef COIL_TOOLS_COIL_GRAPH_IO_H_
#define COIL_TOOLS_COIL_GRAPH_IO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "runtime/host_tensor.h"

namespace coil::cli {

// Reads a whole input file with io/read_file.h's ReadInputFile (a folder is an error, a pipe
// or device is read up to 64 MiB); errors name the path.
absl::StatusOr<std::string> ReadFile(const std::string& path);
// Writes an output file with io/write_file.h's WriteFileAtomically: all or nothing, every
// write error reported, and a symbolic link, folder or device node as the target refused.
absl::Status WriteFile(const std::string& path, const std::string& bytes);

// A path ending in ".onnx" is an ONNX model, imported with capture/onnx; otherwise a file that
// starts (after blanks and comments) with "graph" is text IR, and anything else is a serialized
// proto::Graph. Errors name the path and what failed.
absl::StatusOr<Graph> LoadGraph(const std::string& path);

// Seeded random inputs for a graph: floats uniform in [-1, 1), integers in [0, 10), bools.
// Symbols take their hints, overridden by `dims` ("s0=8,batch=2"); errors name the input or
// the malformed item.
absl::StatusOr<std::vector<HostTensor>> RandomInputs(const Graph& graph, const std::string& dims,
                                                     uint64_t seed);

}  // namespace coil::cli

#endif  // COIL_TOOLS_COIL_GRAPH_IO_H_

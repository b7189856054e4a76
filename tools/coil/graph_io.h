// Reading and writing graph files for the CLI: binary proto::Graph, text IR or ONNX models.
#ifndef COIL_TOOLS_COIL_GRAPH_IO_H_
#define COIL_TOOLS_COIL_GRAPH_IO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "runtime/host_tensor.h"

namespace coil::cli {

// Reads a whole input file with ir/io/read_file.h's ReadInputFile (a folder is an error, a pipe
// or device is read up to 64 MiB); errors name the path.
absl::StatusOr<std::string> ReadFile(const std::string& path);
// Writes an output file with ir/io/write_file.h's WriteFileAtomically: all or nothing, every
// write error reported, and a symbolic link, folder or device node as the target refused.
absl::Status WriteFile(const std::string& path, const std::string& bytes);

// A path ending in ".onnx" is an ONNX model, imported with capture/onnx; otherwise a file that
// starts (after blanks and comments) with "graph" is text IR, and anything else is a serialized
// proto::Graph. Errors name the path and what failed.
absl::StatusOr<Graph> LoadGraph(const std::string& path);

// Parses --dim's "s0=8,batch=2": each item NAME=SIZE once, SIZE a non-negative int64 within
// the symbol's declared range. Errors name the item ("--dim expects NAME=SIZE with SIZE a
// non-negative integer, got 'a=1=2'").
absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> ParseDims(const Graph& graph,
                                                                    const std::string& dims);

// Seeded random inputs for a graph: floats uniform in [-1, 1), integers in [int_min, int_max]
// ([0, 9] by default: valid token ids and indices for most models), bools. Symbols take their
// hints, overridden by `dims` (ParseDims). Errors name the malformed item, or the input whose
// size cannot be computed or allocated (a size past int64, or more memory than the system
// grants: an error, never a crash).
absl::StatusOr<std::vector<HostTensor>> RandomInputs(const Graph& graph, const std::string& dims,
                                                     uint64_t seed, int64_t int_min = 0,
                                                     int64_t int_max = 9);

}  // namespace coil::cli

#endif  // COIL_TOOLS_COIL_GRAPH_IO_H_

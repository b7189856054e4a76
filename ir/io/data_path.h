// The rules for data files that a model names (a coil graph's external constants, an ONNX
// model's external initializers): a model may read files in its own folder and nothing else.
//
//   if (absl::Status s = CheckDataPath(c.external_path); !s.ok()) ...   // when loading a graph
//   absl::StatusOr<std::string> bytes = ReadDataFile(dir, "w.bin", 0, 16);  // when reading
//
// A data path must be non-empty, relative, free of ".." components and of NUL bytes; the file
// it names must be a regular file. These are lexical rules: a symbolic link inside the folder
// is followed (as the model's author set it up). Loaders check the rules when they accept a
// model, and ReadDataFile checks them again where the bytes are read (defense in depth: a graph
// built in memory never went through a loader).
#ifndef COIL_IR_IO_DATA_PATH_H_
#define COIL_IR_IO_DATA_PATH_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace coil {

// OK, or InvalidArgument saying which rule `path` breaks, e.g.
//   external data path '/etc/passwd' must be relative to the model's folder
//   external data path '../../etc/passwd' must not contain '..' (it would leave the model's
//   folder)
absl::Status CheckDataPath(absl::string_view path);

// Checks `path` with CheckDataPath, then reads `length` bytes at `offset` of the regular file
// `dir`/`path` (`path` alone when `dir` is empty) with ReadFileRange.
absl::StatusOr<std::string> ReadDataFile(const std::string& dir, const std::string& path,
                                         int64_t offset, int64_t length);

}  // namespace coil

#endif  // COIL_IR_IO_DATA_PATH_H_

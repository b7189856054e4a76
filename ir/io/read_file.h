// Reading input files without hanging, without unbounded reads and without mistaking a folder
// for an empty file.
//
//   absl::StatusOr<std::string> text = ReadInputFile("model.txt");
//   absl::StatusOr<std::string> w = ReadFileRange("weights.bin", /*offset=*/64, /*length=*/16);
//   absl::StatusOr<std::string> page = ReadRegularFile("served/report.pb");
//
// Every error names the path and says what is wrong with it:
//   cannot open 'nope.txt': No such file or directory
//   cannot read 'models': it is a directory, not a file
//   cannot read '/dev/zero': it is not a regular file and has more than 67108864 bytes (the
//       limit for pipes and devices; save it to a file first)
//   cannot read 'w.bin': it is not a regular file (a FIFO)
//   'w.bin' has 12 bytes, fewer than offset 8 + length 16
//
// Files are opened non-blocking (a FIFO without a writer does not block the open; reads
// switch back to blocking) and never as a controlling terminal. Allocation failure of a huge
// file's buffer is an error (ResourceExhausted), not an abort.
#ifndef COIL_IR_IO_READ_FILE_H_
#define COIL_IR_IO_READ_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace coil {

// How much ReadInputFile reads from a file that is not a regular file (a pipe such as
// `<(gunzip -c model.pb.gz)`, /dev/stdin, a character device) before giving up.
inline constexpr int64_t kMaxNonRegularFileBytes = int64_t{64} << 20;

// The whole content of an input file (a graph, a model, a tensor, a page). Regular files are
// read whole, whatever their size. Pipes, FIFOs and character devices are read to their end,
// up to `max_non_regular_bytes` (more is an error). Directories, block devices and sockets
// are refused.
absl::StatusOr<std::string> ReadInputFile(
    const std::string& path, int64_t max_non_regular_bytes = kMaxNonRegularFileBytes);

// The whole content of a file that must be a regular file (a file served by `coil inspect`):
// a FIFO, device, folder or socket is refused at once, without blocking or reading from it.
absl::StatusOr<std::string> ReadRegularFile(const std::string& path);

// `length` bytes from `offset` of a regular file (anything else is refused); the file must
// have them all (DataLoss otherwise). offset and length must be >= 0.
absl::StatusOr<std::string> ReadFileRange(const std::string& path, int64_t offset,
                                          int64_t length);

}  // namespace coil

#endif  // COIL_IR_IO_READ_FILE_H_

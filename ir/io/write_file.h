// Writing output files so that a failure never leaves a half-written file and a write never
// goes somewhere the caller did not name.
//
//   if (absl::Status s = WriteFileAtomically("out/model.pb", bytes); !s.ok()) return s;
//
// The bytes go to a new temporary file in the target's folder, created exclusively (O_EXCL |
// O_NOFOLLOW, an unpredictable name, like mkstemp, but with the usual 0666 & ~umask mode; an
// existing target's permission bits are kept), then renamed over the target. Every write,
// the optional fsync and the close are checked; on any error the temporary is removed and the
// target is left as it was. The target must be a regular file or absent: a symbolic link, a
// directory, a device node (/dev/full, /dev/stdout), a FIFO or a socket is refused, so a write
// never follows a link planted where the output goes nor replaces a device by a file. (The
// check runs before the write: a link created at the target between the check and the rename
// is replaced, never followed, since rename does not follow links.)
//
// Errors name the path and the reason:
//   cannot write 'out.html': it is a symbolic link (name its target instead)
//   cannot write '/dev/full': it is not a regular file (a character device)
//   cannot write 'out/model.pb': cannot create a temporary file in 'out': Permission denied
//   cannot write 'big.pb': File too large
#ifndef COIL_IR_IO_WRITE_FILE_H_
#define COIL_IR_IO_WRITE_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace coil {

struct WriteFileOptions {
  // fsync the file before the rename and its folder after it: after a crash of the machine
  // (not only of the process) the target then holds its old or its new bytes, never an empty
  // file. For artifacts others build on (AOT packages); off for scratch and dump files.
  bool durable = false;
};

absl::Status WriteFileAtomically(const std::string& path, absl::string_view bytes,
                                 const WriteFileOptions& options = {});

}  // namespace coil

#endif  // COIL_IR_IO_WRITE_FILE_H_

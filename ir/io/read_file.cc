// Input file reading (see read_file.h).
#include "ir/io/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <new>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace coil {
namespace {

// Closes a descriptor when it goes out of scope (errors of close() on a file only read from
// say nothing about the bytes read, so they are ignored).
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO or pipe";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "an unknown kind of file";
}

// Opens `path` for reading without blocking on a FIFO that has no writer and without making
// a terminal the controlling one; `st` receives its fstat.
absl::StatusOr<int> OpenForReading(const std::string& path, struct stat& st) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("cannot open '", path, "'"));
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    return absl::ErrnoToStatus(error, absl::StrCat("cannot stat '", path, "'"));
  }
  return fd;
}

absl::Status NotAFile(const std::string& path, mode_t mode) {
  if (S_ISDIR(mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read '", path, "': it is a directory, not a file"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("cannot read '", path, "': it is not a regular file (", KindOf(mode), ")"));
}

absl::Status NoMemory(const std::string& path, int64_t bytes) {
  return absl::ResourceExhaustedError(
      absl::StrCat("cannot read '", path, "': out of memory for ", bytes, " bytes"));
}

// Reads to the end of `fd`: first into a buffer of `size_hint` bytes (a regular file's size),
// then in chunks. `cap` < 0: no limit.
absl::StatusOr<std::string> ReadToEnd(int fd, const std::string& path, int64_t size_hint,
                                      int64_t cap) {
  std::string out;
  try {
    out.resize(static_cast<size_t>(size_hint));
  } catch (const std::bad_alloc&) {
    return NoMemory(path, size_hint);
  } catch (const std::length_error&) {
    return NoMemory(path, size_hint);
  }
  size_t used = 0;
  char chunk[1 << 16];
  while (true) {
    char* dst = used < out.size() ? out.data() + used : chunk;
    const size_t room = used < out.size() ? out.size() - used : sizeof(chunk);
    const ssize_t n = ::read(fd, dst, room);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::ErrnoToStatus(errno, absl::StrCat("cannot read '", path, "'"));
    }
    if (n == 0) break;
    if (cap >= 0 && static_cast<int64_t>(used) + n > cap) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot read '", path, "': it is not a regular file and has more than ", cap,
          " bytes (the limit for pipes and devices; save it to a file first)"));
    }
    if (dst == chunk) {
      try {
        out.append(chunk, static_cast<size_t>(n));
      } catch (const std::bad_alloc&) {
        return NoMemory(path, static_cast<int64_t>(used) + n);
      }
    }
    used += static_cast<size_t>(n);
  }
  out.resize(used);
  return out;
}

}  // namespace

absl::StatusOr<std::string> ReadInputFile(const std::string& path, int64_t max_non_regular_bytes) {
  struct stat st;
  absl::StatusOr<int> opened = OpenForReading(path, st);
  if (!opened.ok()) return opened.status();
  Fd fd(*opened);
  if (S_ISREG(st.st_mode)) return ReadToEnd(fd.get(), path, st.st_size, /*cap=*/-1);
  if (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode)) return NotAFile(path, st.st_mode);
  // A pipe whose writer is slow is read as `cat` would: blocking. (A FIFO nobody writes to
  // reads as empty; the open above did not wait for a writer.)
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("cannot read '", path, "'"));
  }
  return ReadToEnd(fd.get(), path, 0, max_non_regular_bytes < 0 ? 0 : max_non_regular_bytes);
}

absl::StatusOr<std::string> ReadRegularFile(const std::string& path) {
  struct stat st;
  absl::StatusOr<int> opened = OpenForReading(path, st);
  if (!opened.ok()) return opened.status();
  Fd fd(*opened);
  if (!S_ISREG(st.st_mode)) return NotAFile(path, st.st_mode);
  return ReadToEnd(fd.get(), path, st.st_size, /*cap=*/-1);
}

absl::StatusOr<std::string> ReadFileRange(const std::string& path, int64_t offset,
                                          int64_t length) {
  if (offset < 0 || length < 0) {
    return absl::InvalidArgumentError(absl::StrCat("cannot read '", path, "': negative offset ",
                                                   offset, " or length ", length));
  }
  struct stat st;
  absl::StatusOr<int> opened = OpenForReading(path, st);
  if (!opened.ok()) return opened.status();
  Fd fd(*opened);
  if (!S_ISREG(st.st_mode)) return NotAFile(path, st.st_mode);
  const int64_t size = st.st_size;
  auto too_short = [&] {
    return absl::DataLossError(absl::StrCat("'", path, "' has ", size,
                                            " bytes, fewer than offset ", offset, " + length ",
                                            length));
  };
  if (offset > size || length > size - offset) return too_short();
  std::string out;
  try {
    out.resize(static_cast<size_t>(length));
  } catch (const std::bad_alloc&) {
    return NoMemory(path, length);
  }
  int64_t done = 0;
  while (done < length) {
    const ssize_t n = ::pread(fd.get(), out.data() + done, static_cast<size_t>(length - done),
                              static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::ErrnoToStatus(errno, absl::StrCat("cannot read '", path, "'"));
    }
    if (n == 0) return too_short();  // the file shrank since fstat
    done += n;
  }
  return out;
}

}  // namespace coil

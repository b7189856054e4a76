// Atomic output file writing (see write_file.h).
#include "ir/io/write_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace coil {
namespace {

absl::Status Error(const std::string& path, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("cannot write '", path, "': ", why));
}

absl::Status ErrnoError(int error, const std::string& path, absl::string_view what = "") {
  return absl::ErrnoToStatus(error, absl::StrCat("cannot write '", path, "'", what));
}

const char* KindOf(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO or pipe";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "an unknown kind of file";
}

// 64 unpredictable bits for a temporary name (getrandom; a clock, pid and counter mix if the
// kernel refuses, which O_EXCL still makes safe, only guessable).
uint64_t RandomBits() {
  uint64_t v = 0;
  if (::getrandom(&v, sizeof(v), GRND_NONBLOCK) == static_cast<ssize_t>(sizeof(v))) return v;
  static std::atomic<uint64_t> counter{0};
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  v = static_cast<uint64_t>(ts.tv_nsec) ^ (static_cast<uint64_t>(ts.tv_sec) << 30) ^
      (static_cast<uint64_t>(::getpid()) << 40) ^ (counter.fetch_add(1) * 0x9E3779B97F4A7C15ull);
  return v;
}

bool WriteAll(int fd, absl::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path, absl::string_view bytes,
                                 const WriteFileOptions& options) {
  if (path.empty()) return absl::InvalidArgumentError("cannot write '': the path is empty");
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty() || base == "." || base == "..") return Error(path, "it names a folder");

  // The target: absent or a regular file (whose permission bits the new file keeps).
  mode_t mode = 0;
  bool exists = false;
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) return Error(path, "it is a symbolic link (name its target instead)");
    if (S_ISDIR(st.st_mode)) return Error(path, "it is a directory");
    if (!S_ISREG(st.st_mode)) {
      return Error(path, absl::StrCat("it is not a regular file (", KindOf(st.st_mode), ")"));
    }
    exists = true;
    mode = st.st_mode & 07777;
  } else if (errno != ENOENT) {
    return ErrnoError(errno, path);
  }

  // A new file of our own in the same folder (so the rename stays on one file system).
  std::string temp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temp = absl::StrFormat("%s/.%s.tmp-%016x", dir, base.substr(0, 200), RandomBits());
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    return ErrnoError(errno, path, absl::StrCat(": cannot create a temporary file in '", dir, "'"));
  }
  int error = 0;
  if (exists && ::fchmod(fd, mode) != 0) error = errno;
  if (error == 0 && !WriteAll(fd, bytes)) error = errno;
  if (error == 0 && options.durable && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && ::rename(temp.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temp.c_str());
    return ErrnoError(error, path);
  }
  if (options.durable) {
    // The rename itself is durable once the folder is.
    const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) return ErrnoError(errno, path, absl::StrCat(": cannot sync '", dir, "'"));
    error = ::fsync(dir_fd) != 0 ? errno : 0;
    ::close(dir_fd);
    if (error != 0) return ErrnoError(error, path, absl::StrCat(": cannot sync '", dir, "'"));
  }
  return absl::OkStatus();
}

}  // namespace coil

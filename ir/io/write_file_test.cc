// WriteFileAtomically: what it writes, what it leaves alone, and one expected-error test per
// bad target.
#include "ir/io/write_file.h"

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace coil {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

// A fresh folder per test.
std::string Folder(const std::string& name) {
  std::string dir = absl::StrCat(::testing::TempDir(), "/write_file_test_", name);
  ::mkdir(dir.c_str(), 0755);
  return dir;
}

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> List(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  return names;
}

TEST(WriteFileAtomically, CreatesAndReplaces) {
  std::string dir = Folder("creates");
  std::string path = dir + "/out.pb";
  ASSERT_TRUE(WriteFileAtomically(path, "first").ok());
  EXPECT_EQ(Read(path), "first");
  ASSERT_TRUE(WriteFileAtomically(path, "second", {.durable = true}).ok());
  EXPECT_EQ(Read(path), "second");
  EXPECT_THAT(List(dir), ElementsAre("out.pb"));  // no temporary left
}

TEST(WriteFileAtomically, KeepsTheTargetsPermissions) {
  std::string path = Folder("mode") + "/out.sh";
  ASSERT_TRUE(WriteFileAtomically(path, "a").ok());
  ASSERT_EQ(::chmod(path.c_str(), 0750), 0);
  ASSERT_TRUE(WriteFileAtomically(path, "b").ok());
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750);
}

TEST(WriteFileAtomically, LeavesAFileNamedLikeAnOldTemporaryAlone) {
  // The inspector's export once wrote through a fixed FILE.tmp, destroying such a file.
  std::string dir = Folder("tmpname");
  std::ofstream(dir + "/notes.html.tmp") << "my notes";
  ASSERT_TRUE(WriteFileAtomically(dir + "/notes.html", "<html>").ok());
  EXPECT_EQ(Read(dir + "/notes.html.tmp"), "my notes");
  EXPECT_THAT(List(dir), UnorderedElementsAre("notes.html", "notes.html.tmp"));
}

TEST(WriteFileAtomically, RelativePathInTheCurrentFolder) {
  std::string dir = Folder("relative");
  char old[4096];
  ASSERT_NE(::getcwd(old, sizeof(old)), nullptr);
  ASSERT_EQ(::chdir(dir.c_str()), 0);
  absl::Status s = WriteFileAtomically("here.txt", "x");
  ASSERT_EQ(::chdir(old), 0);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(Read(dir + "/here.txt"), "x");
}

// ---- expected errors: the target is left as it was, and no temporary stays behind.

TEST(WriteFileAtomicallyErrors, SymbolicLink) {
  std::string dir = Folder("symlink");
  std::ofstream(dir + "/victim") << "precious";
  ASSERT_EQ(::symlink((dir + "/victim").c_str(), (dir + "/out.html").c_str()), 0);
  absl::Status s = WriteFileAtomically(dir + "/out.html", "<html>");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), absl::StrCat("cannot write '", dir,
                                      "/out.html': it is a symbolic link (name its target instead)"));
  EXPECT_EQ(Read(dir + "/victim"), "precious");
  EXPECT_THAT(List(dir), UnorderedElementsAre("victim", "out.html"));
}

TEST(WriteFileAtomicallyErrors, DanglingSymbolicLink) {
  std::string dir = Folder("dangling");
  ASSERT_EQ(::symlink((dir + "/created_through_the_link").c_str(), (dir + "/out").c_str()), 0);
  absl::Status s = WriteFileAtomically(dir + "/out", "x");
  EXPECT_THAT(s.message(), ::testing::HasSubstr("it is a symbolic link"));
  EXPECT_THAT(List(dir), ElementsAre("out"));
}

TEST(WriteFileAtomicallyErrors, Directory) {
  std::string dir = Folder("directory");
  ::mkdir((dir + "/out.pb").c_str(), 0755);
  absl::Status s = WriteFileAtomically(dir + "/out.pb", "x");
  EXPECT_EQ(s.message(), absl::StrCat("cannot write '", dir, "/out.pb': it is a directory"));
  EXPECT_THAT(List(dir), ElementsAre("out.pb"));
}

TEST(WriteFileAtomicallyErrors, TrailingSlash) {
  absl::Status s = WriteFileAtomically(Folder("slash") + "/", "x");
  EXPECT_THAT(std::string(s.message()), ::testing::EndsWith("': it names a folder"));
}

TEST(WriteFileAtomicallyErrors, DeviceNode) {
  // Exporting to a device node used to replace the node by a regular file (as root).
  absl::Status s = WriteFileAtomically("/dev/full", "x");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "cannot write '/dev/full': it is not a regular file (a character device)");
  struct stat st;
  ASSERT_EQ(::stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(WriteFileAtomicallyErrors, Fifo) {
  std::string dir = Folder("fifo");
  ASSERT_EQ(::mkfifo((dir + "/out").c_str(), 0600), 0);
  absl::Status s = WriteFileAtomically(dir + "/out", "x");
  EXPECT_EQ(s.message(),
            absl::StrCat("cannot write '", dir, "/out': it is not a regular file (a FIFO or pipe)"));
}

TEST(WriteFileAtomicallyErrors, MissingFolder) {
  std::string dir = Folder("missing");
  absl::Status s = WriteFileAtomically(dir + "/nope/out.pb", "x");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), absl::StrCat("cannot write '", dir, "/nope/out.pb': cannot create a "
                                      "temporary file in '", dir, "/nope': No such file or "
                                      "directory"));
}

TEST(WriteFileAtomicallyErrors, WriteFails) {
  // A file size limit makes write() fail (EFBIG) as a full disk would (ENOSPC).
  std::string dir = Folder("write_fails");
  std::string path = dir + "/out.pb";
  std::ofstream(path) << "old";
  struct sigaction ignore = {}, old_action;
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGXFSZ, &ignore, &old_action), 0);
  struct rlimit old_limit;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct rlimit small = old_limit;
  small.rlim_cur = 16;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  absl::Status s = WriteFileAtomically(path, std::string(100, 'x'));
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &old_limit), 0);
  ASSERT_EQ(::sigaction(SIGXFSZ, &old_action, nullptr), 0);
  EXPECT_EQ(s.message(), absl::StrCat("cannot write '", path, "': File too large"));
  EXPECT_EQ(Read(path), "old");
  EXPECT_THAT(List(dir), ElementsAre("out.pb"));
}

TEST(WriteFileAtomicallyErrors, EmptyPath) {
  EXPECT_EQ(WriteFileAtomically("", "x").message(), "cannot write '': the path is empty");
}

}  // namespace
}  // namespace coil

// ReadInputFile, ReadRegularFile and ReadFileRange: contents, and one expected-error test per
// bad input.
#include "ir/io/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace coil {
namespace {

using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/read_file_test_", name);
}

std::string MakeFile(const std::string& name, const std::string& bytes) {
  std::string path = TempPath(name);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  return path;
}

TEST(ReadInputFile, RegularFileWhole) {
  std::string big(300000, 'x');  // more than one read chunk
  big[12345] = 'y';
  absl::StatusOr<std::string> got = ReadInputFile(MakeFile("big", big));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, big);
  got = ReadInputFile(MakeFile("empty", ""));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "");
}

TEST(ReadInputFile, PipeUpToTheCap) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], "graph", 5), 5);
  ::close(fds[1]);
  absl::StatusOr<std::string> got = ReadInputFile(absl::StrCat("/proc/self/fd/", fds[0]));
  ::close(fds[0]);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "graph");
}

TEST(ReadInputFile, DevNullIsEmpty) {
  absl::StatusOr<std::string> got = ReadInputFile("/dev/null");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "");
}

// ---- expected errors

TEST(ReadInputFileErrors, Missing) {
  absl::StatusOr<std::string> got = ReadInputFile(TempPath("nope"));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(got.status().message(),
            absl::StrCat("cannot open '", TempPath("nope"), "': No such file or directory"));
}

TEST(ReadInputFileErrors, Directory) {
  std::string dir = TempPath("dir.onnx");
  ::mkdir(dir.c_str(), 0755);
  absl::StatusOr<std::string> got = ReadInputFile(dir);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(got.status().message(),
            absl::StrCat("cannot read '", dir, "': it is a directory, not a file"));
}

TEST(ReadInputFileErrors, EndlessDeviceStopsAtTheCap) {
  absl::StatusOr<std::string> got = ReadInputFile("/dev/zero", /*max_non_regular_bytes=*/100000);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(got.status().message(),
            "cannot read '/dev/zero': it is not a regular file and has more than 100000 bytes "
            "(the limit for pipes and devices; save it to a file first)");
}

TEST(ReadInputFileErrors, FifoWithoutWriterDoesNotBlock) {
  std::string fifo = TempPath("fifo");
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  absl::StatusOr<std::string> got = ReadInputFile(fifo);  // would block in open() before
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "");
}

// ---- ReadRegularFile

TEST(ReadRegularFile, Whole) {
  absl::StatusOr<std::string> got = ReadRegularFile(MakeFile("regular", "abc"));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "abc");
}

TEST(ReadRegularFileErrors, FifoWithAWriterThatNeverWrites) {
  std::string fifo = TempPath("silent_fifo");
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // A writer that keeps the FIFO open without writing: a read would block forever.
  int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  int writer = ::open(fifo.c_str(), O_WRONLY);
  ASSERT_GE(writer, 0);
  absl::StatusOr<std::string> got = ReadRegularFile(fifo);
  EXPECT_EQ(got.status().message(),
            absl::StrCat("cannot read '", fifo, "': it is not a regular file (a FIFO or pipe)"));
  ::close(writer);
  ::close(reader);
}

TEST(ReadRegularFileErrors, CharacterDevice) {
  absl::StatusOr<std::string> got = ReadRegularFile("/dev/zero");
  EXPECT_EQ(got.status().message(),
            "cannot read '/dev/zero': it is not a regular file (a character device)");
}

TEST(ReadRegularFileErrors, Directory) {
  absl::StatusOr<std::string> got = ReadRegularFile(::testing::TempDir());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(got.status().message()), ::testing::HasSubstr("it is a directory"));
}

// ---- ReadFileRange

TEST(ReadFileRange, Bytes) {
  absl::StatusOr<std::string> got = ReadFileRange(MakeFile("range", "0123456789"), 3, 4);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "3456");
}

TEST(ReadFileRangeErrors, PastTheEnd) {
  std::string path = MakeFile("short", "0123456789");
  absl::StatusOr<std::string> got = ReadFileRange(path, 8, 16);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(got.status().message(),
            absl::StrCat("'", path, "' has 10 bytes, fewer than offset 8 + length 16"));
}

TEST(ReadFileRangeErrors, OffsetPastTheEndDoesNotOverflow) {
  std::string path = MakeFile("short2", "0123456789");
  absl::StatusOr<std::string> got = ReadFileRange(path, 5, INT64_MAX);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(got.status().message(), HasSubstr("fewer than offset 5 + length"));
}

TEST(ReadFileRangeErrors, Negative) {
  absl::StatusOr<std::string> got = ReadFileRange(MakeFile("neg", "01"), -1, 1);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr("negative offset -1 or length 1"));
}

TEST(ReadFileRangeErrors, Fifo) {
  std::string fifo = TempPath("fifo2");
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  absl::StatusOr<std::string> got = ReadFileRange(fifo, 0, 4);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(got.status().message(),
            absl::StrCat("cannot read '", fifo, "': it is not a regular file (a FIFO or pipe)"));
}

TEST(ReadFileRangeErrors, Directory) {
  std::string dir = TempPath("dir2");
  ::mkdir(dir.c_str(), 0755);
  absl::StatusOr<std::string> got = ReadFileRange(dir, 0, 0);
  EXPECT_EQ(got.status().message(),
            absl::StrCat("cannot read '", dir, "': it is a directory, not a file"));
}

TEST(ReadFileRangeErrors, CharacterDevice) {
  absl::StatusOr<std::string> got = ReadFileRange("/dev/zero", 0, 4);
  EXPECT_EQ(got.status().message(),
            "cannot read '/dev/zero': it is not a regular file (a character device)");
}

}  // namespace
}  // namespace coil

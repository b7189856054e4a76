// CheckDataPath and ReadDataFile: one expected-error test per rule.
#include "ir/io/data_path.h"

#include <sys/stat.h>

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace coil {
namespace {

std::string Dir() {
  std::string dir = absl::StrCat(::testing::TempDir(), "/data_path_test");
  ::mkdir(dir.c_str(), 0755);
  ::mkdir(absl::StrCat(dir, "/sub").c_str(), 0755);
  std::ofstream(dir + "/w.bin", std::ios::binary) << "0123456789";
  std::ofstream(dir + "/sub/v.bin", std::ios::binary) << "abcdef";
  return dir;
}

TEST(CheckDataPath, Accepted) {
  for (const char* p : {"w.bin", "sub/v.bin", "./w.bin", "a..b", "..w", "sub/..x/y"}) {
    EXPECT_TRUE(CheckDataPath(p).ok()) << p;
  }
}

TEST(ReadDataFile, InsideTheFolder) {
  absl::StatusOr<std::string> got = ReadDataFile(Dir(), "sub/v.bin", 2, 3);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "cde");
}

// ---- expected errors

TEST(CheckDataPathErrors, Absolute) {
  absl::Status s = CheckDataPath("/etc/passwd");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "external data path '/etc/passwd' must be relative to the model's folder");
}

TEST(CheckDataPathErrors, DotDot) {
  absl::Status s = CheckDataPath("../../../../../etc/passwd");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "external data path '../../../../../etc/passwd' must not contain '..' "
                         "(it would leave the model's folder)");
}

TEST(CheckDataPathErrors, DotDotInside) {
  EXPECT_EQ(CheckDataPath("sub/../../w.bin").message(),
            "external data path 'sub/../../w.bin' must not contain '..' (it would leave the "
            "model's folder)");
  EXPECT_FALSE(CheckDataPath("sub/..").ok());
}

TEST(CheckDataPathErrors, Empty) {
  EXPECT_EQ(CheckDataPath("").message(), "external data path is empty");
}

TEST(CheckDataPathErrors, NulByte) {
  EXPECT_EQ(CheckDataPath(std::string("w.bin\0/../x", 11)).message(),
            "external data path 'w.bin\\x00/../x' contains a NUL byte");
}

TEST(ReadDataFileErrors, RulesCheckedAtTheRead) {
  absl::StatusOr<std::string> got = ReadDataFile(Dir(), "../data_path_test/w.bin", 0, 1);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), ::testing::HasSubstr("must not contain '..'"));
  got = ReadDataFile(Dir(), "/etc/passwd", 0, 1);
  EXPECT_THAT(got.status().message(), ::testing::HasSubstr("must be relative"));
}

TEST(ReadDataFileErrors, Directory) {
  absl::StatusOr<std::string> got = ReadDataFile(Dir(), "sub", 0, 1);
  EXPECT_EQ(got.status().message(),
            absl::StrCat("cannot read '", Dir(), "/sub': it is a directory, not a file"));
}

TEST(ReadDataFileErrors, TooShort) {
  absl::StatusOr<std::string> got = ReadDataFile(Dir(), "w.bin", 4, 16);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(got.status().message(),
            absl::StrCat("'", Dir(), "/w.bin' has 10 bytes, fewer than offset 4 + length 16"));
}

}  // namespace
}  // namespace coil

// LoadNamed: reads `name dim... : value...` lines; a missing file or a line whose values do not
// fill its shape is an error naming the file and line.
#include "tests/training/gpt_training_data.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace coil::training_data {
namespace {

std::string Write(const std::string& name, const std::string& text) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(GptTrainingDataTest, ReadsShapesAndValues) {
  absl::StatusOr<std::map<std::string, Named>> d =
      LoadNamed(Write("ok.txt", "w 2 3 : 1 2 3 4 5 6\nloss : 0.5\n"));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->at("w").shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(d->at("w").values.back(), 6);
  EXPECT_EQ(d->at("loss").values, (std::vector<double>{0.5}));
}

TEST(GptTrainingDataTest, ValuesThatDoNotFillTheShapeAreAnError) {
  const std::string path = Write("short.txt", "w 2 3 : 1 2 3 4 5 6\nb 4 : 1 2 3\n");
  absl::StatusOr<std::map<std::string, Named>> d = LoadNamed(path);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(), path + ":2: 'b' has 3 values for 4 elements");
}

TEST(GptTrainingDataTest, ABadDimensionIsAnError) {
  const std::string path = Write("dim.txt", "w 2 x : 1 2\n");
  absl::StatusOr<std::map<std::string, Named>> d = LoadNamed(path);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(), path + ":1: 'w' has a bad dimension 'x'");
}

TEST(GptTrainingDataTest, AMissingFileIsAnError) {
  absl::StatusOr<std::map<std::string, Named>> d = LoadNamed("/nonexistent/data.txt");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(), "cannot read /nonexistent/data.txt");
}

}  // namespace
}  // namespace coil::training_data

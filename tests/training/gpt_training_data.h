// The data gpt_training.py writes (torch 1.13's initial weights of the GPT-style decoder, the
// tokens and targets, and each training step's loss) as text lines `name dim... : value...`,
// read back for gpt_training_test and the main job's training section (tools/main_job).
#ifndef COIL_TESTS_TRAINING_GPT_TRAINING_DATA_H_
#define COIL_TESTS_TRAINING_GPT_TRAINING_DATA_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace coil::training_data {

struct Named {
  std::vector<int64_t> shape;
  std::vector<double> values;
};

// Every line of `path` by name. Errors: the file cannot be read, or a line is malformed
// (its number of values does not match its shape), naming the line.
absl::StatusOr<std::map<std::string, Named>> LoadNamed(const std::string& path);

}  // namespace coil::training_data

#endif  // COIL_TESTS_TRAINING_GPT_TRAINING_DATA_H_

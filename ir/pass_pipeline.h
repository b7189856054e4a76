// PassPipeline: a named, ordered list of passes over one IR, run with the verifier before the
// first pass and after each one, per-pass wall time and changed-flag, and text dumps of the
// passes whose qualified name ("pipeline.pass") matches a pattern. XLA's HloPassPipeline is
// the model. Every stage's pass order is written once, as one of these, and tests run the same
// object production runs.
//
//   PassPipeline<Graph> p("prims", {.verify = Verify, .print = PrintGraph});
//   p.Add("functionalize", Functionalize).Add("decompose", Decompose);
//   PassPipelineOptions options{.dump_pattern = "prims\\..*"};
//   std::vector<PassRecord> records;
//   absl::StatusOr<bool> changed = p.Run(graph, options, &records);
//
// One pass signature across the project: `absl::StatusOr<bool> Pass(IR&)`, the bool saying
// whether the IR changed. Errors: a pass's error keeps its code and is prefixed with
// "pipeline.pass: "; an input that does not verify is InvalidArgument ("the input to
// pipeline 'prims' does not verify: ..."); IR that stops verifying after a pass is a compiler
// bug, InternalError naming the pass (or, verifying at the end only, the passes that ran); a
// dump pattern that is not a valid regular expression is InvalidArgument.
//
// Verification points: tests and debug builds verify after every pass; optimized (NDEBUG)
// builds verify the input and the pipeline's result only (kVerifyEachPassByDefault): on a
// 100k-node graph the per-pass verifiers were about a quarter of the compile's CPU time
// (docs/benchmarks.md, "Scheduling time against graph size"), and a broken IR is still caught
// before it leaves the pipeline. The result is not verified again when no pass changed it (a
// pass must say so truthfully; tests verify after every pass, where a lie is caught), and a
// caller that has just verified the input itself passes verify_input = false.
#ifndef COIL_IR_PASS_PIPELINE_H_
#define COIL_IR_PASS_PIPELINE_H_

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ir/check.h"

namespace coil {

// One pass's run, for the CompileReport (proto::PassRun) and `coil compile` output.
struct PassRecord {
  std::string pipeline;
  std::string pass;
  double seconds = 0;
  bool changed = false;
  std::string dump;  // the IR as text after the pass; empty unless its name matched
};

// Whether PassPipelineOptions verify after every pass by default: yes in tests and debug builds,
// no (input and result only) in optimized builds.
#ifdef NDEBUG
inline constexpr bool kVerifyEachPassByDefault = false;
#else
inline constexpr bool kVerifyEachPassByDefault = true;
#endif

struct PassPipelineOptions {
  // The verifier on the input and on the result. On by default; a driver may turn it off for
  // speed (callers then check their input themselves, as BuildSchedule does).
  bool verify = true;
  // With `verify`: verify after every pass as well, so a pass that breaks the IR is named.
  // Off: the IR is verified after the last pass only.
  bool verify_each_pass = kVerifyEachPassByDefault;
  // With `verify`: verify the input too. A caller turns it off only for IR it has just verified
  // itself, unchanged since (the compile driver: the captured graph it checked, the previous
  // pipeline's verified result), so a 100k-node graph is not verified twice in a row.
  bool verify_input = true;
  // ECMAScript regular expression matched against "pipeline.pass"; a matching pass's IR is
  // printed into its record after it runs. Empty: no dumps. The driver fills it from its
  // options or COIL_DUMP (passes never read the environment).
  std::string dump_pattern;
};

// Whether `qualified_name` ("pipeline.pass") matches `pattern` (empty: never). Errors: an
// invalid regular expression (InvalidArgument naming it).
absl::StatusOr<bool> DumpPatternMatches(const std::string& pattern,
                                        const std::string& qualified_name);

template <typename IR>
class PassPipeline {
 public:
  using Pass = std::function<absl::StatusOr<bool>(IR&)>;
  struct Hooks {
    std::function<absl::Status(const IR&)> verify;  // required
    std::function<std::string(const IR&)> print;    // for dumps; may be empty
  };

  PassPipeline(std::string name, Hooks hooks) : name_(std::move(name)), hooks_(std::move(hooks)) {}

  // Appends a pass. Names are unique within a pipeline (a repeated name is a compiler bug).
  PassPipeline& Add(std::string pass_name, Pass pass) {
    for (const Entry& e : passes_) {
      COIL_CHECK(e.name != pass_name) << "pass " << pass_name << " added twice to " << name_;
    }
    passes_.push_back(Entry{std::move(pass_name), std::move(pass)});
    return *this;
  }

  const std::string& name() const { return name_; }
  std::vector<std::string> PassNames() const {
    std::vector<std::string> names;
    for (const Entry& e : passes_) names.push_back(e.name);
    return names;
  }

  // Runs every pass in order on `ir`; appends one record per pass to `records` (may be null).
  // Returns whether any pass changed the IR.
  absl::StatusOr<bool> Run(IR& ir, const PassPipelineOptions& options = {},
                           std::vector<PassRecord>* records = nullptr) const {
    if (options.verify && options.verify_input) {
      if (absl::Status s = hooks_.verify(ir); !s.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("the input to pipeline '", name_, "' does not verify: ", s.message()));
      }
    }
    bool any = false;
    for (const Entry& e : passes_) {
      const std::string qualified = absl::StrCat(name_, ".", e.name);
      absl::StatusOr<bool> dump = DumpPatternMatches(options.dump_pattern, qualified);
      if (!dump.ok()) return dump.status();
      const auto start = std::chrono::steady_clock::now();
      absl::StatusOr<bool> changed = e.pass(ir);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!changed.ok()) {
        return absl::Status(changed.status().code(),
                            absl::StrCat(qualified, ": ", changed.status().message()));
      }
      if (options.verify && options.verify_each_pass) {
        if (absl::Status s = hooks_.verify(ir); !s.ok()) {
          return absl::InternalError(absl::StrCat("pass ", qualified,
                                                  " broke the IR (a compiler bug): ", s.message()));
        }
      }
      any = any || *changed;
      if (records != nullptr) {
        PassRecord r{name_, e.name, seconds, *changed, ""};
        if (*dump && hooks_.print) r.dump = hooks_.print(ir);
        records->push_back(std::move(r));
      }
    }
    // A pipeline whose passes all left the IR unchanged returns its input, which was verified
    // above (or vouched for by the caller: verify_input).
    if (options.verify && !options.verify_each_pass && any) {
      if (absl::Status s = hooks_.verify(ir); !s.ok()) {
        std::string names;
        for (const Entry& e : passes_) absl::StrAppend(&names, names.empty() ? "" : ", ", e.name);
        return absl::InternalError(absl::StrCat(
            "pipeline '", name_, "' broke the IR (a compiler bug) in one of its passes (", names,
            options.verify_input ? "" : ", or before them: its input was not verified",
            "; verified after the last one only: verify_each_pass names the pass): ",
            s.message()));
      }
    }
    return any;
  }

 private:
  struct Entry {
    std::string name;
    Pass pass;
  };
  std::string name_;
  Hooks hooks_;
  std::vector<Entry> passes_;
};

// Times a step that is not a pass (it changes the IR's type, e.g. inductor's lowering of a
// Graph into a Program) and records it like one, so every second of a stage is accounted for.
template <typename Fn>
auto RunRecordedStep(const std::string& pipeline, const std::string& step,
                     std::vector<PassRecord>* records, Fn&& fn) {
  const auto start = std::chrono::steady_clock::now();
  auto result = fn();
  if (records != nullptr) {
    records->push_back(PassRecord{
        pipeline, step,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), true,
        ""});
  }
  return result;
}

}  // namespace coil

#endif  // COIL_IR_PASS_PIPELINE_H_

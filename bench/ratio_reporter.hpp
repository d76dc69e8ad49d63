// A Google Benchmark reporter that also prints, at the end of the run, each benchmark's
// time as a ratio of its group's baseline ("group/name" vs "group/<baseline>"), so one run
// shows how far tablio is from the limit it is measured against.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace bench {

class ratio_reporter : public benchmark::ConsoleReporter {
 public:
  explicit ratio_reporter(std::string baseline) : baseline_(std::move(baseline)) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      // With repetitions, the fastest repetition stands for the benchmark: on a shared
      // machine noise only ever adds time.
      bool fastest = run.run_type == Run::RT_Aggregate && run.aggregate_name == "min";
      if (run.run_type != Run::RT_Iteration && !fastest) continue;
      std::string name = run.run_name.function_name;
      auto slash = name.find('/');
      if (slash == std::string::npos) continue;
      std::string group = name.substr(0, slash);
      std::string who = name.substr(slash + 1);
      auto& entries = times_[group];
      std::erase_if(entries, [&](const auto& e) { return e.first == who; });
      entries.emplace_back(who, run.GetAdjustedRealTime());
    }
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\nratios to '%s' in each group (lower is faster; 1.00 = the limit):\n", baseline_.c_str());
    for (const auto& [group, entries] : times_) {
      double base = 0;
      for (const auto& [who, t] : entries)
        if (who.rfind(baseline_, 0) == 0) base = t;
      if (base == 0) continue;
      for (const auto& [who, t] : entries)
        std::printf("  %-28s %-28s %6.2fx\n", group.c_str(), who.c_str(), t / base);
    }
  }

 private:
  std::string baseline_;
  std::map<std::string, std::vector<std::pair<std::string, double>>> times_;
};

// Adds the "min" statistic the ratios use; apply to every benchmark.
inline void fastest_of_repetitions(benchmark::internal::Benchmark* b) {
  b->ComputeStatistics("min", [](const std::vector<double>& v) {
     return *std::min_element(v.begin(), v.end());
   })->Unit(benchmark::kMillisecond);
}

// main(): run every benchmark with the ratio reporter. Unless told otherwise, each one is
// repeated with the order shuffled and its fastest run reported: a shared machine is noisy, and
// running the limit right before or after a contender biases the ratio.
inline int run(int argc, char** argv, const std::string& baseline) {
  std::vector<char*> args(argv, argv + argc);
  bool repetitions_given = false;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("--benchmark_repetitions", 0) == 0) repetitions_given = true;
  static char repetitions[] = "--benchmark_repetitions=7";
  static char interleave[] = "--benchmark_enable_random_interleaving=true";
  static char aggregates[] = "--benchmark_report_aggregates_only=true";
  if (!repetitions_given) args.insert(args.end(), {repetitions, interleave, aggregates});
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  ratio_reporter reporter(baseline);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}

}  // namespace bench

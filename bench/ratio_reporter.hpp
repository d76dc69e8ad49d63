// A Google Benchmark reporter that also prints, at the end of the run, each benchmark's
// time as a ratio of its group's baseline ("group/name" vs "group/<baseline>"), so one run
// shows how far tablio is from the limit it is measured against.
#pragma once

#include <benchmark/benchmark.h>

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
      if (run.run_type != Run::RT_Iteration || run.error_occurred) continue;
      std::string name = run.benchmark_name();
      auto slash = name.find('/');
      if (slash == std::string::npos) continue;
      std::string group = name.substr(0, slash);
      std::string who = name.substr(slash + 1);
      times_[group].emplace_back(who, run.GetAdjustedRealTime());
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

// main(): run every benchmark with the ratio reporter.
inline int run(int argc, char** argv, const std::string& baseline) {
  benchmark::Initialize(&argc, argv);
  ratio_reporter reporter(baseline);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}

}  // namespace bench

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "base/error.hpp"
#include "config/config.hpp"

namespace xfer {
namespace {

constexpr std::uint64_t kMemory = 16ULL << 30;

CommandLine parse(std::vector<const char*> args, std::map<std::string, std::string> env = {}) {
  args.insert(args.begin(), "xferbench");
  return parse_command_line(static_cast<int>(args.size()), args.data(),
                            [env](const char* name) -> const char* {
                              auto it = env.find(name);
                              return it == env.end() ? nullptr : it->second.c_str();
                            });
}

std::string usage_error(std::vector<const char*> args,
                        std::map<std::string, std::string> env = {}) {
  try {
    parse(args, env);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(CommandLine, DefaultsAreTheDocumentedOnes) {
  const Config c = parse({}).config;
  EXPECT_EQ(c.sizes.size(), 28u);
  EXPECT_EQ(c.warmup, 5);
  EXPECT_EQ(c.cuda_aware, CudaAwareMode::Auto);
  EXPECT_FALSE(c.gpus.all);
  EXPECT_EQ(c.gpus.pairs, (std::vector<std::pair<int, int>>{{0, 1}}));
  EXPECT_EQ(c.out_format, "json");
  EXPECT_TRUE(c.out_path.empty());
}

TEST(CommandLine, OurFlagsAreTakenOthersPassToGoogleBenchmark) {
  const CommandLine cl = parse({"--xfer_sizes=8,16", "--benchmark_filter=mpi", "--xfer_warmup=2",
                                "--benchmark_out=r.json", "--benchmark_out_format=csv"});
  EXPECT_EQ(cl.config.sizes, (std::vector<std::uint64_t>{8, 16}));
  EXPECT_EQ(cl.config.warmup, 2);
  EXPECT_EQ(cl.config.out_path, "r.json");
  EXPECT_EQ(cl.config.out_format, "csv");
  EXPECT_EQ(cl.config.filter, "mpi");
  // Google Benchmark never sees --benchmark_out (rank 0 alone writes that file) nor the filter
  // (xferbench registers only the rows it selected, selection.hpp), gets the colour xferbench
  // chose, a tiny min time (each row's own loop decides how long it runs) and never shuffles
  // (the runner orders the rows).
  ASSERT_EQ(cl.benchmark_args.size(), 5u);
  EXPECT_EQ(cl.benchmark_args[0], "xferbench");
  EXPECT_EQ(cl.benchmark_args[1], "--benchmark_color=auto");
  EXPECT_EQ(cl.benchmark_args[2].rfind("--benchmark_min_time=0.000001", 0), 0u);
  EXPECT_EQ(cl.benchmark_args[3], "--benchmark_filter=.");
  EXPECT_EQ(cl.benchmark_args[4], "--benchmark_enable_random_interleaving=false");
}

std::string color_arg(std::vector<const char*> args, std::map<std::string, std::string> env = {}) {
  const auto all = parse(args, env).benchmark_args;
  const auto it = std::find_if(all.begin(), all.end(), [](const std::string& a) {
    return a.rfind("--benchmark_color", 0) == 0;
  });
  EXPECT_EQ(
      std::count_if(all.begin(), all.end(),
                    [](const std::string& a) { return a.rfind("--benchmark_color", 0) == 0; }),
      1);
  return it == all.end() ? "(none)" : *it;
}

TEST(Color, NoneUnderALauncherUnlessAskedFor) {
  // Open MPI gives rank 0 a terminal even when mpirun's output goes to a file.
  for (const char* launcher : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    EXPECT_EQ(color_arg({}, {{launcher, "0"}}), "--benchmark_color=false") << launcher;
    EXPECT_EQ(color_arg({"--benchmark_color=true"}, {{launcher, "0"}}), "--benchmark_color=true");
  }
  EXPECT_EQ(color_arg({"--benchmark_color=auto"}, {{"OMPI_COMM_WORLD_RANK", "1"}}),
            "--benchmark_color=false");
  // Without a launcher, Google Benchmark asks whether stdout is a terminal.
  EXPECT_EQ(color_arg({}), "--benchmark_color=auto");
  EXPECT_EQ(color_arg({"--benchmark_color=no"}), "--benchmark_color=false");
  EXPECT_EQ(color_arg({"--benchmark_color"}), "--benchmark_color=true");
  // The last one given wins (tools/run puts its own before the user's).
  EXPECT_EQ(color_arg({"--benchmark_color=true", "--benchmark_color=false"}),
            "--benchmark_color=false");
}

TEST(Color, NoColorIsHonouredUnlessColourIsAskedForExplicitly) {
  EXPECT_EQ(color_arg({}, {{"NO_COLOR", "1"}}), "--benchmark_color=false");
  EXPECT_EQ(color_arg({"--benchmark_color=auto"}, {{"NO_COLOR", "yes"}}),
            "--benchmark_color=false");
  EXPECT_EQ(color_arg({}, {{"NO_COLOR", ""}}), "--benchmark_color=auto");  // empty: not set
  EXPECT_EQ(color_arg({"--benchmark_color=true"}, {{"NO_COLOR", "1"}}), "--benchmark_color=true");
  EXPECT_EQ(color_arg({}, {{"NO_COLOR", "1"}, {"BENCHMARK_COLOR", "true"}}),
            "--benchmark_color=true");
}

TEST(Color, BadValueNamesTheFlagAndTheRanksNeedNotAgreeOnIt) {
  EXPECT_EQ(usage_error({"--benchmark_color=maybe"}),
            "--benchmark_color='maybe': expected auto, true or false");
  EXPECT_EQ(usage_error({}, {{"BENCHMARK_COLOR", "sometimes"}}),
            "BENCHMARK_COLOR='sometimes': expected auto, true or false");
  // Only rank 0 prints: a rank whose environment says otherwise still runs with the rest.
  EXPECT_EQ(
      settings_fingerprint(parse({}, {{"OMPI_COMM_WORLD_RANK", "0"}})),
      settings_fingerprint(parse({"--benchmark_color=true"}, {{"OMPI_COMM_WORLD_RANK", "1"}})));
}

TEST(CommandLine, EnvironmentIsTheFallbackAndTheFlagWins) {
  EXPECT_EQ(parse({}, {{"XFER_SIZES", "1K"}}).config.sizes, (std::vector<std::uint64_t>{1024}));
  EXPECT_EQ(parse({"--xfer_sizes=8"}, {{"XFER_SIZES", "1K"}}).config.sizes,
            (std::vector<std::uint64_t>{8}));
  EXPECT_EQ(parse({}, {{"BENCHMARK_OUT", "e.json"}}).config.out_path, "e.json");
}

TEST(CommandLine, BadValuesNameTheFlagAndTheExpectedForm) {
  EXPECT_NE(usage_error({"--xfer_sizes=abc"}).find("--xfer_sizes='abc'"), std::string::npos);
  EXPECT_NE(usage_error({"--xfer_warmup=-1"}).find("--xfer_warmup='-1': expected a whole number"),
            std::string::npos);
  EXPECT_NE(usage_error({"--xfer_timeout=0"}).find("--xfer_timeout"), std::string::npos);
  EXPECT_NE(usage_error({"--xfer_cuda_aware=1"}).find("expected auto, yes or no"),
            std::string::npos);
  EXPECT_NE(usage_error({"--xfer_sizes"}).find("expected --xfer_sizes=LIST"), std::string::npos);
  EXPECT_NE(usage_error({"--xfer_nope=1"}).find("unknown flag --xfer_nope"), std::string::npos);
  EXPECT_NE(usage_error({}, {{"XFER_WARMUP", "x"}}).find("XFER_WARMUP"), std::string::npos);
}

// A fleet measures a latency size and a bandwidth size unless told otherwise, and refuses what
// would say something else about its pairs.
TEST(CommandLine, FleetHasItsOwnSizesAndRefusesPairsAndMerge) {
  EXPECT_EQ(parse({"--xfer_fleet=2"}).config.sizes,
            (std::vector<std::uint64_t>{8, std::uint64_t{4} << 20}));
  EXPECT_EQ(parse({"--xfer_fleet=1", "--xfer_sizes=1K"}).config.sizes,
            (std::vector<std::uint64_t>{1024}));
  EXPECT_EQ(parse({"--xfer_fleet=2"}).config.fleet_passes, 2);
  EXPECT_NE(parse({}).config.sizes.size(), 2u);  // no fleet: the whole sweep
  EXPECT_NE(usage_error({"--xfer_fleet=0"}).find("--xfer_fleet='0': expected a whole number from "
                                                 "1 to 4"),
            std::string::npos);
  EXPECT_NE(usage_error({"--xfer_fleet=1", "--xfer_pairs=halves"}).find("--xfer_pairs=halves"),
            std::string::npos);
  EXPECT_NE(usage_error({"--xfer_fleet_rounds=r.json", "--xfer_merge=a.json"})
                .find("--xfer_fleet_rounds measures; --xfer_merge merges"),
            std::string::npos);
  EXPECT_NE(usage_error({"--xfer_fleet=1", "--xfer_fleet_rounds=r.json"}).find("give one"),
            std::string::npos);
  // The ranks must agree on a fleet; without one the settings say what they said before.
  EXPECT_NE(settings_fingerprint(parse({"--xfer_fleet=1"})),
            settings_fingerprint(parse({"--xfer_fleet=2"})));
  EXPECT_EQ(settings_fingerprint(parse({})).find("fleet"), std::string::npos);
}

TEST(FailPoint, CallSizeAndRank) {
  const FailPoint all = parse({"--xfer_test_fail=cudaMemcpyAsync@1MiB#1"}).config.test_fail;
  EXPECT_EQ(all.call, "cudaMemcpyAsync");
  EXPECT_EQ(all.bytes, 1u << 20);
  EXPECT_EQ(all.rank, 1);
  const FailPoint bare = parse({}, {{"XFER_TEST_FAIL", "fault"}}).config.test_fail;
  EXPECT_EQ(bare.call, "fault");
  EXPECT_EQ(bare.bytes, 0u);  // anywhere
  EXPECT_EQ(bare.rank, -1);   // every rank
  EXPECT_TRUE(parse({}).config.test_fail.call.empty());
  for (const char* bad : {"--xfer_test_fail=", "--xfer_test_fail=@1K", "--xfer_test_fail=a b",
                          "--xfer_test_fail=cudaMalloc#x", "--xfer_test_fail=cudaMalloc@lots",
                          "--xfer_test_fail=cudaMalloc#"}) {
    const std::string error = usage_error({bad});
    EXPECT_NE(error.find("--xfer_test_fail"), std::string::npos) << bad << ": " << error;
  }
}

TEST(FailPoint, HitsOnlyTheNamedCallInRowsOfItsSizeOnItsRank) {
  arm_fail_point(parse_fail_point("cudaMalloc@4K#1", "--xfer_test_fail"), 0);
  EXPECT_FALSE(fail_point_hit("cudaMalloc(&data_, bytes)"));  // armed for rank 1 only
  arm_fail_point(parse_fail_point("cudaMalloc@4K#1", "--xfer_test_fail"), 1);
  EXPECT_FALSE(fail_point_hit("cudaMalloc(&data_, bytes)"));  // not in a 4 KiB row
  set_current_row_bytes(4096);
  EXPECT_TRUE(fail_point_hit("cudaMalloc(&data_, bytes)"));
  EXPECT_FALSE(fail_point_hit("cudaMallocHost(&p, bytes)"));  // the name, not a prefix of one
  EXPECT_FALSE(fail_point_hit("cudaMemcpyAsync(a, b, n, k, s)"));
  set_current_row_bytes(0);
  disarm_fail_point();
  EXPECT_FALSE(fail_point_hit("cudaMalloc(&data_, bytes)"));
}

TEST(GpuPairs, ListsAndAll) {
  EXPECT_EQ(parse_gpu_pairs("0:1,1:0", "--g").pairs,
            (std::vector<std::pair<int, int>>{{0, 1}, {1, 0}}));
  const GpuPairs all = parse_gpu_pairs("all", "--g");
  EXPECT_TRUE(all.all);
  EXPECT_EQ(expand_pairs(all, 3).size(), 6u);
  EXPECT_EQ(expand_pairs(all, 1).size(), 0u);
  EXPECT_THROW(parse_gpu_pairs("0-1", "--g"), UsageError);
  EXPECT_THROW(parse_gpu_pairs("0:x", "--g"), UsageError);
  EXPECT_THROW(parse_gpu_pairs("", "--g"), UsageError);
}

TEST(Memory, TheLargestMessageMustFitTwiceInMemory) {
  EXPECT_EQ(check_memory(parse({"--xfer_sizes=8GiB"}).config, kMemory), "");
  const std::string refused = check_memory(parse({"--xfer_sizes=8,9GiB"}).config, kMemory);
  EXPECT_NE(refused.find("--xfer_sizes: 9 GiB needs two buffers"), std::string::npos) << refused;
  EXPECT_NE(refused.find("16 GiB"), std::string::npos) << refused;
}

TEST(MinTime, IsReadByXferbenchInEitherSpelling) {
  EXPECT_EQ(parse_min_time("--m", "0.5").seconds, 0.5);
  EXPECT_EQ(parse_min_time("--m", "0.5s").seconds, 0.5);
  EXPECT_EQ(parse_min_time("--m", "100x").messages, 100);
  EXPECT_EQ(parse_min_time("--m", "100x").seconds, 0);
  EXPECT_THROW(parse_min_time("--m", "soon"), UsageError);
  EXPECT_THROW(parse_min_time("--m", "0"), UsageError);
  EXPECT_THROW(parse_min_time("--m", ""), UsageError);
  const Config c = parse({"--benchmark_min_time=2s"}).config;
  EXPECT_EQ(c.precision.min_time_s, 2.0);
  EXPECT_EQ(parse({}, {{"BENCHMARK_MIN_TIME", "3"}}).config.precision.min_time_s, 3.0);
}

TEST(MinTime, GoogleBenchmarkGetsATinyOneSpelledForItsVersion) {
  EXPECT_EQ(benchmark_min_time_arg(1, 7), "--benchmark_min_time=0.000001");
  EXPECT_EQ(benchmark_min_time_arg(1, 8), "--benchmark_min_time=0.000001s");
  const auto args = parse({"--benchmark_min_time=2s"}).benchmark_args;
  EXPECT_EQ(
      std::count_if(args.begin(), args.end(),
                    [](const std::string& a) { return a.rfind("--benchmark_min_time", 0) == 0; }),
      1);
}

TEST(Precision, FlagsAndTheirLimits) {
  const Config c = parse({"--xfer_precision=0.5", "--xfer_max_time=2"}).config;
  EXPECT_EQ(c.precision.target_pct, 0.5);
  EXPECT_EQ(c.precision.max_time_s, 2.0);
  EXPECT_EQ(parse({}, {{"XFER_PRECISION", "3"}}).config.precision.target_pct, 3.0);
  EXPECT_NE(usage_error({"--xfer_precision=0"}).find("--xfer_precision"), std::string::npos);
  EXPECT_NE(usage_error({"--xfer_precision=tight"}).find("expected a percentage"),
            std::string::npos);
  EXPECT_NE(usage_error({"--xfer_max_time=-1"}).find("--xfer_max_time"), std::string::npos);
  EXPECT_NE(settings_fingerprint(parse({"--xfer_precision=2"})),
            settings_fingerprint(parse({"--xfer_precision=3"})));
}

TEST(Jobs, AutoFromTheFlagOrTheEnvironmentAndANumberOverridesIt) {
  const Config plain = parse({}).config;
  EXPECT_FALSE(plain.jobs_auto);
  EXPECT_EQ(plain.jobs, 1);
  EXPECT_TRUE(parse({"--xfer_jobs=auto"}).config.jobs_auto);
  EXPECT_TRUE(parse({}, {{"XFER_JOBS", "auto"}}).config.jobs_auto);
  const Config given = parse({"--xfer_jobs=5"}, {{"XFER_JOBS", "auto"}}).config;
  EXPECT_FALSE(given.jobs_auto);
  EXPECT_EQ(given.jobs, 5);
  EXPECT_NE(usage_error({"--xfer_jobs=many"})
                .find("--xfer_jobs='many': expected a whole number "
                      "from 1 to 64, or auto"),
            std::string::npos);
  EXPECT_NE(settings_fingerprint(parse({"--xfer_jobs=auto"})),
            settings_fingerprint(parse({"--xfer_jobs=1"})));
}

TEST(Jobs, AMaxTimeGivenByFlagOrEnvironmentIsKnownAsGiven) {
  // With --xfer_jobs=auto, the plan's row times apply only where no --xfer_max_time was given,
  // even one equal to the default.
  EXPECT_FALSE(parse({"--xfer_jobs=auto"}).config.max_time_given);
  EXPECT_TRUE(parse({"--xfer_jobs=auto", "--xfer_max_time=0.1"}).config.max_time_given);
  EXPECT_TRUE(parse({"--xfer_jobs=auto"}, {{"XFER_MAX_TIME", "0.1"}}).config.max_time_given);
  EXPECT_NE(settings_fingerprint(parse({"--xfer_jobs=auto", "--xfer_max_time=0.1"})),
            settings_fingerprint(parse({"--xfer_jobs=auto"})));
}

TEST(SettingsFingerprint, DiffersWhenWhatRunsDiffers) {
  const std::string base = settings_fingerprint(parse({"--xfer_sizes=8"}));
  EXPECT_EQ(base, settings_fingerprint(parse({"--xfer_sizes=8"})));
  EXPECT_NE(base, settings_fingerprint(parse({"--xfer_sizes=16"})));
  EXPECT_NE(base, settings_fingerprint(parse({"--xfer_sizes=8", "--benchmark_filter=mpi"})));
  EXPECT_NE(base, settings_fingerprint(parse({"--xfer_sizes=8"}, {{"XFER_WARMUP", "7"}})));
  // Where the file goes is rank 0's business alone.
  EXPECT_EQ(base, settings_fingerprint(parse({"--xfer_sizes=8", "--benchmark_out=x.json"})));
}

TEST(CommandLine, CorruptionInEveryVisitOrInOneRound) {
  const Config every = parse({"--xfer_test_corrupt=mpi_host"}).config;
  EXPECT_EQ(every.test_corrupt, "mpi_host");
  EXPECT_EQ(every.test_corrupt_round, -1);
  const Config one = parse({"--xfer_test_corrupt=mpi_host@2"}).config;
  EXPECT_EQ(one.test_corrupt, "mpi_host");
  EXPECT_EQ(one.test_corrupt_round, 2);
  EXPECT_NE(usage_error({"--xfer_test_corrupt=mpi_host@last"}).find("--xfer_test_corrupt"),
            std::string::npos);
  // Ranks told different rounds would fail different visits: they must not start.
  EXPECT_NE(settings_fingerprint(parse({"--xfer_test_corrupt=mpi_host@1"})),
            settings_fingerprint(parse({"--xfer_test_corrupt=mpi_host@2"})));
}

TEST(CommandLine, RequiredPathsMustBeKnownOnes) {
  // Which paths exist is the binary's business (bench/paths.hpp): checked after parsing.
  const std::vector<std::string> paths{"mpi_host", "nccl_sendrecv"};
  EXPECT_NO_THROW(check_required_paths(parse({"--xfer_require=mpi_host"}).config, paths));
  try {
    check_required_paths(parse({"--xfer_require=mpi_host,nope"}).config, paths);
    ADD_FAILURE() << "an unknown path was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--xfer_require: unknown path 'nope'; expected one of "
                                         "mpi_host, nccl_sendrecv"),
              std::string::npos)
        << e.what();
  }
}

TEST(CommandLine, RandomInterleavingFromFlagAndEnvironmentIsOursNotGoogleBenchmarks) {
  // The runner shuffles the rows the same way on every rank (runner.hpp); Google Benchmark's
  // own shuffle, different on every rank, stays off whatever the user asked.
  for (const CommandLine& cl : {parse({"--benchmark_enable_random_interleaving=true"}),
                                parse({"--benchmark_enable_random_interleaving"}),
                                parse({}, {{"BENCHMARK_ENABLE_RANDOM_INTERLEAVING", "1"}})}) {
    EXPECT_TRUE(cl.config.interleave);
    EXPECT_EQ(cl.benchmark_args.back(), "--benchmark_enable_random_interleaving=false");
  }
  EXPECT_FALSE(parse({"--benchmark_enable_random_interleaving=false"}).config.interleave);
  EXPECT_FALSE(parse({}).config.interleave);
  // It changes the order every rank runs in, so the ranks must agree on it.
  EXPECT_NE(settings_fingerprint(parse({})),
            settings_fingerprint(parse({"--benchmark_enable_random_interleaving=true"})));
}

}  // namespace
}  // namespace xfer

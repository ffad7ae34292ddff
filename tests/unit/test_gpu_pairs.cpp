// The one-process GPU copy paths without a GPU: which GPU pairs and variants run, which are
// skipped and why, the names rows get, and how batches are timed. Also what the CUDA layer
// says on a machine without a driver.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "config/config.hpp"
#include "gpu/copy_plan.hpp"
#include "gpu/cuda.hpp"
#include "gpu/devices.hpp"
#include "gpu_facts.hpp"

namespace xfer::gpu {
namespace {

using testing::facts;
using testing::names;
using testing::pairs;
GpuPairs default_pairs() { return GpuPairs{}; }

template <class Family>
const Skip* find_skip(const CopyPlan<Family>& plan, const std::string& path) {
  for (const auto& s : plan.skips) {
    if (s.path == path) return &s;
  }
  return nullptr;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(GpuFacts, SurviveTheBroadcastEncoding) {
  GpuFacts f = facts(3, {{0, 2}});
  const GpuFacts back = decode_facts(encode(f));
  EXPECT_EQ(back.devices, 3);
  EXPECT_EQ(back.can_access, f.can_access);
  EXPECT_TRUE(back.p2p(0, 1));
  EXPECT_FALSE(back.p2p(0, 2));
  EXPECT_TRUE(back.p2p(2, 0));
  EXPECT_FALSE(back.p2p(1, 1));
  EXPECT_FALSE(back.p2p(0, 3));  // out of range is "no", never a crash
  EXPECT_EQ(back.bus(1), "");    // not probed: no bus, no route (links/routes.hpp)

  // Rank 0's bus ids reach every rank: the copy paths declare them with their crossing.
  f.buses = {"00000000:00:06.0", "00000000:00:07.0", "00000000:00:08.0"};
  const GpuFacts with_buses = decode_facts(encode(f));
  EXPECT_EQ(with_buses.buses, f.buses);
  EXPECT_EQ(with_buses.bus(2), "00000000:00:08.0");
  EXPECT_EQ(with_buses.bus(3), "");
  EXPECT_THROW(decode_facts("2 1111 a,b,c why"), Error);  // three buses for two GPUs

  GpuFacts none;
  none.why_none =
      "no GPU or no NVIDIA driver on this machine (cudaGetDeviceCount: "
      "cudaErrorInsufficientDriver)";
  const GpuFacts none_back = decode_facts(encode(none));
  EXPECT_EQ(none_back.devices, 0);
  EXPECT_EQ(none_back.why_none, none.why_none);
  EXPECT_THROW(decode_facts("2 101 "), Error);
  EXPECT_THROW(decode_facts("garbage"), Error);
}

TEST(MemcpyPeerPlan, NoDeviceSkipsTheWholePathWithTheDriversReason) {
  GpuFacts none;
  none.why_none =
      "no GPU or no NVIDIA driver on this machine (cudaGetDeviceCount: "
      "cudaErrorInsufficientDriver)";
  const auto plan = plan_memcpy_peer(default_pairs(), none);
  EXPECT_TRUE(plan.families.empty());
  ASSERT_EQ(plan.skips.size(), 1u);
  EXPECT_EQ(plan.skips[0].path, "memcpy_peer");
  EXPECT_EQ(plan.skips[0].reason, none.why_none);
}

TEST(MemcpyPeerPlan, OneGpuSkipsTheWholePath) {
  const auto plan = plan_memcpy_peer(default_pairs(), facts(1));
  EXPECT_TRUE(plan.families.empty());
  ASSERT_EQ(plan.skips.size(), 1u);
  EXPECT_EQ(plan.skips[0].path, "memcpy_peer");
  EXPECT_EQ(plan.skips[0].reason, "needs 2 GPUs; only 1 CUDA device is visible");
}

TEST(MemcpyPeerPlan, DefaultPairRunsEveryVariantInVariantMajorOrder) {
  const auto plan = plan_memcpy_peer(default_pairs(), facts(2));
  EXPECT_TRUE(plan.skips.empty());
  EXPECT_EQ(names(plan), (std::vector<std::string>{
                             "memcpy_peer/p2p:on/dir:uni/pair:0to1",
                             "memcpy_peer/p2p:on/dir:bi/pair:0to1",
                             "memcpy_peer/p2p:on/dir:uni/timing:latency/pair:0to1",
                             "memcpy_peer/p2p:off/dir:uni/pair:0to1",
                             "memcpy_peer/p2p:off/dir:bi/pair:0to1",
                             "memcpy_peer/p2p:off/dir:uni/timing:latency/pair:0to1",
                         }));
}

TEST(MemcpyPeerPlan, ExplicitPairsKeepTheirOrderAndDropRepeats) {
  const auto plan = plan_memcpy_peer(pairs("1:0,0:1,1:0"), facts(2));
  const auto n = names(plan);
  ASSERT_EQ(n.size(), 12u);
  EXPECT_EQ(n[0], "memcpy_peer/p2p:on/dir:uni/pair:1to0");
  EXPECT_EQ(n[1], "memcpy_peer/p2p:on/dir:uni/pair:0to1");
  EXPECT_EQ(n[2], "memcpy_peer/p2p:on/dir:bi/pair:1to0");
}

TEST(MemcpyPeerPlan, AllMeansEveryOrderedPair) {
  const auto plan = plan_memcpy_peer(pairs("all"), facts(4));
  EXPECT_EQ(plan.families.size(), 6u * 12u);
  EXPECT_TRUE(plan.skips.empty());
  for (const auto& f : plan.families) EXPECT_NE(f.src, f.dst);
}

TEST(MemcpyPeerPlan, PairWithoutPeerAccessSkipsP2pOnAndKeepsTheStagedCopy) {
  const auto plan = plan_memcpy_peer(pairs("0:1"), facts(2, {{0, 1}, {1, 0}}));
  EXPECT_EQ(names(plan), (std::vector<std::string>{
                             "memcpy_peer/p2p:off/dir:uni/pair:0to1",
                             "memcpy_peer/p2p:off/dir:bi/pair:0to1",
                             "memcpy_peer/p2p:off/dir:uni/timing:latency/pair:0to1",
                         }));
  const Skip* skip = find_skip(plan, "memcpy_peer/p2p:on/pair:0to1");
  ASSERT_NE(skip, nullptr);
  EXPECT_TRUE(contains(skip->reason, "cudaDeviceCanAccessPeer")) << skip->reason;
  EXPECT_TRUE(contains(skip->reason, "GPU 0 cannot access GPU 1")) << skip->reason;
  EXPECT_EQ(find_skip(plan, "memcpy_peer"), nullptr);  // the path itself still runs
}

TEST(MemcpyPeerPlan, OneWayPeerAccessSkipsOnlyTheBidirectionalP2pRow) {
  const auto plan = plan_memcpy_peer(pairs("0:1"), facts(2, {{1, 0}}));
  const auto n = names(plan);
  EXPECT_NE(std::find(n.begin(), n.end(), "memcpy_peer/p2p:on/dir:uni/pair:0to1"), n.end());
  EXPECT_EQ(std::find(n.begin(), n.end(), "memcpy_peer/p2p:on/dir:bi/pair:0to1"), n.end());
  ASSERT_NE(find_skip(plan, "memcpy_peer/p2p:on/dir:bi/pair:0to1"), nullptr);
}

TEST(MemcpyPeerPlan, MissingGpuAndSameGpuPairsAreSkippedOneByOne) {
  const auto plan = plan_memcpy_peer(pairs("0:5,1:1,1:0"), facts(2));
  EXPECT_EQ(plan.families.size(), 6u);
  const Skip* missing = find_skip(plan, "memcpy_peer/pair:0to5");
  ASSERT_NE(missing, nullptr);
  EXPECT_EQ(missing->reason,
            "GPU 5 does not exist here (2 CUDA devices are visible, numbered from 0)");
  const Skip* same = find_skip(plan, "memcpy_peer/pair:1to1");
  ASSERT_NE(same, nullptr);
  EXPECT_TRUE(contains(same->reason, "same GPU")) << same->reason;
}

TEST(MemcpyPeerPlan, NothingRunnableSkipsThePathSoRequireCanFail) {
  const auto plan = plan_memcpy_peer(pairs("0:7"), facts(2));
  EXPECT_TRUE(plan.families.empty());
  EXPECT_NE(find_skip(plan, "memcpy_peer"), nullptr);
}

TEST(HostStagingPlan, NoDeviceSkipsWithTheReason) {
  GpuFacts none;
  none.why_none = "no GPU visible";
  const auto plan = plan_host_staging(default_pairs(), none);
  EXPECT_TRUE(plan.families.empty());
  ASSERT_EQ(plan.skips.size(), 1u);
  EXPECT_EQ(plan.skips[0].path, "host_staging");
  EXPECT_EQ(plan.skips[0].reason, "no GPU visible");
}

TEST(HostStagingPlan, OneGpuStagesBackToItself) {
  const auto plan = plan_host_staging(default_pairs(), facts(1));
  EXPECT_TRUE(plan.skips.empty());
  EXPECT_EQ(names(plan), (std::vector<std::string>{
                             "host_staging/host:pinned/mode:sequential/pair:0to0",
                             "host_staging/host:pinned/mode:pipelined/pair:0to0",
                             "host_staging/host:pageable/mode:sequential/pair:0to0",
                             "host_staging/host:pageable/mode:pipelined/pair:0to0",
                             "host_staging/host:pinned/mode:sequential/timing:latency/pair:0to0",
                             "host_staging/host:pageable/mode:sequential/timing:latency/pair:0to0",
                         }));
  // "all" and explicit pairs land on the one GPU too, once.
  EXPECT_EQ(plan_host_staging(pairs("all"), facts(1)).families.size(), 6u);
  EXPECT_EQ(plan_host_staging(pairs("0:1,1:0"), facts(1)).families.size(), 6u);
}

TEST(HostStagingPlan, TwoGpusUseThePairsAskedForWithoutNeedingPeerAccess) {
  const auto plan = plan_host_staging(pairs("0:1,1:1,0:9"), facts(2, {{0, 1}, {1, 0}}));
  EXPECT_EQ(plan.families.size(), 12u);
  EXPECT_EQ(plan.families[0].name(), "host_staging/host:pinned/mode:sequential/pair:0to1");
  EXPECT_EQ(plan.families[1].name(), "host_staging/host:pinned/mode:sequential/pair:1to1");
  const Skip* missing = find_skip(plan, "host_staging/pair:0to9");
  ASSERT_NE(missing, nullptr);
  EXPECT_TRUE(contains(missing->reason, "GPU 9 does not exist")) << missing->reason;
}

TEST(StagingChunks, EightChunksForMidSizesFourMebibytesForLargeOnes) {
  EXPECT_EQ(staging_chunk(8), 8u);                  // smaller than the smallest chunk
  EXPECT_EQ(staging_chunk(256 << 10), 256u << 10);  // one chunk
  EXPECT_EQ(staging_chunk(1 << 20), 256u << 10);    // 4 chunks of the 256 KiB floor
  EXPECT_EQ(staging_chunk(8 << 20), 1u << 20);      // bytes / 8
  EXPECT_EQ(staging_chunk(64 << 20), 4u << 20);     // the 4 MiB ceiling
  EXPECT_EQ(staging_chunk(std::size_t{1} << 30), 4u << 20);
  EXPECT_EQ(staging_chunk(0), 1u);  // never a zero step
}

TEST(BatchPlan, SmallCopiesAreBatchedAndHeldWithinTheQueueBudget) {
  const BatchPlan uni = plan_batch(100, 1, 2);
  EXPECT_EQ(uni.batch, 100);
  EXPECT_TRUE(uni.hold);
  const BatchPlan bi = plan_batch(100, 2, 6);
  EXPECT_EQ(bi.batch, 61);
  EXPECT_TRUE(bi.hold);
  const BatchPlan staged = plan_batch(100, staging_operations_per_copy(8, false), 2);
  EXPECT_EQ(staging_operations_per_copy(8, false), 6);
  EXPECT_EQ(staged.batch, 21);
  EXPECT_TRUE(staged.hold);
  EXPECT_EQ(plan_batch(1, 1, 2).batch, 1);
}

TEST(BatchPlan, LongPipelinesRunUnheld) {
  EXPECT_EQ(staging_operations_per_copy(64 << 20, true), 16 * 4 + 2);
  const BatchPlan mid = plan_batch(1, staging_operations_per_copy(64 << 20, true), 2);
  EXPECT_EQ(mid.batch, 1);
  EXPECT_TRUE(mid.hold);
  const BatchPlan large = plan_batch(1, staging_operations_per_copy(std::size_t{1} << 30, true), 2);
  EXPECT_EQ(large.batch, 1);
  EXPECT_FALSE(large.hold);
}

TEST(BatchPlan, DriverStagedPeerCopiesAreHeldOnlyWhileShort) {
  EXPECT_TRUE(may_hold_peer_copy(true, std::uint64_t{1} << 30));    // P2P: always
  EXPECT_TRUE(may_hold_peer_copy(false, 64u << 20));                // staged, short
  EXPECT_FALSE(may_hold_peer_copy(false, (64u << 20) + 1));         // staged, long: queueing
  EXPECT_FALSE(may_hold_peer_copy(false, std::uint64_t{1} << 30));  // may block behind a hold
}

TEST(CudaVersions, AreWrittenMajorDotMinor) {
  EXPECT_EQ(cuda_version_text(13000), "13.0");
  EXPECT_EQ(cuda_version_text(12080), "12.8");
  EXPECT_EQ(cuda_version_text(0), "");
}

TEST(PairInfo, LinkAndCellFollowTheNvlinkCount) {
  PairInfo p;
  p.nvlink_count = 18;
  p.pcie_relation = "NODE";
  EXPECT_EQ(p.link(), "NVLink");
  EXPECT_EQ(p.cell(), "NV18");
  p.nvlink_count = 0;
  EXPECT_EQ(p.link(), "PCIe");
  EXPECT_EQ(p.cell(), "NODE");
  p.nvlink_count = -1;
  p.pcie_relation.clear();
  EXPECT_EQ(p.link(), "unknown");
  EXPECT_EQ(p.cell(), "?");
}

// Machine-dependent, both ways right: without a driver (CI) there is no device and a reason;
// with GPUs there are some and allocation works.
TEST(CudaLayer, NoDriverMeansNoDeviceWithAReasonAndCheckedCallsThrow) {
  std::string why;
  const int count = visible_device_count(&why);
  if (count > 0) {
    EXPECT_TRUE(why.empty());
    DeviceBuffer buffer(0, 1 << 20);
    EXPECT_NE(buffer.data(), nullptr);
    return;
  }
  EXPECT_TRUE(contains(why, "no GPU")) << why;
  EXPECT_FALSE(contains(why, "insufficient")) << why;
  try {
    DeviceBuffer buffer(0, 1 << 20);
    FAIL() << "cudaMalloc without a device succeeded";
  } catch (const Error& e) {
    const std::string text = e.what();
    EXPECT_TRUE(contains(text, "failed: cudaError")) << text;
    EXPECT_TRUE(contains(text, "cuda.cpp:")) << text;
  }
}

TEST(CudaLayer, NoGpuReasonSaysWhatIsMissing) {
  // cudaDriverGetVersion gives 0 where no driver is installed (the CI machines).
  EXPECT_EQ(no_gpu_reason(cudaErrorInsufficientDriver, 0, 13000, nullptr),
            "no GPU or no NVIDIA driver on this machine (cudaGetDeviceCount: "
            "cudaErrorInsufficientDriver)");
  EXPECT_EQ(no_gpu_reason(cudaErrorInsufficientDriver, 12020, 13000, nullptr),
            "the NVIDIA driver supports CUDA 12.2, older than the CUDA 13.0 xferbench was built "
            "with: update the driver (cudaGetDeviceCount: cudaErrorInsufficientDriver)");
  EXPECT_EQ(no_gpu_reason(cudaErrorNoDevice, 13000, 13000, nullptr),
            "no GPU on this machine: the NVIDIA driver finds none (cudaGetDeviceCount: "
            "cudaErrorNoDevice)");
  EXPECT_EQ(no_gpu_reason(cudaErrorNoDevice, 13000, 13000, ""),
            "no GPU visible with CUDA_VISIBLE_DEVICES='' (cudaGetDeviceCount: cudaErrorNoDevice)");
  EXPECT_EQ(no_gpu_reason(cudaSuccess, 13000, 13000, nullptr), "no GPU visible");
}

TEST(CudaLayer, WithContextNamesTheDevices) {
  try {
    with_context("GPU 0 -> GPU 1", [] { throw Error("cudaMemcpyPeerAsync failed"); });
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "cudaMemcpyPeerAsync failed [GPU 0 -> GPU 1]");
  }
  EXPECT_EQ(with_context("x", [] { return 42; }), 42);
}

}  // namespace
}  // namespace xfer::gpu

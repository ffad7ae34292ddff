// ce_copy, sm_copy and pointer_chase without a GPU: which GPUs, pairs and variants run, which are
// skipped and why, the names and links of their rows, which rows the default run holds, and the
// arithmetic of their kernels (the grid covers every byte of a message exactly; the ring keeps
// copies out of the L2 cache; where a chase ends).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "gpu/copies_plan.hpp"
#include "gpu_facts.hpp"

namespace xfer::gpu {
namespace {

using testing::facts;
using testing::names;
using testing::pairs;

template <class Family>
std::string reason(const CopyPlan<Family>& plan, const std::string& path) {
  for (const auto& s : plan.skips) {
    if (s.path == path) return s.reason;
  }
  return "(not skipped)";
}

TEST(CopiesPlan, WithoutAGpuEachPathIsSkippedWithTheReason) {
  GpuFacts none;
  none.why_none = "no GPU or no NVIDIA driver on this machine";
  const GpuPairs gpus;
  EXPECT_EQ(reason(plan_ce_copy(gpus, none), "ce_copy"), none.why_none);
  EXPECT_EQ(reason(plan_sm_copy(gpus, none), "sm_copy"), none.why_none);
  EXPECT_EQ(reason(plan_pointer_chase(gpus, none), "pointer_chase"), none.why_none);
  EXPECT_TRUE(plan_sm_copy(gpus, none).families.empty());
}

TEST(CopiesPlan, OneGpuRunsHostAndLocalCopiesAndSkipsPeersSayingWhy) {
  const GpuPairs gpus;  // 0:1, but only GPU 0 exists
  EXPECT_EQ(names(plan_ce_copy(gpus, facts(1))),
            (std::vector<std::string>{
                "ce_copy/host:pinned/dir:h2d/gpu:0", "ce_copy/host:pinned/dir:d2h/gpu:0",
                "ce_copy/host:pinned/dir:bi/gpu:0", "ce_copy/host:pageable/dir:h2d/gpu:0",
                "ce_copy/host:pageable/dir:d2h/gpu:0", "ce_copy/dir:local/gpu:0"}));
  const auto sm = plan_sm_copy(gpus, facts(1));
  EXPECT_EQ(names(sm), (std::vector<std::string>{
                           "sm_copy/host:mapped/dir:h2d/gpu:0", "sm_copy/host:mapped/dir:d2h/gpu:0",
                           "sm_copy/host:mapped/dir:bi/gpu:0", "sm_copy/dir:local/gpu:0"}));
  EXPECT_EQ(reason(sm, "sm_copy/peer"), "needs 2 GPUs; only 1 CUDA device is visible");
  const auto chase = plan_pointer_chase(gpus, facts(1));
  EXPECT_EQ(names(chase), (std::vector<std::string>{"pointer_chase/host:mapped/span:2MiB/gpu:0"}));
  EXPECT_EQ(reason(chase, "pointer_chase/peer"), "needs 2 GPUs; only 1 CUDA device is visible");
}

TEST(CopiesPlan, TwoGpusAddPeerVariantsPerPair) {
  const auto sm = plan_sm_copy(pairs("0:1"), facts(2));
  const auto n = names(sm);
  for (const char* want :
       {"sm_copy/peer:read/pair:0to1", "sm_copy/peer:write/pair:0to1", "sm_copy/peer:bi/pair:0to1"})
    EXPECT_NE(std::find(n.begin(), n.end(), want), n.end()) << want;
  EXPECT_TRUE(sm.skips.empty());
  EXPECT_EQ(names(plan_pointer_chase(pairs("0:1"), facts(2))).back(),
            "pointer_chase/peer:read/span:2MiB/pair:0to1");
}

TEST(CopiesPlan, PerGpuFamiliesRunOnEachSourceOfXferGpus) {
  auto count = [](const CopyPlan<CeFamily>& plan, const std::string& gpu) {
    const auto n = names(plan);
    return std::count_if(n.begin(), n.end(), [&](const std::string& s) {
      return s.find("/" + gpu) != std::string::npos;
    });
  };
  const auto all = plan_ce_copy(pairs("all"), facts(3));
  EXPECT_EQ(count(all, "gpu:0"), 6);
  EXPECT_EQ(count(all, "gpu:1"), 6);
  EXPECT_EQ(count(all, "gpu:2"), 6);
  const auto one = plan_ce_copy(pairs("1:0"), facts(2));
  EXPECT_EQ(count(one, "gpu:1"), 6);
  EXPECT_EQ(count(one, "gpu:0"), 0);
  EXPECT_EQ(reason(plan_ce_copy(pairs("5:0"), facts(2)), "ce_copy/gpu:5"),
            "GPU 5 does not exist here (2 CUDA devices are visible, numbered from 0)");
}

TEST(CopiesPlan, PeerVariantsNeedAccessTheWayTheirKernelsReach) {
  // GPU 1 cannot reach GPU 0: read (1's kernel loads 0's memory) and bi cannot run; write can.
  const auto sm = plan_sm_copy(pairs("0:1"), facts(2, {{1, 0}}));
  const auto n = names(sm);
  EXPECT_NE(std::find(n.begin(), n.end(), "sm_copy/peer:write/pair:0to1"), n.end());
  EXPECT_EQ(std::find(n.begin(), n.end(), "sm_copy/peer:read/pair:0to1"), n.end());
  EXPECT_EQ(reason(sm, "sm_copy/peer:read/pair:0to1"),
            "GPU 1 cannot access GPU 0 as a peer (cudaDeviceCanAccessPeer is 0)");
  EXPECT_EQ(reason(sm, "sm_copy/peer:bi/pair:0to1"),
            "GPU 1 cannot access GPU 0 as a peer (cudaDeviceCanAccessPeer is 0)");
  EXPECT_EQ(reason(plan_pointer_chase(pairs("0:1"), facts(2, {{1, 0}})),
                   "pointer_chase/peer:read/span:2MiB/pair:0to1"),
            "GPU 1 cannot access GPU 0 as a peer (cudaDeviceCanAccessPeer is 0)");
  EXPECT_EQ(reason(plan_sm_copy(pairs("1:1"), facts(2)), "sm_copy/peer/pair:1to1"),
            "source and destination are the same GPU; a peer copy needs two");
}

TEST(CopiesPlan, EachFamilyDeclaresTheLinkItsBytesCross) {
  using Kind = links::Crossing::Kind;
  EXPECT_EQ((CeFamily{0, 0, HostDir::D2H, true}.crossing().kind), Kind::HostCopy);
  EXPECT_EQ((CeFamily{0, 0, HostDir::Local, true}.crossing().kind), Kind::LocalCopy);
  EXPECT_EQ((SmFamily{1, 1, SmReach::Host, HostDir::Both}.crossing().kind), Kind::HostCopy);
  EXPECT_EQ((SmFamily{1, 1, SmReach::Local, HostDir::Local}.crossing().kind), Kind::LocalCopy);
  const auto peer = SmFamily{0, 1, SmReach::PeerRead, HostDir::H2D}.crossing();
  EXPECT_EQ(peer.kind, Kind::GpuCopy);
  EXPECT_TRUE(peer.peer_access);
  EXPECT_EQ(peer.src_gpu, 0);
  EXPECT_EQ(peer.dst_gpu, 1);
  EXPECT_EQ((ChaseFamily{0, 0, false}.crossing().kind), Kind::None);
  EXPECT_EQ((CeFamily{0, 0, HostDir::Both, true}.directions()), 2);
  EXPECT_EQ((SmFamily{0, 1, SmReach::PeerBoth, HostDir::H2D}.directions()), 2);
  EXPECT_EQ((SmFamily{0, 1, SmReach::PeerWrite, HostDir::H2D}.directions()), 1);
}

TEST(CopiesPlan, TheDefaultRunHoldsFewRows) {
  const auto h2d = sizes_of(CeFamily{0, 0, HostDir::H2D, true});
  EXPECT_TRUE(h2d.in_default(1 << 20));
  EXPECT_FALSE(h2d.in_default(8));
  EXPECT_FALSE(sizes_of(CeFamily{0, 0, HostDir::Both, true}).in_default(1 << 20));
  EXPECT_FALSE(sizes_of(CeFamily{0, 0, HostDir::H2D, false}).in_default(1 << 20));
  EXPECT_TRUE(sizes_of(SmFamily{0, 0, SmReach::Local, HostDir::Local}).in_default(256 << 20));
  EXPECT_FALSE(sizes_of(SmFamily{0, 0, SmReach::Host, HostDir::H2D}).in_default(256 << 20));
  const auto chase = sizes_of(ChaseFamily{0, 0, false});
  EXPECT_EQ(chase.own, (std::vector<std::uint64_t>{8}));
  EXPECT_FALSE(chase.in_default(8));
}

TEST(CopyGrid, CoversEveryByteWhateverTheGrid) {
  for (const std::uint64_t bytes :
       {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{15}, std::uint64_t{16}, std::uint64_t{17},
        std::uint64_t{4095}, std::uint64_t{1} << 20, (std::uint64_t{1} << 30) + 7}) {
    for (const int jobs : {1, 2}) {
      const CopyGrid g = plan_copy_grid(bytes, 132, 4, 512, jobs);
      EXPECT_EQ(g.bytes(), bytes) << bytes;
      EXPECT_LT(g.tail, 16u);
      EXPECT_GE(g.blocks, 1u);
      EXPECT_LE(g.blocks, 132u * 4);
      // Every tail byte has a thread of its job.
      EXPECT_GE(g.threads_per_job(jobs), g.tail);
    }
  }
}

TEST(CopyGrid, FillsTheGpuForLargeMessagesAndNoMoreThanNeededForSmall) {
  EXPECT_EQ(plan_copy_grid(std::uint64_t{512} << 20, 132, 4, 512, 1).blocks, 528u);
  EXPECT_EQ(plan_copy_grid(4096, 132, 4, 512, 1).blocks, 1u);  // 256 vectors
  EXPECT_EQ(plan_copy_grid(16 * 1024, 132, 4, 512, 2).blocks, 4u);
  EXPECT_EQ(plan_copy_grid(std::uint64_t{512} << 20, 132, 4, 512, 2).threads_per_job(2),
            528u * 256);
}

TEST(Ring, SmallCopiesTakeTurnsOverTwiceTheL2LargeOnesUseOneBuffer) {
  const std::uint64_t l2 = std::uint64_t{50} << 20;
  const Ring big = plan_ring(std::uint64_t{512} << 20, l2);
  EXPECT_EQ(big.slots, 1u);
  EXPECT_GE(big.stride, std::uint64_t{512} << 20);
  const Ring mid = plan_ring(std::uint64_t{4} << 20, l2);
  EXPECT_EQ(mid.slots, 25u);
  EXPECT_GE(mid.bytes(), 2 * l2);
  const Ring tiny = plan_ring(8, l2);
  EXPECT_EQ(tiny.slots, kMaxRingSlots);
  EXPECT_EQ(tiny.stride, 256u);
  EXPECT_EQ(plan_ring(100, 0).slots, 1u);  // an L2 size unknown: one buffer
}

TEST(Chase, EndsWhereTheChainLeads) {
  EXPECT_EQ(chase_node_after(0, 0), 0u);
  EXPECT_EQ(chase_node_after(0, 1), kChaseStride);
  EXPECT_EQ(chase_node_after(0, kChaseNodes / kChaseStride), 0u);  // every line once, then back
  EXPECT_EQ(chase_node_after(kChaseNodes - 16, 1), 0u);
  EXPECT_EQ(chase_node_after(0, 1000003), (1000003 * kChaseStride) % kChaseNodes);
  EXPECT_EQ(kChaseNodes * 8, kChaseSpanBytes);
}

}  // namespace
}  // namespace xfer::gpu

// The links model through its seam: NVML and sysfs answers recorded under tests/fixtures/links
// (the H200 VM as captured; the other cases edited captures, marked so in their nvml.txt).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "error.hpp"
#include "json.hpp"
#include "links.hpp"
#include "routes.hpp"

namespace xfer::links {
namespace {

std::string fixture(const std::string& name) {
  return std::string(XFER_FIXTURES) + "/links/" + name;
}

std::unique_ptr<Book> book_for(const std::string& name) {
  auto book = std::make_unique<Book>();
  book->set_answers(std::make_unique<RecordedAnswers>(fixture(name)));
  return book;
}

// context.xferbench as a run on the H200 VM records it: one GPU, one rank (or two on one GPU).
json::Value one_gpu_context(int ranks = 1) {
  std::string text =
      R"({"cuda": {"devices": [{"index": 0, "pci_bus_id": "00000000:00:06.0"}], "pairs": []},
          "ranks": [)";
  for (int r = 0; r < ranks; ++r)
    text += std::string(r ? "," : "") + R"({"rank": )" + std::to_string(r) +
            R"(, "host": "vm", "pci_bus_id": "0000:00:06.0"})";
  text += R"(], "pairs": [{"ranks": [0, 1]}]})";
  return json::parse(text);
}

json::Value two_gpu_context(bool p2p) {
  const std::string on = p2p ? "true" : "false";
  return json::parse(
      R"({"cuda": {"devices": [{"index": 0, "pci_bus_id": "0000:19:00.0"},
                               {"index": 1, "pci_bus_id": "0000:2A:00.0"}],
                   "pairs": [{"src": 0, "dst": 1, "p2p": )" +
      on + R"(}, {"src": 1, "dst": 0, "p2p": )" + on + R"(}]},
          "ranks": [{"rank": 0, "host": "a", "pci_bus_id": "0000:19:00.0"},
                    {"rank": 1, "host": "b", "pci_bus_id": "0000:2a:00.0"}],
          "pairs": [{"ranks": [0, 1]}]})");
}

TEST(Links, PcieLineRatePerDirection) {
  EXPECT_NEAR(pcie_gbps(5, 16), 63.015, 0.001);  // 32 GT/s x 16 x 128/130 / 8
  EXPECT_NEAR(pcie_gbps(3, 16), 15.754, 0.001);
  EXPECT_NEAR(pcie_gbps(1, 1), 0.25, 1e-9);  // 8b/10b
  EXPECT_EQ(pcie_gbps(7, 16), 0);            // unknown generation: unknown link
  EXPECT_EQ(pcie_generation_of("32.0 GT/s PCIe"), 5);
  EXPECT_EQ(pcie_generation_of("Unknown"), -1);
  EXPECT_EQ(normal_bus_id("00000000:2A:00.0"), "0000:2a:00.0");
}

TEST(Links, H200VmAsCaptured) {
  const RecordedAnswers answers(fixture("h200-vm"));
  const Pcie p = read_pcie(answers, "0000:00:06.0");
  EXPECT_EQ(p.gen, 5);
  EXPECT_EQ(p.width, 16);
  EXPECT_EQ(p.max_gen, 5);
  EXPECT_EQ(p.max_width, 16);
  EXPECT_EQ(p.source, "NVML+sysfs");
  EXPECT_FALSE(p.below_max());
  // 6144-bit HBM at 3201 MHz, two transfers a clock: 4917 GB/s, half of it per copied byte.
  EXPECT_NEAR(memory_copy_gbps(6144, 3201), 2458.4, 0.1);
}

TEST(Links, StagedCopyCrossesTheLinkTwiceInTurnOrAtOnce) {
  auto book = book_for("h200-vm");
  const std::string seq = "host_staging/host:pinned/mode:sequential/pair:0to0";
  const std::string pipe = "host_staging/host:pinned/mode:pipelined/pair:0to0";
  route_families(*book, one_gpu_context(), {seq, pipe});
  EXPECT_NEAR(book->ceiling_gbps(seq), 31.5, 0.1);   // down, then up the same link
  EXPECT_NEAR(book->ceiling_gbps(pipe), 63.0, 0.1);  // both directions at once
  EXPECT_NEAR(book->row_ceiling_gbps(pipe, 2, 1), 126.0, 0.1);
  // 27.6 and 49 GB/s (measured on an H200 VM) are 88% and 78% of them.
  EXPECT_EQ(over_line_rate(27.6, book->ceiling_gbps(seq), book->route_text(seq)), "");
  ASSERT_EQ(book->links().size(), 1u);  // the link is named once
  EXPECT_EQ(book->links()[0].describe(),
            "PCIe Gen5 x16 of GPU 0000:00:06.0: 63.0 GB/s per direction");
}

TEST(Links, BothRanksOnOneGpuCrossItsMemoryBothWaysTogether) {
  auto book = book_for("h200-vm");
  const std::string family = "mpi_cuda_aware/mode:bidir";
  route_families(*book, one_gpu_context(2), {family, "mpi_host/mode:stream"});
  EXPECT_NEAR(book->ceiling_gbps(family), 2407.2,
              0.1);  // 6016 bits x 3201 MHz x 2 / 8, halved for a copy
  EXPECT_NEAR(book->row_ceiling_gbps(family, 2, 1), 2407.2, 0.1);  // memory is not full duplex
  EXPECT_FALSE(book->has_route("mpi_host/mode:stream"));           // host memory in a node: unknown
}

TEST(Links, RowAboveTheLineRateIsAnError) {
  const std::string message = over_line_rate(70.0, 63.0, "pcie:0000:00:06.0");
  EXPECT_NE(message.find("111.1% of the line rate"), std::string::npos) << message;
  EXPECT_NE(message.find("an error in the measurement or in the peak"), std::string::npos);
  EXPECT_EQ(over_line_rate(62.9, 63.0, "x"), "");
  EXPECT_EQ(over_line_rate(70.0, 0, "x"), "");  // no known link: nothing to judge
}

TEST(Links, DowntrainedWhileRunningIsNamed) {
  auto book = book_for("downtrained-edited");
  const std::string family = "host_staging/host:pinned/mode:pipelined/pair:0to0";
  route_families(*book, one_gpu_context(), {family});
  // Read before any transfer ran: an idle GPU may read slow, so nothing is said yet, and the
  // ceiling is the link's maximum (a low one would refuse true figures).
  EXPECT_TRUE(book->downtrained().empty());
  EXPECT_NEAR(book->ceiling_gbps(family), pcie_gbps(5, 16), 1e-9);
  book->read_running(family);
  ASSERT_EQ(book->downtrained(), std::vector<std::string>{"pcie:0000:00:06.0"});
  EXPECT_NEAR(book->ceiling_gbps(family), pcie_gbps(3, 8), 1e-9);  // the rate it ran at
  ASSERT_EQ(book->problems().size(), 1u);
  EXPECT_NE(book->problems()[0].find("ran at Gen3 x8"), std::string::npos);
  EXPECT_NE(book->problems()[0].find("allow Gen5 x16 (63.0 GB/s"), std::string::npos);
  const json::Value context = book->to_json();
  EXPECT_EQ(context.find("downtrained")->items().size(), 1u);
}

TEST(Links, TheRunningReaderReadsWhileItLives) {
  auto book = book_for("downtrained-edited");
  const std::string family = "host_staging/host:pinned/mode:sequential/pair:0to0";
  route_families(*book, one_gpu_context(), {family});
  ASSERT_TRUE(book->wants_running_read(family));
  { RunningReader reading(*book, family); }  // at least the reading as it ends
  EXPECT_EQ(book->downtrained(), std::vector<std::string>{"pcie:0000:00:06.0"});
  // A link that ran below its maximum is read again in later visits: it may have been idle.
  EXPECT_TRUE(book->wants_running_read(family));
}

TEST(Links, ALinkReadAtItsMaximumUnderLoadIsNotReadAgain) {
  auto book = book_for("h200-vm");
  const std::string family = "host_staging/host:pinned/mode:sequential/pair:0to0";
  route_families(*book, one_gpu_context(), {family});
  ASSERT_TRUE(book->wants_running_read(family));  // never read under load yet
  book->read_running(family);
  EXPECT_TRUE(book->downtrained().empty());
  EXPECT_FALSE(book->wants_running_read(family));
  EXPECT_FALSE(book->wants_running_read("mpi_host/mode:pingpong"));  // no route, no reading
}

TEST(Links, WithoutNvmlSysfsAnswersAndTheSlotCapsTheMaximum) {
  const RecordedAnswers answers(fixture("no-nvml-slot-gen4-edited"));
  EXPECT_FALSE(answers.nvml_available());
  const Pcie p = read_pcie(answers, "0000:01:00.0");
  EXPECT_EQ(p.source, "sysfs");
  EXPECT_EQ(p.gen, 4);
  EXPECT_EQ(p.max_gen, 4);  // the GPU allows Gen5, its slot Gen4: Gen4 is no downtraining
  EXPECT_FALSE(p.below_max());
  Book book;
  book.set_answers(std::make_unique<RecordedAnswers>(fixture("no-nvml-slot-gen4-edited")));
  EXPECT_EQ(book.memory("0000:01:00.0"), "");  // unknown without NVML
  EXPECT_EQ(book.nvlink("0000:01:00.0", "0000:02:00.0"), "");
  EXPECT_NE(book.pcie("0000:01:00.0"), "");
  EXPECT_EQ(book.pcie("0000:99:00.0"), "");  // an unknown device: no link
}

TEST(Links, PeerAccessOffDespiteNvlinkIsNamed) {
  auto book = book_for("nvlink-two-gpus-edited");
  route_families(*book, two_gpu_context(false), {"memcpy_peer/p2p:off/dir:uni/pair:0to1"});
  ASSERT_EQ(book->peer_off().size(), 2u);
  EXPECT_EQ(book->peer_off()[0].nvlink_count, 18);
  EXPECT_NE(book->lines().back().find("p2p_off_despite_link: GPU 1 -> GPU 0"), std::string::npos);
  EXPECT_NEAR(book->ceiling_gbps("memcpy_peer/p2p:off/dir:uni/pair:0to1"), 63.0, 0.1);

  auto on = book_for("nvlink-two-gpus-edited");
  const std::string family = "memcpy_peer/p2p:on/dir:bi/pair:0to1";
  route_families(*on, two_gpu_context(true), {family});
  EXPECT_TRUE(on->peer_off().empty());
  EXPECT_NEAR(on->ceiling_gbps(family), 18 * 26.562, 0.01);
  EXPECT_NEAR(on->row_ceiling_gbps(family, 2, 1), 2 * 18 * 26.562, 0.01);
}

TEST(Links, BetweenNodesTheActivePortCounts) {
  auto book = book_for("nvlink-two-gpus-edited");
  route_families(*book, two_gpu_context(true),
                 {"mpi_host/mode:stream", "mpi_host/mode:stream/pairs:2"});
  EXPECT_NEAR(book->ceiling_gbps("mpi_host/mode:stream"), 50.0, 1e-9);  // 400 Gb/s, mlx5_0 only
  EXPECT_FALSE(book->has_route("mpi_host/mode:stream/pairs:2"));        // several pairs: not yet
  EXPECT_EQ(port_gbps("200 Gb/sec (4X HDR)"), 25.0);
  EXPECT_EQ(port_gbps("garbage"), 0.0);
}

TEST(Links, ABadRecordingIsRefusedNamingItsLine) {
  const std::string dir = testing::TempDir() + "links-bad-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/nvml.txt") << "# fine\ngpu 0000:00:06.0 pcie_gen_current=five\n";
  try {
    RecordedAnswers answers(dir);
    FAIL() << "accepted a malformed line";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("nvml.txt line 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(RecordedAnswers(dir + "/absent"), UsageError);
  std::filesystem::remove_all(dir);
}

TEST(Links, WhatIsRecordedReadsBackTheSame) {
  const RecordedAnswers original(fixture("nvlink-two-gpus-edited"));
  const std::string dir = testing::TempDir() + "links-dump-" + std::to_string(::getpid());
  const auto files = record_answers(original, {"0000:19:00.0", "0000:2a:00.0"}, dir);
  EXPECT_GE(files.size(), 9u);  // nvml.txt, 4 PCIe files per GPU, one port's rate and state
  const RecordedAnswers copy(dir);
  const Pcie p = read_pcie(copy, "0000:2a:00.0");
  EXPECT_EQ(p.gen, 5);
  EXPECT_EQ(p.source, "NVML+sysfs");
  EXPECT_EQ(copy.gpu("0000:19:00.0").memory_bus_bits, 6144);
  EXPECT_EQ(copy.nvlink("0000:19:00.0", "0000:2a:00.0").links, 18);
  EXPECT_EQ(network_ports(copy.sysfs_root()).size(), 1u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace xfer::links

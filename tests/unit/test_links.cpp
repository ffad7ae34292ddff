// The links model through its seam: NVML and sysfs answers recorded under tests/fixtures/links
// (the one-GPU H200 VM and the two-H200 NVSwitch machine as captured; the other cases edited
// captures, marked so in their nvml.txt, or edited here from a real one).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json.hpp"
#include "links/links.hpp"
#include "links/routes.hpp"

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

// context.xferbench of a run on the two-H200 machine (h200x2): two GPUs of one host, each
// rank on its own GPU, CUDA peer access as `p2p` says.
json::Value h200x2_context(bool p2p) {
  const std::string on = p2p ? "true" : "false";
  return json::parse(
      R"({"cuda": {"devices": [{"index": 0, "pci_bus_id": "00000000:00:06.0"},
                               {"index": 1, "pci_bus_id": "00000000:00:07.0"}],
                   "pairs": [{"src": 0, "dst": 1, "p2p": )" +
      on + R"(}, {"src": 1, "dst": 0, "p2p": )" + on + R"(}]},
          "ranks": [{"rank": 0, "host": "h", "gpu": 0, "pci_bus_id": "00000000:00:06.0"},
                    {"rank": 1, "host": "h", "gpu": 1, "pci_bus_id": "00000000:00:07.0"}],
          "pairs": [{"ranks": [0, 1]}]})");
}

// What each path declares when it registers these families (bench/: Registry::add), by name;
// the copy paths with the bus ids their GPUs have in `context` (what rank 0 probed).
std::vector<FamilyCrossing> declared(const std::vector<std::string>& families,
                                     const json::Value& context) {
  using Kind = Crossing::Kind;
  const RankPairs one_pair = {{0, 1}};
  const RankPairs two_pairs = {{0, 1}, {2, 3}};
  const auto copy = [](int src, int dst, bool p2p) {
    Crossing c = Crossing::between_gpus(Kind::GpuCopy, src, dst);
    c.peer_access = p2p;
    return c;
  };
  const auto staged = [](int src, int dst, bool at_once) {
    Crossing c = Crossing::between_gpus(Kind::HostStagedCopy, src, dst);
    c.at_once = at_once;
    return c;
  };
  Crossing nccl = Crossing::between_ranks(Kind::RankGpuMemory, one_pair);
  nccl.nccl = true;
  Crossing staged_ranks = Crossing::between_ranks(Kind::RankHostStaged, one_pair);
  staged_ranks.at_once = true;
  const std::map<std::string, Crossing> table = {
      {"host_staging/host:pinned/mode:pipelined/pair:0to0", staged(0, 0, true)},
      {"host_staging/host:pinned/mode:sequential/pair:0to0", staged(0, 0, false)},
      {"memcpy_peer/p2p:off/dir:uni/pair:0to1", copy(0, 1, false)},
      {"memcpy_peer/p2p:on/dir:bi/pair:0to1", copy(0, 1, true)},
      {"memcpy_peer/p2p:on/dir:bi/pair:1to0", copy(1, 0, true)},
      {"memcpy_peer/p2p:on/dir:uni/pair:0to1", copy(0, 1, true)},
      {"mpi_cuda_aware/mode:bidir", Crossing::between_ranks(Kind::RankGpuMemory, one_pair)},
      {"mpi_cuda_aware/mode:pingpong", Crossing::between_ranks(Kind::RankGpuMemory, one_pair)},
      {"mpi_host/mode:stream", Crossing::between_ranks(Kind::RankHostMemory, one_pair)},
      {"mpi_host/mode:stream/pairs:2", Crossing::between_ranks(Kind::RankHostMemory, two_pairs)},
      {"mpi_staged/host:pinned/staging:pipelined/mode:stream", staged_ranks},
      {"nccl_sendrecv/mode:stream", nccl},
  };
  std::vector<FamilyCrossing> out;
  const json::Value* cuda = context.find("cuda");
  const json::Value* devices = cuda ? cuda->find("devices") : nullptr;
  const auto bus = [&](int gpu) {
    return devices && gpu >= 0 && static_cast<std::size_t>(gpu) < devices->items().size()
               ? devices->items()[static_cast<std::size_t>(gpu)].find("pci_bus_id")->text()
               : std::string();
  };
  for (const auto& family : families) {
    Crossing c = table.at(family);
    c.src_bus = bus(c.src_gpu);
    c.dst_bus = bus(c.dst_gpu);
    out.push_back({family, c});
  }
  return out;
}

// The routes of `families` as a run on `context` sets them.
void routed(Book& book, const json::Value& context, const std::vector<std::string>& families,
            const Transports& transports = {}) {
  route_families(book, context, declared(families, context), transports);
}

// A copy of the real two-H200 answers with `key=value` words of its NVLink lines replaced.
using Edits = std::vector<std::pair<std::string, std::string>>;
std::string h200x2_edited(const std::string& name, const Edits& edits) {
  const std::string dir = testing::TempDir() + "links-" + name + "-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::copy(
      fixture("h200x2"), dir,
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  std::ifstream in(fixture("h200x2") + "/nvml.txt");
  std::string text, line;
  while (std::getline(in, line)) {
    for (const auto& [replace, with] : edits) {
      for (auto at = line.find(replace); line.rfind("nvlink ", 0) == 0 && at != std::string::npos;
           at = line.find(replace, at + with.size()))
        line.replace(at, replace.size(), with);
    }
    text += line + "\n";
  }
  std::ofstream(dir + "/nvml.txt") << text;
  return dir;
}

std::unique_ptr<Book> book_in(const std::string& dir) {
  auto book = std::make_unique<Book>();
  book->set_answers(std::make_unique<RecordedAnswers>(dir));
  return book;
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
  routed(*book, one_gpu_context(), {seq, pipe});
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
  routed(*book, one_gpu_context(2), {family, "mpi_host/mode:stream"});
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
  routed(*book, one_gpu_context(), {family});
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
  routed(*book, one_gpu_context(), {family});
  ASSERT_TRUE(book->wants_running_read(family));
  { RunningReader reading(*book, family); }  // at least the reading as it ends
  EXPECT_EQ(book->downtrained(), std::vector<std::string>{"pcie:0000:00:06.0"});
  // A link that ran below its maximum is read again in later visits: it may have been idle.
  EXPECT_TRUE(book->wants_running_read(family));
}

TEST(Links, ALinkReadAtItsMaximumUnderLoadIsNotReadAgain) {
  auto book = book_for("h200-vm");
  const std::string family = "host_staging/host:pinned/mode:sequential/pair:0to0";
  routed(*book, one_gpu_context(), {family});
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

// As captured: NVML counts 18 active links (of 18) through NVSwitch, version code 6; the common
// speed field does not answer, the per-link one does (26562 MB/s, as nvidia-smi nvlink -s). The
// peer copy crosses NVLink, never the PCIe links (390.9 GB/s was charged to PCIe and failed as
// 620% of its line rate before).
TEST(Links, RealTwoH200sNvlinkBehindNvswitch) {
  const RecordedAnswers answers(fixture("h200x2"));
  const NvlinkAnswers nv = answers.nvlink("0000:00:06.0", "0000:00:07.0");
  EXPECT_EQ(nv.links, 18);
  EXPECT_EQ(nv.links_present, 18);
  EXPECT_TRUE(nv.via_switch);
  EXPECT_LT(nv.link_mbps, 0);  // the common speed field did not answer there
  const NvlinkRate rate = nvlink_rate(nv);
  EXPECT_DOUBLE_EQ(rate.link_gbps, 26.562);
  EXPECT_EQ(rate.source, "NVML NVML_FI_DEV_NVLINK_GET_SPEED");

  auto book = book_for("h200x2");
  const std::string uni = "memcpy_peer/p2p:on/dir:uni/pair:0to1";
  const std::string bi = "memcpy_peer/p2p:on/dir:bi/pair:1to0";
  routed(*book, h200x2_context(true), {uni, bi});
  EXPECT_EQ(book->route_text(uni), "nvlink:0000:00:06.0>0000:00:07.0");
  EXPECT_NEAR(book->ceiling_gbps(uni), 478.116, 1e-9);
  EXPECT_NEAR(book->row_ceiling_gbps(bi, 2, 1), 956.232, 1e-9);
  // 390.9 GB/s one way and 767.6 both ways (measured there) are results, 82% and 80%.
  EXPECT_EQ(over_line_rate(390.9, book->ceiling_gbps(uni), book->route_text(uni)), "");
  EXPECT_EQ(over_line_rate(767.6, book->row_ceiling_gbps(bi, 2, 1), book->route_text(bi)), "");
  EXPECT_TRUE(book->problems().empty());
  const json::Value links = book->to_json();
  const json::Value& first = links.find("links")->items()[0];
  EXPECT_EQ(first.find("kind")->text(), "NVLink");
  EXPECT_EQ(first.find("source")->text(), "NVML NVML_FI_DEV_NVLINK_GET_SPEED");
  EXPECT_EQ(first.find("version")->text(), "4.0");
  EXPECT_NE(book->lines()[0].find("NVLink x18 (NVSwitch)"), std::string::npos) << book->lines()[0];
  EXPECT_NE(book->lines()[0].find("478.1 GB/s per direction"), std::string::npos);
}

// The same machine's answers as an earlier lease recorded them, before the per-link field was
// asked: no speed field at all. The rate then comes from the version NVML names: NVLink 4.0,
// 26.5625 GB/s a link, the same peak within 0.002%.
TEST(Links, WithoutASpeedFieldTheRateComesFromTheVersion) {
  const std::string dir =
      h200x2_edited("no-speed", {{"link_speed_mbps=26562", "link_speed_mbps=-1"}});
  auto book = book_in(dir);
  const std::string family = "memcpy_peer/p2p:on/dir:uni/pair:0to1";
  routed(*book, h200x2_context(true), {family});
  EXPECT_DOUBLE_EQ(book->ceiling_gbps(family), 478.125);
  EXPECT_EQ(book->links()[0].rate_source, "NVLink 4.0 (NVML version code 6)");
  std::filesystem::remove_all(dir);
}

TEST(Links, RealTwoH200sPeerAccessOffCrossesBothPcieLinks) {
  auto book = book_for("h200x2");
  const std::string off = "memcpy_peer/p2p:off/dir:uni/pair:0to1";
  routed(*book, h200x2_context(false), {off});
  EXPECT_EQ(book->route_text(off), "pcie:0000:00:06.0, pcie:0000:00:07.0 at once");
  EXPECT_NEAR(book->ceiling_gbps(off), 63.0, 0.1);  // 38 GB/s measured: 60%
  ASSERT_EQ(book->peer_off().size(), 2u);           // and the pairs are named
  EXPECT_EQ(book->peer_off()[0].nvlink_count, 18);
}

// CUDA-aware MPI and NCCL between the two GPUs: GPU to GPU over NVLink (CUDA IPC, NCCL P2P),
// unless the run switches that transport off, when the bytes go through the host.
TEST(Links, RealTwoH200sMpiAndNcclRanksOnTwoGpusCrossNvlink) {
  const std::vector<std::string> families = {
      "mpi_cuda_aware/mode:pingpong", "nccl_sendrecv/mode:stream",
      "mpi_staged/host:pinned/staging:pipelined/mode:stream"};
  auto book = book_for("h200x2");
  routed(*book, h200x2_context(true), families);
  EXPECT_EQ(book->route_text(families[0]), "nvlink:0000:00:06.0>0000:00:07.0");
  EXPECT_EQ(book->route_text(families[1]), "nvlink:0000:00:06.0>0000:00:07.0");
  EXPECT_NEAR(book->ceiling_gbps(families[1]), 478.116, 1e-9);
  EXPECT_EQ(book->route_text(families[2]), "pcie:0000:00:06.0, pcie:0000:00:07.0 at once");

  auto through_host = book_for("h200x2");
  Transports off;
  off.nccl_p2p = false;
  off.mpi_cuda_ipc = false;
  routed(*through_host, h200x2_context(true), families, off);
  EXPECT_EQ(through_host->route_text(families[0]), "pcie:0000:00:06.0, pcie:0000:00:07.0 at once");
  EXPECT_EQ(through_host->route_text(families[1]), "pcie:0000:00:06.0, pcie:0000:00:07.0 at once");

  auto no_peer = book_for("h200x2");  // CUDA gives no peer access: through the host
  routed(*no_peer, h200x2_context(false), {families[1]});
  EXPECT_NEAR(no_peer->ceiling_gbps(families[1]), 63.0, 0.1);

  const std::map<std::string, std::string> env = {{"NCCL_P2P_DISABLE", "1"}};
  const Transports from_env = transports_from([&env](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
  EXPECT_FALSE(from_env.nccl_p2p);
  EXPECT_TRUE(from_env.mpi_cuda_ipc);
}

// A version NVML names but xferbench does not know, and no speed field: the link is crossed
// (not PCIe) but its rate is unknown, so its rows get no share and no error, and the console
// says which link and why, once.
TEST(Links, AnNvlinkVersionItDoesNotKnowIsAnUnknownLink) {
  const std::string dir = h200x2_edited(
      "unknown",
      {{"version_code=6", "version_code=9"}, {"link_speed_mbps=26562", "link_speed_mbps=-1"}});
  auto book = book_in(dir);
  const std::string family = "memcpy_peer/p2p:on/dir:uni/pair:0to1";
  routed(*book, h200x2_context(true), {family, "nccl_sendrecv/mode:stream"});
  EXPECT_EQ(book->route_text(family), "nvlink:0000:00:06.0>0000:00:07.0");  // not PCIe
  EXPECT_EQ(book->ceiling_gbps(family), 0);
  EXPECT_EQ(book->row_ceiling_gbps(family, 1, 1), 0);
  EXPECT_EQ(over_line_rate(390.9, book->row_ceiling_gbps(family, 1, 1), ""), "");
  const auto lines = book->lines();
  ASSERT_EQ(lines.size(), 1u);  // one link, named once for both families
  EXPECT_NE(lines[0].find("rate unknown"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("NVLink version code 9 has no rate xferbench knows"), std::string::npos)
      << lines[0];
  EXPECT_NE(book->to_json().find("links")->items()[0].find("unknown"), nullptr);
  std::filesystem::remove_all(dir);

  NvlinkAnswers none;
  none.links = 4;
  EXPECT_EQ(nvlink_gbps(none), 0);
  EXPECT_NE(nvlink_rate(none).why_unknown.find("names no NVLink version"), std::string::npos);
  none.version_code = 3;  // NVLink 2.2: named, but no rate xferbench can state
  EXPECT_NE(nvlink_rate(none).why_unknown.find("(NVLink 2.2)"), std::string::npos);
}

// Where NVML does answer a speed field, that figure is the rate, whatever the version says.
TEST(Links, ASpeedFieldThatAnswersComesFirst) {
  const std::string dir = h200x2_edited("speed-field", {{"link_mbps=-1", "link_mbps=25000"}});
  auto book = book_in(dir);
  const std::string family = "memcpy_peer/p2p:on/dir:uni/pair:0to1";
  routed(*book, h200x2_context(true), {family});
  EXPECT_DOUBLE_EQ(book->ceiling_gbps(family), 450.0);
  EXPECT_EQ(book->links()[0].rate_source, "NVML NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON");
  std::filesystem::remove_all(dir);

  NvlinkAnswers per_link;
  per_link.links = 2;
  per_link.version_code = 6;
  per_link.link_speed_mbps = 20000;
  EXPECT_DOUBLE_EQ(nvlink_gbps(per_link), 40.0);
  EXPECT_EQ(nvlink_rate(per_link).source, "NVML NVML_FI_DEV_NVLINK_GET_SPEED");
}

// Fewer links active than the GPUs have: named, before and after the rows, as a downtrained
// PCIe link is; the ceiling is what the active links carry.
TEST(Links, ANvlinkPairWithLinksDownIsDegraded) {
  const std::string dir = h200x2_edited("degraded", {{"links=18", "links=12"}});
  auto book = book_in(dir);
  const std::string family = "memcpy_peer/p2p:on/dir:uni/pair:0to1";
  routed(*book, h200x2_context(true), {family});
  EXPECT_DOUBLE_EQ(book->ceiling_gbps(family), 12 * 26.562);
  ASSERT_EQ(book->problems().size(), 1u);
  EXPECT_EQ(book->problems()[0],
            "degraded: nvlink:0000:00:06.0>0000:00:07.0 has 12 NVLink link(s) active of the 18 "
            "its GPUs have");
  EXPECT_EQ(book->to_json().find("degraded")->items().size(), 1u);
  std::filesystem::remove_all(dir);

  auto healthy = book_for("h200x2");  // all 18 of 18 active
  routed(*healthy, h200x2_context(true), {family});
  EXPECT_TRUE(healthy->problems().empty());
}

// The route follows what the path declared (its GPUs' bus ids), not what the context says of
// GPU indexes: a copy family declared without bus ids gets no route, even where the context
// lists the GPUs.
TEST(Links, ACopyRouteComesFromTheDeclaredBuses) {
  const std::string family = "memcpy_peer/p2p:on/dir:uni/pair:0to1";
  auto book = book_for("nvlink-two-gpus-edited");
  std::vector<FamilyCrossing> bare = declared({family}, json::Value::object());
  route_families(*book, two_gpu_context(true), bare);
  EXPECT_FALSE(book->has_route(family));
  auto with = book_for("nvlink-two-gpus-edited");
  routed(*with, two_gpu_context(true), {family});
  EXPECT_TRUE(with->has_route(family));
}

TEST(Links, PeerAccessOffDespiteNvlinkIsNamed) {
  auto book = book_for("nvlink-two-gpus-edited");
  routed(*book, two_gpu_context(false), {"memcpy_peer/p2p:off/dir:uni/pair:0to1"});
  ASSERT_EQ(book->peer_off().size(), 2u);
  EXPECT_EQ(book->peer_off()[0].nvlink_count, 18);
  EXPECT_NE(book->lines().back().find("p2p_off_despite_link: GPU 1 -> GPU 0"), std::string::npos);
  EXPECT_NEAR(book->ceiling_gbps("memcpy_peer/p2p:off/dir:uni/pair:0to1"), 63.0, 0.1);

  auto on = book_for("nvlink-two-gpus-edited");
  const std::string family = "memcpy_peer/p2p:on/dir:bi/pair:0to1";
  routed(*on, two_gpu_context(true), {family});
  EXPECT_TRUE(on->peer_off().empty());
  EXPECT_NEAR(on->ceiling_gbps(family), 18 * 26.562, 0.01);
  EXPECT_NEAR(on->row_ceiling_gbps(family, 2, 1), 2 * 18 * 26.562, 0.01);
}

TEST(Links, BetweenNodesTheActivePortCounts) {
  auto book = book_for("nvlink-two-gpus-edited");
  routed(*book, two_gpu_context(true), {"mpi_host/mode:stream", "mpi_host/mode:stream/pairs:2"});
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
  const std::string edited = h200x2_edited("round-trip", {{"links=18", "links=17"}});
  const RecordedAnswers real(edited);
  const std::string real_copy =
      testing::TempDir() + "links-dump-real-" + std::to_string(::getpid());
  record_answers(real, {"0000:00:06.0", "0000:00:07.0"}, real_copy);
  const NvlinkAnswers nv = RecordedAnswers(real_copy).nvlink("0000:00:07.0", "0000:00:06.0");
  EXPECT_EQ(nv.links, 17);
  EXPECT_EQ(nv.links_present, 18);
  EXPECT_EQ(nv.version_code, 6);
  EXPECT_EQ(nv.link_speed_mbps, 26562);
  EXPECT_TRUE(nv.via_switch);
  std::filesystem::remove_all(real_copy);
  std::filesystem::remove_all(edited);

  // The edited capture: a down InfiniBand port, which the real one has none of.
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

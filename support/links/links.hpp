// The links a row's bytes cross and their peaks: "is my bandwidth normal?" (docs/links.md).
//
// What the hardware says comes through one seam, LinkAnswers: NVML's answers about a GPU and
// a GPU pair, and a sysfs tree (the real /sys, or a recorded one). The production answers are
// NVML's (support/gpu/nvml.hpp); the tests read recorded ones (RecordedAnswers, from
// tests/fixtures/links/). Everything else here is plain arithmetic on those answers:
//   PCIe     GT/s per lane x lanes x encoding (8b/10b to Gen2, 128b/130b Gen3-5) / 8, per direction
//   NVLink   active links x the per-link rate NVML gives (its common speed field, else its
//            per-link speed field, else the rate of the NVLink version it names), per direction
//   memory   bus width x 2 transfers per memory clock (HBM), shared by a copy's read and write
//   network  /sys/class/infiniband/*/ports/*/rate of the active ports, per direction
// A Book keeps the links a run uses (each once), the route each family takes over them, and
// what the links ran at while the transfers ran.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/json.hpp"
#include "base/pairs.hpp"

namespace xfer::links {

// "0000:19:00.0" whatever the spelling (NVML's 8-digit domain, upper-case hex); "" if malformed.
std::string normal_bus_id(const std::string& text);

// NVML's answers about one GPU; -1 where NVML does not say.
struct GpuAnswers {
  int pcie_gen_current = -1;
  int pcie_gen_max = -1;      // nvmlDeviceGetMaxPcieLinkGeneration: the GPU's and the system's
  int pcie_gen_gpu_max = -1;  // nvmlDeviceGetGpuMaxPcieLinkGeneration: the GPU's own
  int pcie_width_current = -1;
  int pcie_width_max = -1;
  int memory_bus_bits = -1;
  int memory_clock_max_mhz = -1;
};

// NVML's answers about the NVLink links from GPU a to GPU b.
struct NvlinkAnswers {
  int links = -1;         // active links joining them (via NVSwitch: the fewer of a's and b's
                          // switch links)
  int version_code = -1;  // nvmlDeviceGetNvLinkVersion of a's first active link, as NVML says it
  double link_mbps = -1;  // NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON: MB/s per link and direction
  double link_speed_mbps = -1;  // NVML_FI_DEV_NVLINK_GET_SPEED of that link (scoped per link)
  int links_present = -1;  // the links the pair could use, active or not (NVSwitch: the fewer of
                           // a's and b's, NVML_FI_DEV_NVLINK_LINK_COUNT); more than `links`:
                           // some are down
  bool via_switch = false;
};

// The rate of one NVLink link, per direction, and where it came from: NVML's common speed
// field, else its per-link speed field, else the rate of the NVLink version NVML names
// (nvmlNvlinkVersion_t). Unknown (gbps 0, `why` says so) when none of them answers or the
// version is not one xferbench knows; never guessed from the GPU's model.
struct NvlinkRate {
  double link_gbps = 0;
  std::string source;  // e.g. "NVLink 4.0 (NVML version code 6)"
  std::string why_unknown;
};
NvlinkRate nvlink_rate(const NvlinkAnswers& answers);
// "4.0" for NVML's code 6 (nvmlNvlinkVersion_t); "" for a code xferbench does not know.
std::string nvlink_version_name(int version_code);

// The seam: what NVML says, and where the sysfs tree is.
class LinkAnswers {
 public:
  virtual ~LinkAnswers() = default;
  virtual bool nvml_available() const = 0;
  virtual std::string why_no_nvml() const = 0;
  virtual GpuAnswers gpu(const std::string& bus_id) const = 0;
  virtual NvlinkAnswers nvlink(const std::string& bus_a, const std::string& bus_b) const = 0;
  virtual std::string sysfs_root() const = 0;  // "/" in production
};

#ifdef XFER_HAVE_CUDA
// NVML's answers (support/gpu/nvml.cpp) and the real /sys.
std::unique_ptr<LinkAnswers> system_answers();
#endif

// Answers recorded by --xfer_dump_links (tests/fixtures/links/README.md): DIR/nvml.txt (absent:
// NVML missing) and the sysfs files under DIR/sys.
class RecordedAnswers : public LinkAnswers {
 public:
  explicit RecordedAnswers(const std::string& dir);  // throws xfer::UsageError on a bad line
  bool nvml_available() const override { return nvml_; }
  std::string why_no_nvml() const override { return nvml_ ? "" : "no nvml.txt recorded"; }
  GpuAnswers gpu(const std::string& bus_id) const override;
  NvlinkAnswers nvlink(const std::string& bus_a, const std::string& bus_b) const override;
  std::string sysfs_root() const override { return dir_; }

 private:
  std::string dir_;
  bool nvml_ = false;
  std::map<std::string, GpuAnswers> gpus_;
  std::map<std::pair<std::string, std::string>, NvlinkAnswers> pairs_;
};

// Writes `answers` for `bus_ids` in RecordedAnswers' format: DIR/nvml.txt, and copies of the
// PCIe link files (the GPUs' and their upstream ports') and the InfiniBand port rates under
// DIR/sys. Returns the files written; throws xfer::Error when DIR cannot be written.
std::vector<std::string> record_answers(const LinkAnswers& answers,
                                        const std::vector<std::string>& bus_ids,
                                        const std::string& dir);

// Per-direction line rate in GB/s (1e9 B/s) after line encoding, before protocol overhead;
// 0 for an unknown generation or width.
double pcie_gbps(int generation, int width);
// "32.0 GT/s PCIe" -> 5; -1 if unknown.
int pcie_generation_of(const std::string& speed_text);

struct Pcie {
  int gen = -1, width = -1;          // as trained when read
  int max_gen = -1, max_width = -1;  // the lower of the GPU's and the slot's maxima
  std::string source;                // "NVML", "sysfs", "NVML+sysfs" or "" (nothing known)
  bool known() const { return gen > 0 && width > 0; }
  bool below_max() const;
};
// The GPU's PCIe link now: NVML where it answers, sysfs (the device and its upstream port)
// where it does not; the maxima are the lowest that either names.
Pcie read_pcie(const LinkAnswers& answers, const std::string& bus_id);

// One network port: "mlx5_0/1", and its rate in GB/s per direction (0 unknown).
struct Port {
  std::string name;
  double gbps = 0;
};
// The active InfiniBand/RoCE ports under ROOT/sys/class/infiniband.
std::vector<Port> network_ports(const std::string& sysfs_root);
// "400 Gb/sec (4X NDR)" -> 50 (GB/s); 0 if unreadable.
double port_gbps(const std::string& rate_text);

// A link a row's bytes cross.
struct Link {
  std::string id;       // "pcie:0000:19:00.0", "nvlink:0000:19:00.0>0000:2a:00.0", "memory:...",
                        // "network:mlx5_0/1"
  std::string kind;     // "PCIe", "NVLink", "memory", "network"
  std::string bus_id;   // the GPU (PCIe, memory, NVLink's first end)
  double gbps = 0;      // per direction as the link ran (PCIe: the fastest reading); 0 unknown
  double max_gbps = 0;  // at the link's maximum (PCIe); equals gbps for the others
  Pcie pcie;            // PCIe: the fastest reading while transfers ran (idle: at start)
  bool read_running = false;                            // PCIe: read while a transfer ran
  NvlinkAnswers nvlink;                                 // NVLink
  std::string rate_source;                              // NVLink: where its rate came from
  std::string why_unknown;                              // a link crossed whose rate is unknown
  int memory_bus_bits = -1, memory_clock_max_mhz = -1;  // memory
  std::string describe() const;  // "PCIe Gen5 x16 of GPU 0000:19:00.0 (63.0 GB/s per direction)"
  bool downtrained() const { return kind == "PCIe" && read_running && pcie.below_max(); }
  // NVLink: fewer links active between the pair than their GPUs have.
  bool degraded() const {
    return kind == "NVLink" && nvlink.links > 0 && nvlink.links_present > nvlink.links;
  }
};

// How a family's bytes cross its links. Serial: one after the other (a staged copy: down the
// first link, then up the second): the ceiling is 1 / sum(1 / rate). Overlapped: at the same
// time (a pipelined staged copy, each link one way): the slowest link.
struct Route {
  enum class Join { Serial, Overlapped };
  std::vector<std::string> links;  // ids in the Book
  Join join = Join::Serial;
};

// What a family's bytes cross, as its path declares when it registers (Registry::add): the
// route (routes.hpp) follows from it and what the run learnt of the GPUs and ranks, never from
// the family's name.
struct Crossing {
  enum class Kind {
    None,            // nothing modelled
    GpuCopy,         // this process copies GPU src -> GPU dst (memcpy_peer)
    HostStagedCopy,  // this process copies GPU src -> host -> GPU dst (host_staging)
    HostCopy,        // this process copies between host memory and GPU src (ce_copy, sm_copy)
    LocalCopy,       // this process copies within GPU src's memory (dir:local of the same)
    RankHostMemory,  // a pair of ranks exchanges host memory (mpi_host)
    RankHostStaged,  // a pair of ranks stages GPU data through host memory (mpi_staged)
    RankGpuMemory,   // a pair of ranks hands GPU memory to a library (mpi_cuda_aware, nccl)
  };
  Kind kind = Kind::None;
  int src_gpu = -1;  // GpuCopy, HostStagedCopy, HostCopy, LocalCopy: visible devices of this
                     // process (HostCopy and LocalCopy: dst_gpu = src_gpu)
  int dst_gpu = -1;
  std::string src_bus;  // ... and their PCI bus ids, as the registering process probed them
  std::string dst_bus;
  bool peer_access = false;  // GpuCopy: GPU to GPU (p2p:on), else through the driver's staging
  bool at_once = false;      // staging: down and up overlap (pipelined), else in turn
  bool nccl = false;         // RankGpuMemory: NCCL's transports, else MPI's
  int rank_pairs = 1;        // the rank kinds: pairs at once (several: no route yet)
  int rank_a = -1;           // ... and with one pair, its ranks (--xfer_pairs resolved)
  int rank_b = -1;

  // Between visible GPUs `src` and `dst` of this process.
  static Crossing between_gpus(Kind kind, int src, int dst) {
    Crossing c;
    c.kind = kind;
    c.src_gpu = src;
    c.dst_gpu = dst;
    return c;
  }
  // Between the ranks of `pairs`, all at once.
  static Crossing between_ranks(Kind kind, const RankPairs& pairs) {
    Crossing c;
    c.kind = kind;
    c.rank_pairs = static_cast<int>(pairs.size());
    if (pairs.size() == 1) {
      c.rank_a = pairs[0].first;
      c.rank_b = pairs[0].second;
    }
    return c;
  }
};

// A GPU pair whose topology has a direct NVLink link while CUDA says peer access is off.
struct PeerOff {
  int src = 0, dst = 0;
  int nvlink_count = 0;
};

// The message of a row above 100% of its ceiling; "" when the row is within it (or unknown).
std::string over_line_rate(double row_gbps, double ceiling_gbps, const std::string& links);

class Book {
 public:
  // Without answers (no GPU code in this build, or not rank 0) the book knows no link.
  void set_answers(std::unique_ptr<LinkAnswers> answers);
  bool has_answers() const { return answers_ != nullptr; }
  const LinkAnswers* answers() const { return answers_.get(); }

  // The link ids (added once each): "" when nothing is known of the link. An NVLink link
  // that NVML counts is added even when its rate is unknown: the bytes cross it, not PCIe, so
  // its rows get no share (Link::why_unknown) rather than a wrong one.
  std::string pcie(const std::string& bus_id);
  std::string memory(const std::string& bus_id);
  std::string nvlink(const std::string& bus_a, const std::string& bus_b);
  std::string network();  // the fastest active port: "" if none

  // `family` crosses `route`; an empty route (a link unknown) records nothing.
  void set_route(const std::string& family, Route route);
  bool has_route(const std::string& family) const;
  void note_peer_off(PeerOff off) { peer_off_.push_back(off); }

  // Reads the PCIe links of `family`'s route now, keeping each one's fastest reading
  // (thread-safe: a sampler thread calls it while the transfer runs).
  void read_running(const std::string& family);
  // Whether a visit of `family` should read its links while it runs: its route has a PCIe link
  // not yet read at its maximum under load. Once every such link has been, reading more (a
  // thread and NVML calls beside every visit) would only cost time and disturb the CPU paths.
  bool wants_running_read(const std::string& family) const;

  // The ceiling of one direction of one pair of `family`, in GB/s (0 unknown), and the links
  // in words.
  double ceiling_gbps(const std::string& family) const;
  // The same for a row of `directions` (2: both ways at once) and `pairs`: each direction of a
  // PCIe or NVLink link has its own rate; a GPU's memory serves both directions together.
  double row_ceiling_gbps(const std::string& family, int directions, int pairs) const;
  std::string route_text(const std::string& family) const;

  // context.xferbench.links (docs/result-format.md).
  json::Value to_json() const;
  // Console lines: the links named once (an unknown rate with why), each degraded NVLink pair,
  // and each pair with peer access off despite a link.
  std::vector<std::string> lines() const;
  // After the rows ran: each downtrained link, degraded NVLink pair and pair with peer access
  // off.
  std::vector<std::string> problems() const;
  std::vector<Link> links() const;
  std::vector<std::string> downtrained() const;
  std::vector<std::string> degraded_lines() const;
  const std::vector<PeerOff>& peer_off() const { return peer_off_; }

 private:
  std::string add(Link link);
  std::unique_ptr<LinkAnswers> answers_;
  mutable std::mutex mutex_;
  std::vector<Link> links_;
  std::map<std::string, Route> routes_;
  std::vector<PeerOff> peer_off_;
};

// Reads the PCIe links of a family's route while it lives (every 10 ms from a thread of its
// own, and once more as it ends): an idle GPU drops its link to a lower generation, so only a
// reading taken while the transfer runs says how the link trains under load.
class RunningReader {
 public:
  RunningReader(Book& book, std::string family);
  ~RunningReader();
  RunningReader(const RunningReader&) = delete;
  RunningReader& operator=(const RunningReader&) = delete;

 private:
  Book& book_;
  std::string family_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

// The line rate of a PCIe link, NVLink pair (0 where its rate is unknown), GPU memory (a copy's
// payload: half the memory's rate), for the Book and the tests.
double nvlink_gbps(const NvlinkAnswers& answers);
double memory_copy_gbps(int bus_bits, int clock_mhz);

}  // namespace xfer::links

#include "links/routes.hpp"

#include <cstdlib>

namespace xfer::links {
namespace {

using json::member;
using json::text_of;

// The PCI bus id of visible device `index` (context.cuda.devices), "" if unknown.
std::string device_bus(const json::Value& context, int index) {
  const json::Value& devices = member(member(context, "cuda"), "devices");
  for (const auto& d : devices.is_array() ? devices.items() : std::vector<json::Value>{}) {
    const json::Value& i = member(d, "index");
    if (i.is_number() && static_cast<int>(i.number()) == index) return text_of(d, "pci_bus_id");
  }
  return "";
}

// The index of the visible device on bus `bus` (context.cuda.devices), -1 if unknown.
int device_index(const json::Value& context, const std::string& bus) {
  const json::Value& devices = member(member(context, "cuda"), "devices");
  for (const auto& d : devices.is_array() ? devices.items() : std::vector<json::Value>{}) {
    const json::Value& i = member(d, "index");
    if (i.is_number() && normal_bus_id(text_of(d, "pci_bus_id")) == normal_bus_id(bus))
      return static_cast<int>(i.number());
  }
  return -1;
}

// context.cuda.pairs: whether CUDA gives src peer access to dst; -1 if not recorded.
int peer_state(const json::Value& context, int src, int dst) {
  const json::Value& pairs = member(member(context, "cuda"), "pairs");
  if (!pairs.is_array()) return -1;
  for (const auto& p : pairs.items()) {
    const json::Value& s = member(p, "src");
    const json::Value& d = member(p, "dst");
    if (s.is_number() && d.is_number() && static_cast<int>(s.number()) == src &&
        static_cast<int>(d.number()) == dst)
      return member(p, "p2p").is_true() ? 1 : 0;
  }
  return -1;
}

bool peer_access(const json::Value& context, int src, int dst) {
  return peer_state(context, src, dst) == 1;
}

Route both_pcie(Book& book, const std::string& a, const std::string& b, Route::Join join) {
  return Route{{book.pcie(a), book.pcie(b)}, join};
}

// GPU to GPU in one node: NVLink where NVML counts links, else both PCIe links at once.
Route gpu_to_gpu(Book& book, const std::string& a, const std::string& b) {
  if (const std::string nv = book.nvlink(a, b); !nv.empty())
    return Route{{nv}, Route::Join::Serial};
  return both_pcie(book, a, b, Route::Join::Overlapped);
}

Route::Join join_of(const Crossing& crossing) {
  return crossing.at_once ? Route::Join::Overlapped : Route::Join::Serial;
}

Route one_process_route(Book& book, const Crossing& crossing) {
  const std::string& a = crossing.src_bus;
  const std::string& b = crossing.dst_bus;
  if (a.empty() || b.empty()) return {};
  if (crossing.kind == Crossing::Kind::HostStagedCopy)
    return both_pcie(book, a, b, join_of(crossing));
  if (crossing.kind == Crossing::Kind::HostCopy) return Route{{book.pcie(a)}};
  if (crossing.kind == Crossing::Kind::LocalCopy) return Route{{book.memory(a)}};
  if (crossing.peer_access) return gpu_to_gpu(book, a, b);
  return both_pcie(book, a, b, Route::Join::Overlapped);
}

struct RankEnd {
  std::string host, bus;
};

RankEnd rank_end(const json::Value& context, int rank) {
  const json::Value& ranks = member(context, "ranks");
  for (const auto& r : ranks.is_array() ? ranks.items() : std::vector<json::Value>{}) {
    const json::Value& n = member(r, "rank");
    if (n.is_number() && static_cast<int>(n.number()) == rank)
      return {text_of(r, "host"), text_of(r, "pci_bus_id")};
  }
  return {};
}

Route rank_pair_route(Book& book, const json::Value& context, const Crossing& crossing,
                      const Transports& transports) {
  if (crossing.rank_pairs != 1) return {};
  const RankEnd a = rank_end(context, crossing.rank_a);
  const RankEnd b = rank_end(context, crossing.rank_b);
  if (a.host.empty() || b.host.empty()) return {};
  const bool inter = a.host != b.host;
  if (crossing.kind == Crossing::Kind::RankHostMemory)
    return inter ? Route{{book.network()}} : Route{};
  if (a.bus.empty() || b.bus.empty()) return {};
  if (crossing.kind == Crossing::Kind::RankHostStaged) {
    const auto join = join_of(crossing);
    return inter ? Route{{book.pcie(a.bus), book.network()}, join}
                 : both_pcie(book, a.bus, b.bus, join);
  }
  if (inter) return Route{{book.pcie(a.bus), book.network()}, Route::Join::Overlapped};
  if (normal_bus_id(a.bus) == normal_bus_id(b.bus)) return Route{{book.memory(a.bus)}};
  // Two GPUs of one node: the library copies GPU to GPU (Open MPI's smcuda by CUDA IPC, NCCL's
  // P2P transport) where CUDA gives peer access and the transport is not switched off; else it
  // stages through host memory (smcuda's shared-memory copies, NCCL's SHM transport), down
  // one PCIe link and up the other, pipelined: both at once.
  const bool transport_on = crossing.nccl ? transports.nccl_p2p : transports.mpi_cuda_ipc;
  const int peer = peer_state(context, device_index(context, a.bus), device_index(context, b.bus));
  if (transport_on && peer != 0) return gpu_to_gpu(book, a.bus, b.bus);
  return both_pcie(book, a.bus, b.bus, Route::Join::Overlapped);
}

#ifndef XFER_HAVE_CUDA
// A build without GPU code: no NVML, only /sys (PCIe devices, network ports).
class SysfsOnly : public LinkAnswers {
 public:
  bool nvml_available() const override { return false; }
  std::string why_no_nvml() const override { return "built without CUDA"; }
  GpuAnswers gpu(const std::string&) const override { return {}; }
  NvlinkAnswers nvlink(const std::string&, const std::string&) const override { return {}; }
  std::string sysfs_root() const override { return "/"; }
};
#endif

}  // namespace

std::unique_ptr<LinkAnswers> answers_for_run(const std::string& recorded_dir) {
  if (!recorded_dir.empty()) return std::make_unique<RecordedAnswers>(recorded_dir);
#ifdef XFER_HAVE_CUDA
  return system_answers();
#else
  return std::make_unique<SysfsOnly>();
#endif
}

Transports transports_from(const std::function<const char*(const char*)>& env) {
  const auto is = [&env](const char* name, const char* value) {
    const char* set = env(name);
    return set && std::string(set) == value;
  };
  Transports t;
  t.nccl_p2p = !is("NCCL_P2P_DISABLE", "1");
  t.mpi_cuda_ipc = !is("OMPI_MCA_btl_smcuda_use_cuda_ipc", "0");
  return t;
}

void route_families(Book& book, const json::Value& context,
                    const std::vector<FamilyCrossing>& families, const Transports& transports) {
  if (!book.has_answers()) return;
  for (const auto& [family, crossing] : families) {
    Route route;
    switch (crossing.kind) {
      case Crossing::Kind::GpuCopy:
      case Crossing::Kind::HostStagedCopy:
      case Crossing::Kind::HostCopy:
      case Crossing::Kind::LocalCopy:
        route = one_process_route(book, crossing);
        break;
      case Crossing::Kind::RankHostMemory:
      case Crossing::Kind::RankHostStaged:
      case Crossing::Kind::RankGpuMemory:
        route = rank_pair_route(book, context, crossing, transports);
        break;
      case Crossing::Kind::None:
        break;
    }
    book.set_route(family, route);
  }
  // Peer access off although NVML counts NVLink links between the GPUs.
  const json::Value& pairs = member(member(context, "cuda"), "pairs");
  if (!pairs.is_array()) return;
  for (const auto& p : pairs.items()) {
    const int src = static_cast<int>(json::number_of(p, "src", -1));
    const int dst = static_cast<int>(json::number_of(p, "dst", -1));
    const std::string a = device_bus(context, src);
    const std::string b = device_bus(context, dst);
    if (a.empty() || b.empty() || peer_access(context, src, dst)) continue;
    const NvlinkAnswers nv = book.answers()->nvlink(a, b);
    if (nv.links > 0) book.note_peer_off({src, dst, nv.links});
  }
}

}  // namespace xfer::links

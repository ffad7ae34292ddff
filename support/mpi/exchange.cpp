#include "mpi/exchange.hpp"

#include <algorithm>

#include "base/error.hpp"
#include "base/pattern.hpp"
#include "base/sizes.hpp"
#include "config/config.hpp"

namespace xfer {

const std::vector<Mode>& all_modes() {
  static const std::vector<Mode> modes = {Mode::PingPong, Mode::Stream, Mode::Bidir};
  return modes;
}

const char* mode_name(Mode mode) {
  switch (mode) {
    case Mode::PingPong:
      return "pingpong";
    case Mode::Stream:
      return "stream";
    case Mode::Bidir:
      return "bidir";
  }
  return "?";
}

int directions(Mode mode) { return mode == Mode::Bidir ? 2 : 1; }

std::string with_pairs(const std::string& family, const RankPairs& pairs) {
  return pairs.size() > 1 ? family + "/pairs:" + std::to_string(pairs.size()) : family;
}

std::string exchange_family(const std::string& path, Mode mode, const Config& config,
                            const RankPairs& pairs, bool mpi_acks) {
  const bool ack_in_buffers = mpi_acks && mode == Mode::Stream && config.ack_in_buffers;
  return with_pairs(path + "/mode:" + mode_name(mode) + (ack_in_buffers ? "/ack:buffers" : ""),
                    pairs);
}

namespace {
int bounded(int wanted, std::uint64_t bytes, std::uint64_t budget) {
  const std::uint64_t fit = std::max<std::uint64_t>(1, budget / std::max<std::uint64_t>(bytes, 1));
  return static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(wanted), fit));
}
}  // namespace

int window_for(int window, std::uint64_t bytes, std::uint64_t in_flight) {
  return bounded(window, bytes, in_flight);
}

int slots_for(int window, std::uint64_t bytes, std::uint64_t in_flight) {
  return bounded(window_for(window, bytes, in_flight), bytes, std::uint64_t{256} << 10);
}

std::int64_t calls_per_sample(Mode mode, int window, std::uint64_t bytes, std::uint64_t in_flight) {
  if (mode == Mode::PingPong) return batch_for(bytes);
  constexpr std::uint64_t kSampleBytes = std::uint64_t{16} << 20;
  const std::uint64_t per_window =
      static_cast<std::uint64_t>(window_for(window, bytes, in_flight)) * bytes;
  return static_cast<std::int64_t>(std::clamp<std::uint64_t>(kSampleBytes / per_window, 1, 64));
}

std::int64_t messages_per_sample(Mode mode, int window, std::uint64_t bytes,
                                 std::uint64_t in_flight) {
  const std::int64_t calls = calls_per_sample(mode, window, bytes, in_flight);
  return mode == Mode::PingPong ? calls : calls * window_for(window, bytes, in_flight);
}

Traffic traffic_of(Mode mode, const PairRole& role) {
  Traffic t;
  if (!role.active()) return t;
  t.sends = role.leader || mode == Mode::Bidir;
  t.sends_as_leader = role.leader;
  t.receives = !(mode == Mode::Stream && role.leader);
  t.expects_leader = !(mode == Mode::Bidir && role.leader);
  return t;
}

HostSlots::HostSlots(const Traffic& traffic, int slots, std::size_t bytes, std::uint64_t row_seed)
    : traffic_(traffic), slots_(slots), bytes_(bytes), seed_(row_seed) {
  const std::size_t total = bytes * static_cast<std::size_t>(slots);
  if (traffic.sends) {
    send_ = allocate_pages(total, "host memory for the send buffer");
    for (int s = 0; s < slots; ++s)
      fill_pattern(send().at(s), bytes, slot_seed(seed_, s, traffic.sends_as_leader));
  }
  if (traffic.receives) recv_ = allocate_pages(total, "host memory for the receive buffer");
}

void HostSlots::poison() {
  if (!traffic_.receives) return;
  for (int s = 0; s < slots_; ++s)
    fill_pattern(recv().at(s), bytes_, poison_seed(slot_seed(seed_, s, traffic_.expects_leader)));
}

void HostSlots::validate(bool corrupt) {
  if (!traffic_.receives) return;
  if (corrupt) recv_.get()[bytes_ / 2] ^= 0x01;
  for (int s = 0; s < slots_; ++s) {
    const Mismatch m =
        find_mismatches(recv().at(s), bytes_, slot_seed(seed_, s, traffic_.expects_leader));
    if (m.count == 0) continue;
    throw Error(
        describe(m, bytes_) +
        (slots_ > 1 ? " in slot " + std::to_string(s) + " of " + std::to_string(slots_) : ""));
  }
}

std::uint64_t slot_seed(std::uint64_t row_seed, int slot, bool from_leader) {
  if (slot == 0 && from_leader) return row_seed;
  return mix64(row_seed ^ (static_cast<std::uint64_t>(slot) << 1 | (from_leader ? 0 : 1)));
}

MpiExchange::MpiExchange(const World& world, const PairRole& role, std::size_t bytes, int tag_base,
                         bool ack_in_buffers)
    : world_(world),
      role_(role),
      message_(bytes),
      tag_(tag_base),
      ack_in_buffers_(ack_in_buffers) {}

void MpiExchange::round_trip(const SlotView& send, const SlotView& recv) {
  const MPI_Comm comm = world_.comm();
  if (role_.leader) {
    XFER_MPI_CHECK(MPI_Send(send.at(0), message_.count(), message_.type(), role_.peer, tag_, comm));
    XFER_MPI_CHECK(MPI_Recv(recv.at(0), message_.count(), message_.type(), role_.peer, tag_ + 1,
                            comm, MPI_STATUS_IGNORE));
  } else if (role_.active()) {
    XFER_MPI_CHECK(MPI_Recv(recv.at(0), message_.count(), message_.type(), role_.peer, tag_, comm,
                            MPI_STATUS_IGNORE));
    XFER_MPI_CHECK(
        MPI_Send(recv.at(0), message_.count(), message_.type(), role_.peer, tag_ + 1, comm));
  }
}

void MpiExchange::stream(const SlotView& send, const SlotView& recv, int window) {
  if (!role_.active()) return;
  const MPI_Comm comm = world_.comm();
  requests_.assign(static_cast<std::size_t>(window), MPI_REQUEST_NULL);
  for (int i = 0; i < window; ++i) {
    if (role_.leader)
      XFER_MPI_CHECK(MPI_Isend(send.at(i), message_.count(), message_.type(), role_.peer, tag_,
                               comm, &requests_[static_cast<std::size_t>(i)]));
    else
      XFER_MPI_CHECK(MPI_Irecv(recv.at(i), message_.count(), message_.type(), role_.peer, tag_,
                               comm, &requests_[static_cast<std::size_t>(i)]));
  }
  XFER_MPI_CHECK(MPI_Waitall(window, requests_.data(), MPI_STATUSES_IGNORE));
  if (ack_in_buffers_) {
    // osu_bw's acknowledgement: one byte between the buffers themselves (device memory on
    // device rows). The peer sends the first byte it received, so the leader's first send slot,
    // where it lands, keeps its pattern (and a corrupted byte still reaches validation).
    if (role_.leader)
      XFER_MPI_CHECK(
          MPI_Recv(send.at(0), 1, MPI_BYTE, role_.peer, tag_ + 1, comm, MPI_STATUS_IGNORE));
    else
      XFER_MPI_CHECK(MPI_Send(recv.at(0), 1, MPI_BYTE, role_.peer, tag_ + 1, comm));
  } else if (role_.leader) {
    XFER_MPI_CHECK(MPI_Recv(ack_, 4, MPI_BYTE, role_.peer, tag_ + 1, comm, MPI_STATUS_IGNORE));
  } else {
    XFER_MPI_CHECK(MPI_Send(ack_, 4, MPI_BYTE, role_.peer, tag_ + 1, comm));
  }
}

void MpiExchange::bidir(const SlotView& send, const SlotView& recv, int window) {
  if (!role_.active()) return;
  const MPI_Comm comm = world_.comm();
  requests_.assign(2 * static_cast<std::size_t>(window), MPI_REQUEST_NULL);
  for (int i = 0; i < window; ++i)  // receives first, so no message waits for its buffer
    XFER_MPI_CHECK(MPI_Irecv(recv.at(i), message_.count(), message_.type(), role_.peer, tag_, comm,
                             &requests_[static_cast<std::size_t>(i)]));
  for (int i = 0; i < window; ++i)
    XFER_MPI_CHECK(MPI_Isend(send.at(i), message_.count(), message_.type(), role_.peer, tag_, comm,
                             &requests_[static_cast<std::size_t>(window + i)]));
  XFER_MPI_CHECK(MPI_Waitall(2 * window, requests_.data(), MPI_STATUSES_IGNORE));
}

}  // namespace xfer

#include "gpu/device_pattern.hpp"
#include "gpu/device_slots.hpp"

namespace xfer::gpu {

DeviceSlots::DeviceSlots(const Traffic& traffic, int device, int slots, std::size_t bytes,
                         std::uint64_t row_seed)
    : traffic_(traffic), slots_(slots), bytes_(bytes), seed_(row_seed) {
  if (!traffic.sends && !traffic.receives) return;
  stream_ = Stream(device);
  const std::size_t total = bytes * static_cast<std::size_t>(slots);
  if (traffic.receives) recv_ = DeviceBuffer(device, total);
  if (traffic.sends) {
    send_ = DeviceBuffer(device, total);
    for (int s = 0; s < slots; ++s)
      fill_pattern_device(send().at(s), bytes, slot_seed(seed_, s, traffic.sends_as_leader),
                          stream_.get());
  }
  stream_.synchronize();
}

void DeviceSlots::poison() {
  if (!traffic_.receives) return;
  for (int s = 0; s < slots_; ++s)
    poison_device(recv().at(s), bytes_, slot_seed(seed_, s, traffic_.expects_leader),
                  stream_.get());
  stream_.synchronize();
}

void DeviceSlots::validate(bool corrupt) {
  if (!traffic_.receives) return;
  if (corrupt) flip_byte_device(recv_.data(), bytes_ / 2, stream_.get());
  for (int s = 0; s < slots_; ++s) {
    const Mismatch m = count_mismatches_device(
        recv().at(s), bytes_, slot_seed(seed_, s, traffic_.expects_leader), stream_.get());
    if (m.count == 0) continue;
    throw Error(
        describe(m, bytes_) +
        (slots_ > 1 ? " in slot " + std::to_string(s) + " of " + std::to_string(slots_) : ""));
  }
}

}  // namespace xfer::gpu

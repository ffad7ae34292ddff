// Reading sysfs (the real /sys, or a tree recorded under a fixture's directory): the helpers
// the PCIe and network readers (sysfs.cpp) and the recorder of answers (recorded.cpp) share.
#pragma once

#include <filesystem>
#include <string>

namespace xfer::links::sysfs {

// The first line of `file`; "" when it cannot be read.
std::string first_line(const std::filesystem::path& file);
// ROOT/sys/bus/pci/devices/BUSID.
std::filesystem::path pci_device(const std::string& root, const std::string& bus_id);
// The port above the GPU in the PCIe tree (its slot), "" where sysfs has none with a link.
std::filesystem::path upstream_port(const std::string& root, const std::string& bus_id);

}  // namespace xfer::links::sysfs

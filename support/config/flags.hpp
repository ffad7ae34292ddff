// xferbench's own flags (--xfer_*) as one table, each with its environment fallback, the
// form of its value, its help line and what it sets in the Config; and the parsers of their
// values. config.cpp reads the table for the command line, help.cpp for --help.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace xfer {

struct Flag {
  const char* name;   // without the leading "--"
  const char* env;    // environment fallback
  const char* value;  // the form of its value, for --help and errors
  const char* help;
  std::function<void(Config&, const std::string& flag, const std::string& value)> apply;
  bool test_only = false;
};

// Every --xfer_* flag, in --help's order.
const std::vector<Flag>& flags();

// A whole number from `low` to `high`; throws UsageError "FLAG='VALUE': expected FORM".
int parse_int(const std::string& flag, const std::string& value, int low, int high,
              const char* form);
// A number from `low` to `high`; throws UsageError "FLAG='VALUE': expected FORM".
double parse_number(const std::string& flag, const std::string& value, double low, double high,
                    const char* form);
// The items of a comma-separated list, empty ones left out.
std::vector<std::string> split_list(const std::string& text);

}  // namespace xfer

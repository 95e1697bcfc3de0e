// Forward declarations of the Mustache types the site's headers name, so a
// header can pass page data by reference without pulling the whole template
// engine (kainjow/mustache.hpp) into every file that includes it.
#pragma once

#include <string>

namespace kainjow::mustache {
template <typename StringType>
class basic_data;
using data = basic_data<std::string>;
}  // namespace kainjow::mustache

namespace torchgauge::reporter {
namespace mu = kainjow::mustache;
}  // namespace torchgauge::reporter

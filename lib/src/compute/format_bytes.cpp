// Byte counts as people read them, for messages (the memory estimate, file budgets).
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

#include "attn/compute/memory.hpp"

namespace attn {

std::string format_bytes(std::uint64_t bytes) {
    if (bytes == std::numeric_limits<std::uint64_t>::max()) return "more than 16 EiB";  // a saturated sum
    static const char* const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (value >= 1024 && unit < 6) {
        value /= 1024;
        ++unit;
    }
    char text[32];
    if (unit == 0)
        std::snprintf(text, sizeof text, "%llu %s", static_cast<unsigned long long>(bytes), bytes == 1 ? "byte" : "bytes");
    else
        std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
    return text;
}

}  // namespace attn

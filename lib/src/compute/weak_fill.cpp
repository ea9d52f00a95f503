#include "attn/compute/weak_fill.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "attn/text/number_text.hpp"

namespace attn {
namespace {

std::string number(double v) { return significant_text(v, 4); }

}  // namespace

void weak_fill_finding::merge(const weak_fill_finding& other) {
    low = std::min(low, other.low);
    high = std::max(high, other.high);
    const auto order = [](const weak_fill_finding& x) {  // batch, query, head, key
        return std::array<std::size_t, 4>{x.at[0], x.at[2], x.at[1], x.at[3]};
    };
    if (other.worst > worst || (other.worst == worst && other.worst > 0.0f && order(other) < order(*this))) {
        worst = other.worst;
        std::copy(other.at, other.at + 4, at);
    }
}

void weak_fill_warning(const config& c, const weak_fill_finding& f, warning_list& out) {
    if (std::isinf(c.fill) || !(f.worst >= 1e-6f)) return;
    out.push_back({"masked", "--fill " + fill_text(c) + " is not far below the scores (the scaled scores of allowed keys "
                             "lie in " + number(f.low) + " .. " + number(f.high) + "), so masked keys still get weight: up to " +
                             number(f.worst) + " at batch " + std::to_string(f.at[0]) + ", head " + std::to_string(f.at[1]) +
                             ", query " + std::to_string(f.at[2]) + ", key " + std::to_string(f.at[3]) +
                             ". Use -inf, or a fill such as -1e9"});
}

}  // namespace attn

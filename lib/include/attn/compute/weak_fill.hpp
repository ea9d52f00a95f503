#pragma once
// A finite --fill that is not far below the scores lets masked keys keep weight:
// the masked stage looks for the largest such weight, a block of rows at a time, and
// warns with it and where it is, when it is at least 1e-6 in a row with an allowed key.
#include <cmath>
#include <cstddef>

#include "attn/compute/config.hpp"
#include "attn/compute/warning.hpp"

namespace attn {

/// The largest weight of a masked key in a row that has an allowed key, where it is,
/// and the range of the allowed keys' scaled scores, over the rows seen so far.
struct weak_fill_finding {
    float worst = 0.0f;
    float low = INFINITY, high = -INFINITY;
    std::size_t at[4] = {0, 0, 0, 0};  // batch, head, query, key of `worst`

    /// Takes `other`'s findings in: the larger worst, on a tie the first in (batch, query, head, key) order.
    void merge(const weak_fill_finding& other);
};

/// The "masked" stage's warning from a finding of every row, when it is due.
void weak_fill_warning(const config& c, const weak_fill_finding& f, warning_list& out);

}  // namespace attn

// --format table, numbers: one notation for all the float tensors of a stage.
//
// PyTorch's print switches notation per tensor (torch_format's choose_format), so
// one stage could show w_q in fixed and w_k in scientific notation, and exact
// 0/1 rows as "1.  0.". The table is for reading across tensors instead: fixed
// notation with --precision digits everywhere in a stage, unless fixed notation
// would lose a value entirely, and then a note says why. --format torch keeps
// PyTorch's rule.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "attn/render/table_parts.hpp"

namespace attn::table {

namespace {

// More digits than this are never asked for (torch_format's number_buffer_size).
constexpr int max_precision = 40;

// From here on fixed notation is too wide to read ("-100000000.0000"); PyTorch's
// print switches at the same size.
constexpr double too_large = 1e8;

/// "0.00005" for precision 4: below it, a value prints as 0.0000.
std::string half_last_digit(int precision) {
    if (precision == 0) return "0.5";
    return "0." + std::string(static_cast<std::size_t>(precision), '0') + "5";
}

/// Whether `v` written with `precision` decimals shows no nonzero digit.
bool prints_as_zero(double v, int precision) {
    char buf[number_buffer_size];
    std::snprintf(buf, sizeof buf, "%.*f", precision, v);
    return std::none_of(buf, buf + std::char_traits<char>::length(buf), [](char ch) { return ch >= '1' && ch <= '9'; });
}

}  // namespace

void notation_survey::add(float v) {
    if (!std::isfinite(v) || v == 0.0f) return;
    const double a = std::fabs(static_cast<double>(v));
    lo_ = lo_ < 0 ? a : std::min(lo_, a);
    hi_ = std::max(hi_, a);
}

stage_numbers notation_survey::decide(const render_options& options) const {
    stage_numbers n;
    n.format = number_format{number_kind::fixed, std::clamp(options.precision, 0, max_precision), 1};
    if (options.notation == sci_mode::on) n.format.kind = number_kind::scientific;
    if (options.notation != sci_mode::automatic || lo_ < 0) return n;
    const bool small = prints_as_zero(lo_, n.format.precision);
    const bool large = hi_ >= too_large;
    if (!small && !large) return n;
    n.format.kind = number_kind::scientific;
    n.note = "(scientific notation: some values are ";
    if (small) n.note += "below " + half_last_digit(n.format.precision);
    if (small && large) n.note += " and some are ";
    if (large) n.note += "1e8 or larger";
    n.note += ")";
    return n;
}

stage_numbers choose_stage_numbers(const stage& s, const std::vector<element_grid>& grids, const config& c,
                                   const render_options& options) {
    // The masked stage writes a finite fill as the user typed it ("-1e9"), so it
    // does not push the scores into scientific notation; --sci-mode on writes it as a number.
    const bool masked = s.id() == stage_id::masked;
    const bool fill_as_text = masked && std::isfinite(c.fill) && options.notation != sci_mode::on;
    notation_survey survey;
    for (std::size_t k = 0; k < s.tensors.size(); ++k) {
        const tensor& t = s.tensors[k];
        if (t.type == element_type::boolean || t.values.size() == 0) continue;
        for_each_shown(grids[k], [&](float v) {
            if (!(fill_as_text && v == c.fill)) survey.add(v);
        });
    }
    stage_numbers n = survey.decide(options);
    if (masked) n.fill = c.fill;
    n.fill_as_text = fill_as_text;
    n.fill_text = fill_text(c);
    return n;
}

}  // namespace attn::table

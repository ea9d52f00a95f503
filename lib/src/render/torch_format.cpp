// PyTorch's summary and number rules (torch/_tensor_str.py), shared by the text formats.
//
// Numbers are written as doubles with printf, which matches Python's format() for
// these conversions: PyTorch formats float32 values after .item()/.tolist() has made
// Python floats (doubles) of them, and both printf and Python round correctly.
#include "attn/render/torch_format.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace attn {

namespace {

// More digits than this are never asked for (see number_buffer_size).
constexpr int max_precision = 40;

constexpr std::size_t edge_items = 3;  // entries a summary keeps at each end of a long axis

/// The indices of one axis that are printed: all of them, or the first and
/// last edge_items when the tensor is summarised and the axis is longer than 6.
std::vector<std::size_t> shown_indices(std::size_t size, bool summarise) {
    std::vector<std::size_t> shown;
    if (summarise && size > 2 * edge_items) {
        for (std::size_t i = 0; i < edge_items; ++i) shown.push_back(i);
        for (std::size_t i = size - edge_items; i < size; ++i) shown.push_back(i);
    } else {
        for (std::size_t i = 0; i < size; ++i) shown.push_back(i);
    }
    return shown;
}

/// What _Formatter looks at: the finite nonzero printed values.
struct value_survey {
    bool any = false;       // at least one finite nonzero value
    bool integral = true;   // every one of them is an integer
    double lo = std::numeric_limits<double>::infinity();  // smallest |v|
    double hi = 0.0;                                      // largest |v|
    float widest_positive = 0.0f;  // the largest positive value (0: none)
    float widest_negative = 0.0f;  // the most negative value (0: none)
    bool any_false = false, any_true = false;  // for boolean tensors
};

value_survey survey(const element_grid& g) {
    value_survey s;
    for_each_shown(g, [&](float v) {
        (v != 0.0f ? s.any_true : s.any_false) = true;
        if (!std::isfinite(v) || v == 0.0f) return;
        const double a = std::fabs(static_cast<double>(v));
        s.any = true;
        s.lo = std::min(s.lo, a);
        s.hi = std::max(s.hi, a);
        if (v != std::ceil(v)) s.integral = false;
        s.widest_positive = std::max(s.widest_positive, v);
        s.widest_negative = std::min(s.widest_negative, v);
    });
    return s;
}

/// _Formatter.max_width over the finite nonzero values. The length of "%.4f" and
/// "%.0f" never shrinks as |v| grows, and "%.4e" of a float always has a two-digit
/// exponent, so the widest text is that of the largest positive or the most negative value.
std::size_t max_width(const value_survey& s, const number_format& f) {
    char buf[number_buffer_size];
    std::size_t width = 1;
    for (float v : {s.widest_positive, s.widest_negative})
        if (v != 0.0f) width = std::max(width, format_number(v, f, buf).size());
    return width;
}

/// Python's True/False: 4 or 5 characters wide.
std::size_t boolean_width(const value_survey& s) {
    if (s.any_false) return 5;
    return s.any_true ? 4 : 1;
}

}  // namespace

bool summarised(const tensor& t, const render_options& options) {
    return !options.full && t.values.size() > summarise_threshold;
}

bool gap_before(const std::vector<std::size_t>& shown, std::size_t k) {
    return k > 0 && shown[k] != shown[k - 1] + 1;
}

element_grid make_grid(const tensor& t, bool summarise) {
    element_grid g;
    g.data = t.values.data();
    for (std::size_t a = 0; a < t.values.dimension(); ++a) {
        g.shape.push_back(t.values.shape()[a]);
        g.strides.push_back(static_cast<std::ptrdiff_t>(t.values.strides()[a]));
        g.shown.push_back(shown_indices(g.shape.back(), summarise));
    }
    return g;
}

number_format choose_format(const tensor& t, const element_grid& g, const render_options& options) {
    number_format f{number_kind::fixed, std::clamp(options.precision, 0, max_precision), 1};
    if (t.values.size() == 0) return f;
    const value_survey s = survey(g);
    if (t.type == element_type::boolean) {
        f.kind = number_kind::boolean;
        f.width = boolean_width(s);
        return f;
    }
    if (!s.any) {
        // PyTorch returns before sci_mode is applied: zeros print "0.", whatever options say.
        f.kind = number_kind::integer;
        return f;
    }
    const bool wide = s.hi / s.lo > 1000.0 || s.hi > 1e8;
    if (s.integral)
        f.kind = wide ? number_kind::scientific : number_kind::integer;
    else
        f.kind = (wide || s.lo < 1e-4) ? number_kind::scientific : number_kind::fixed;
    f.width = max_width(s, f);
    if (options.notation == sci_mode::on) f.kind = number_kind::scientific;
    if (options.notation == sci_mode::off)
        f.kind = s.integral ? number_kind::integer : number_kind::fixed;
    return f;
}

std::string_view format_number(float v, const number_format& f, char* buf) {
    const double d = v;
    if (f.kind == number_kind::boolean) return v != 0.0f ? "True" : "False";
    if (std::isnan(v)) return "nan";                   // printf may write "-nan"; Python never does
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";  // and no "." in integer notation
    // std::to_chars with a precision writes what printf's %.*e / %.*f writes, in the C
    // locale, several times faster (it is most of a small run's time, docs/speed.md).
    char* const end = buf + number_buffer_size - 1;
    std::to_chars_result r{};
    if (f.kind == number_kind::scientific)
        r = std::to_chars(buf, end, d, std::chars_format::scientific, f.precision);
    else if (f.kind == number_kind::integer)
        r = std::to_chars(buf, end - 1, d, std::chars_format::fixed, 0);
    else
        r = std::to_chars(buf, end, d, std::chars_format::fixed, f.precision);
    if (r.ec != std::errc{}) {  // a --precision too long for the buffer: printf truncates it
        const int n = f.kind == number_kind::scientific ? std::snprintf(buf, number_buffer_size, "%.*e", f.precision, d)
                                                        : std::snprintf(buf, number_buffer_size, "%.*f", f.precision, d);
        return {buf, std::min(static_cast<std::size_t>(std::max(n, 0)), number_buffer_size - 1)};
    }
    if (f.kind == number_kind::integer) *r.ptr++ = '.';
    return {buf, static_cast<std::size_t>(r.ptr - buf)};
}

}  // namespace attn

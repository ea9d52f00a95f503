// --batch-index, --head, --row: which part of a tensor each view keeps (selection.hpp).
#include "attn/render/selection.hpp"

#include <xtensor/xstrided_view.hpp>

#include "attn/compute/error.hpp"

namespace attn {

namespace {

/// The index a view asks of an axis called `dim` in `t`, or none when it keeps the axis whole.
std::optional<std::size_t> wanted_index(const tensor& t, std::size_t axis, const render_options& options) {
    const std::string& dim = t.dims[axis];
    if (dim == "batch") return options.batch_index;
    if (dim == "head") {
        const bool broadcast = t.type == element_type::boolean && t.values.shape()[axis] == 1;  // the mask [B,1,Sq,Sk]
        return broadcast ? std::nullopt : options.head;
    }
    if (dim == "query" || dim == "seq") return options.row;
    return std::nullopt;
}

}  // namespace

std::size_t tensor_selection::size() const {
    std::size_t n = 1;
    for (const std::size_t s : shape) n *= s;
    return n;
}

bool has_view(const render_options& options) {
    return options.batch_index || options.head || options.row;
}

tensor_selection select_in(const tensor& t, const render_options& options) {
    tensor_selection s;
    s.shape.assign(t.values.shape().begin(), t.values.shape().end());
    for (std::size_t axis = 0; axis < s.shape.size() && axis < t.dims.size(); ++axis) {
        const std::optional<std::size_t> index = wanted_index(t, axis, options);
        if (!index) continue;
        if (*index >= s.shape[axis])
            throw error(t.name + ": " + t.dims[axis] + " index " + std::to_string(*index) + " is outside 0.." +
                        std::to_string(static_cast<long long>(s.shape[axis]) - 1));
        s.picks.push_back({axis, t.dims[axis], *index});
        s.shape[axis] = 1;
    }
    return s;
}

bool keeps_row(const std::vector<std::size_t>& shape, const tensor_selection& s, std::size_t row) {
    if (s.whole()) return true;
    std::size_t index[8] = {};
    for (std::size_t axis = shape.size() - 1; axis-- > 0;) {  // the leading axes, last first
        index[axis] = row % shape[axis];
        row /= shape[axis];
    }
    for (const axis_pick& p : s.picks)
        if (p.axis + 1 < shape.size() && index[p.axis] != p.index) return false;
    return true;
}

tensor selected_part(const tensor& t, const tensor_selection& s) {
    if (s.whole()) return t;
    xt::xstrided_slice_vector slices(t.values.dimension(), xt::all());
    for (const axis_pick& p : s.picks) slices[p.axis] = xt::range(p.index, p.index + 1);
    return {t.name, t.dims, xt::xarray<float>(xt::strided_view(t.values, slices)), t.type};
}

std::string torch_index(const tensor_selection& s) {
    if (s.whole()) return "";
    std::string text = "[";
    const std::size_t last = s.picks.back().axis;
    std::size_t next = 0;  // the pick that comes next
    for (std::size_t axis = 0; axis <= last; ++axis) {
        if (axis > 0) text += ", ";
        if (next < s.picks.size() && s.picks[next].axis == axis) {
            const std::size_t i = s.picks[next++].index;
            text += std::to_string(i) + ":" + std::to_string(i + 1);
        } else {
            text += ":";
        }
    }
    return text + "]";
}

bool summarised(const tensor_selection& s, const render_options& options) {
    return !options.full && s.size() > summarise_threshold;
}

element_grid make_grid(const tensor& t, const tensor_selection& s, const render_options& options) {
    element_grid g = make_grid(t, summarised(s, options));
    for (const axis_pick& p : s.picks) {
        g.shape[p.axis] = 1;
        g.shown[p.axis] = {p.index};
    }
    return g;
}

}  // namespace attn

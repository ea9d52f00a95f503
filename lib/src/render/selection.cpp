// --batch-index, --head, --row: which part of a tensor each view keeps, and what the
// table and torch print of it (selection.hpp).
#include "attn/render/selection.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>

#include <xtensor/xstrided_view.hpp>

#include "attn/compute/error.hpp"

namespace attn {

namespace {

/// The index a view asks of an axis called `dim` in `t`, or none when it keeps the axis whole.
std::optional<std::size_t> wanted_index(const tensor& t, std::size_t axis, const render_options& options) {
    const std::string& dim = t.dims[axis];
    if (dim == "batch") {
        // alibi's bias [1,H,Sq,Sk] is broadcast over the batch: its one entry is every item's
        const bool broadcast = t.values.shape()[axis] == 1;
        return broadcast && options.batch_index ? std::optional<std::size_t>(0) : options.batch_index;
    }
    if (dim == "head") {
        const bool broadcast = t.type == element_type::boolean && t.values.shape()[axis] == 1;  // the mask [B,1,Sq,Sk]
        return broadcast ? std::nullopt : options.head;
    }
    if (dim == "query" || dim == "seq") return options.row;
    return std::nullopt;
}

}  // namespace

std::size_t tensor_selection::size() const {
    return std::accumulate(shape.begin(), shape.end(), std::size_t{1}, std::multiplies<>());
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

std::vector<float> kept_rows(const tensor_shape& shape, const tensor_selection& s, std::size_t first_row,
                             std::size_t count, const float* data) {
    const std::size_t width = shape.back();
    std::vector<float> kept;
    for (std::size_t r = 0; r < count; ++r) {
        std::size_t index[8] = {};  // of the row, along the leading axes
        std::size_t row = first_row + r;
        for (std::size_t axis = shape.size() - 1; axis-- > 0;) {
            index[axis] = row % shape[axis];
            row /= shape[axis];
        }
        const auto picked = [&](const axis_pick& p) { return p.axis + 1 == shape.size() || index[p.axis] == p.index; };
        if (std::all_of(s.picks.begin(), s.picks.end(), picked))
            kept.insert(kept.end(), data + r * width, data + (r + 1) * width);
    }
    return kept;
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

element_grid printing_grid(const tensor& t, const render_options& options) {
    return make_grid(t, select_in(t, options), options);
}

namespace {

/// `into` |= the indices `shown` of an axis of `size`, where an empty `into` is every
/// index and stays so; `first`: `into` is not set yet.
void add_printed(std::vector<bool>& into, const std::vector<std::size_t>& shown, std::size_t size, bool& first) {
    if (!first && into.empty()) return;
    if (first) into.assign(size, false);
    first = false;
    for (const std::size_t i : shown) into[i] = true;
    if (std::find(into.begin(), into.end(), false) == into.end()) into.clear();
}

}  // namespace

void show_printed_rows_only(const config& c, const render_options& options, stage_plan& plan) {
    const auto B = static_cast<std::size_t>(c.batch), H = static_cast<std::size_t>(c.heads),
               Sq = static_cast<std::size_t>(c.seq), Sk = static_cast<std::size_t>(c.kv_seq),
               D = static_cast<std::size_t>(c.d_model), dk = D / std::max<std::size_t>(H, 1);
    bool first_query = true, first = true;
    const auto printed = [&](stage_id id, tensor_shape shape, std::vector<std::string> dims, std::size_t query) {
        if (!plan.shows(id)) return std::vector<std::vector<std::size_t>>{};
        const element_grid g = printing_grid(shape_only("t", std::move(dims), std::move(shape)), options);
        add_printed(plan.shown_query, g.shown[query], Sq, first_query);
        return g.shown;
    };
    for (const stage_info& info : stage_table)  // the planes: they all have one shape
        if (info.plane && plan.shows(info.id)) {
            const auto shown = printed(info.id, {B, H, Sq, Sk}, {"batch", "head", "query", "key"}, 2);
            add_printed(plan.shown_batch, shown[0], B, first);
            add_printed(plan.shown_head, shown[1], H, first = true);
            break;
        }
    // the stages after them, by their query axis
    printed(stage_id::context, {B, H, Sq, dk}, {"batch", "head", "seq", "head_dim"}, 2);
    printed(stage_id::merge, {B, Sq, H, dk}, {"batch", "seq", "head", "head_dim"}, 1);
    printed(stage_id::concat, {B, Sq, D}, {"batch", "seq", "d_model"}, 1);
    printed(stage_id::output, {B, Sq, D}, {"batch", "seq", "d_model"}, 1);
}

void printing_sink::begin(const trace& so_far, const stage& s) {
    shapes_.clear();
    grids_.clear();
    kept_.clear();
    if (options_.stats && options_.shows(s.id())) stats_.begin(so_far, s);
    if (!s.in_rows() || !options_.shows(s.id())) return;
    kept_.reserve(s.tensors.size());  // grids_ point into it
    for (const tensor& t : s.tensors) {  // shape_only: [B,H,Sq,Sk]
        element_grid g = printing_grid(t, options_);
        tensor_shape packed;
        for (std::size_t a = 0; a + 1 < g.rank(); ++a) packed.push_back(g.shown[a].size());
        packed.push_back(g.shape.back());
        const tensor_strides strides = contiguous_strides(packed);
        g.strides.assign(strides.begin(), strides.end());
        g.packed = true;
        kept_.emplace_back(packed[0] * static_cast<std::size_t>(strides[0]));
        g.data = kept_.back().data();
        grids_.push_back(std::move(g));
        shapes_.emplace_back(t.values.shape().begin(), t.values.shape().end());
    }
}

void printing_sink::rows(std::size_t index, std::size_t first_row, std::size_t count, const float* data) {
    if (index >= grids_.size()) return;  // a stage not printed
    if (options_.stats) stats_.rows(index, first_row, count, data);  // every row, printed or not
    const element_grid& g = grids_[index];
    const tensor_shape& shape = shapes_[index];
    const std::size_t width = shape.back();
    for (std::size_t r = 0; r < count; ++r) {
        // row first_row + r, over the leading axes in row-major order: its place among the rows printed
        std::size_t row = first_row + r, at = 0, scale = 1;
        bool printed = true;
        for (std::size_t a = shape.size() - 1; a-- > 0 && printed;) {
            const std::size_t i = row % shape[a];
            row /= shape[a];
            const auto& shown = g.shown[a];
            const auto found = std::lower_bound(shown.begin(), shown.end(), i);
            printed = found != shown.end() && *found == i;
            at += static_cast<std::size_t>(found - shown.begin()) * scale;
            scale *= shown.size();
        }
        if (printed) std::memcpy(kept_[index].data() + at * width, data + r * width, width * sizeof(float));
    }
}

void printing_sink::end(const trace& so_far, const stage& s) {
    if (options_.shows(s.id())) {
        if (!s.in_rows())
            for (const tensor& t : s.tensors) grids_.push_back(printing_grid(t, options_));
        print(so_far, s, grids_);
    }
    shapes_.clear();
    grids_.clear();
    kept_.clear();
}

void printing_sink::print_all(const trace& t) {
    for (const stage& s : t.stages) {
        begin(t, s);
        end(t, s);
    }
}

}  // namespace attn

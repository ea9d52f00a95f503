#include "attn/render/summary_keeper.hpp"

#include <algorithm>
#include <cstring>
#include <new>

#include <sys/mman.h>

#include "attn/render/selection.hpp"
#include "attn/render/torch_format.hpp"

namespace attn {

/// `count` floats of address space, given memory by the kernel page by page as they are
/// written; the rest reads as 0.
class summary_keeper::reserved_floats {
public:
    explicit reserved_floats(std::size_t count) : bytes_(std::max<std::size_t>(count, 1) * sizeof(float)) {
        void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) throw std::bad_alloc();
        data_ = static_cast<float*>(p);
    }
    ~reserved_floats() { munmap(data_, bytes_); }
    reserved_floats(const reserved_floats&) = delete;
    reserved_floats& operator=(const reserved_floats&) = delete;
    float* data() const { return data_; }

private:
    std::size_t bytes_;
    float* data_ = nullptr;
};

std::vector<std::vector<bool>> printed_indices(const tensor& t, const render_options& options) {
    const std::size_t rank = t.values.dimension();
    const tensor head = shape_only(t.name, t.dims, {t.values.shape().begin(), t.values.shape().end()});
    const element_grid grid = make_grid(head, select_in(t, options), options);
    std::vector<std::vector<bool>> printed;
    for (std::size_t a = 0; a + 1 < rank; ++a) {
        printed.emplace_back(t.values.shape()[a], false);
        for (const std::size_t i : grid.shown[a]) printed.back()[i] = true;
    }
    return printed;
}

namespace {

/// `into` |= `printed`, where an empty `into` is every index and stays so.
void add_printed(std::vector<bool>& into, const std::vector<bool>& printed, bool& first) {
    const bool every = std::find(printed.begin(), printed.end(), false) == printed.end();
    if (first) {
        into = every ? std::vector<bool>{} : printed;
        first = false;
        return;
    }
    if (into.empty()) return;
    if (every) {
        into.clear();
        return;
    }
    for (std::size_t i = 0; i < into.size(); ++i) into[i] = into[i] || printed[i];
}

}  // namespace

void show_printed_rows_only(const config& c, const render_options& options, stage_plan& plan) {
    const auto B = static_cast<std::size_t>(c.batch), H = static_cast<std::size_t>(c.heads),
               Sq = static_cast<std::size_t>(c.seq), Sk = static_cast<std::size_t>(c.kv_seq),
               D = static_cast<std::size_t>(c.d_model), dk = D / std::max<std::size_t>(H, 1);
    bool first_query = true;
    for (const stage_info& info : stage_table)
        if (info.plane && plan.shows(info.id)) {  // they all have one shape
            const auto printed = printed_indices(shape_only("weights", {"batch", "head", "query", "key"}, {B, H, Sq, Sk}), options);
            bool first = true;
            add_printed(plan.shown_batch, printed[0], first);
            first = true;
            add_printed(plan.shown_head, printed[1], first);
            add_printed(plan.shown_query, printed[2], first_query);
            break;
        }
    // the stages after the planes, by their query axis
    const auto query_rows = [&](stage_id id, tensor_shape shape, std::vector<std::string> dims, std::size_t axis) {
        if (plan.shows(id)) add_printed(plan.shown_query, printed_indices(shape_only("t", std::move(dims), std::move(shape)), options)[axis], first_query);
    };
    query_rows(stage_id::context, {B, H, Sq, dk}, {"batch", "head", "seq", "head_dim"}, 2);
    query_rows(stage_id::merge, {B, Sq, H, dk}, {"batch", "seq", "head", "head_dim"}, 1);
    query_rows(stage_id::concat, {B, Sq, D}, {"batch", "seq", "d_model"}, 1);
    query_rows(stage_id::output, {B, Sq, D}, {"batch", "seq", "d_model"}, 1);
}

summary_keeper::summary_keeper(trace& into, const render_options& options, std::size_t part_from)
    : into_(into), options_(options), part_from_(part_from) {}

summary_keeper::~summary_keeper() = default;

bool summary_keeper::printed_rows::contains(std::size_t row) const {
    if (all) return true;
    for (std::size_t a = shape.size(); a-- > 0;) {
        if (!per_axis[a][row % shape[a]]) return false;
        row /= shape[a];
    }
    return true;
}

/// The rows the table's and torch's grids read: make_grid over the part the views select
/// (render_torch prints selected_part, whose grid shows the same indices).
summary_keeper::printed_rows summary_keeper::rows_printed(const tensor& t) const {
    printed_rows rows;
    const std::size_t rank = t.values.dimension();
    if (rank < 2) return rows;
    const tensor_selection selection = select_in(t, options_);
    const element_grid grid = make_grid(shape_only(t.name, t.dims, {t.values.shape().begin(), t.values.shape().end()}),
                                        selection, options_);
    for (std::size_t a = 0; a + 1 < rank; ++a) {
        const std::size_t size = t.values.shape()[a];
        rows.shape.push_back(size);
        rows.per_axis.emplace_back(size, false);
        for (const std::size_t i : grid.shown[a]) rows.per_axis.back()[i] = true;
        if (grid.shown[a].size() != size) rows.all = false;
    }
    return rows;
}

/// Whether `t` is kept in its printed rows only: a [B,H,Sq,Sk] tensor (the others grow
/// with S, not S², the run holds most of them anyway, and the table's min, mean and max
/// of params read every element) that is summarised, owns its memory, row-major, and
/// large enough for it to matter.
bool summary_keeper::keeps_in_part(const tensor& t, const printed_rows& rows) const {
    const std::size_t rank = t.dims.size();
    const bool plane = rank >= 2 && t.dims[rank - 2] == "query" && t.dims[rank - 1] == "key";
    return plane && !rows.all && !t.is_view() && t.contiguous() && t.values.size() >= part_from_;
}

float* summary_keeper::reserve(std::size_t count) {
    memory_.push_back(std::make_unique<reserved_floats>(count));
    return memory_.back()->data();
}

void summary_keeper::begin(const trace&, const stage& s) {
    if (s.in_rows()) {
        begin_rows(s);
        return;
    }
    stage kept = s;
    for (tensor& t : kept.tensors) {
        const printed_rows rows = rows_printed(t);
        if (!keeps_in_part(t, rows)) {
            // kept as it is, sharing its storage; but a [B,H,Sq,Sk] tensor is copied: the
            // run changes its storage in place for the next step (stage_plan::sink_keeps)
            if (s.info->plane) t = tensor(t.name, t.dims, xt::xarray<float>(t.values), t.type);
            continue;
        }
        const std::size_t width = t.values.shape().back();
        const std::size_t row_count = t.values.size() / std::max<std::size_t>(width, 1);
        float* to = reserve(t.values.size());
        const float* from = t.values.data();  // contiguous, row-major (keeps_in_part)
        for (std::size_t row = 0; row < row_count; ++row)
            if (rows.contains(row)) std::memcpy(to + row * width, from + row * width, width * sizeof(float));
        t = reading_from(shape_only(t.name, t.dims, {t.values.shape().begin(), t.values.shape().end()}, t.type), to);
    }
    into_.stages.push_back(std::move(kept));
}

void summary_keeper::begin_rows(const stage& s) {
    begun_ = s;
    printed_.clear();
    written_.clear();
    for (const tensor& t : s.tensors) {
        printed_.push_back(rows_printed(t));
        written_.push_back(reserve(t.values.size()));
    }
}

void summary_keeper::rows(std::size_t index, std::size_t first_row, std::size_t count, const float* rows) {
    const std::size_t width = begun_.tensors[index].values.shape().back();
    const printed_rows& printed = printed_[index];
    for (std::size_t r = 0; r < count; ++r)
        if (printed.contains(first_row + r))
            std::memcpy(written_[index] + (first_row + r) * width, rows + r * width, width * sizeof(float));
}

void summary_keeper::end(const trace&, const stage& s) {
    if (!s.in_rows()) return;
    for (std::size_t k = 0; k < begun_.tensors.size(); ++k)
        begun_.tensors[k] = reading_from(std::move(begun_.tensors[k]), written_[k]);
    into_.stages.push_back(std::move(begun_));
    begun_ = stage{};
}

}  // namespace attn

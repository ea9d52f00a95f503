#include "attn/render/render_npz.hpp"

#include <vector>

#include "attn/compute/error.hpp"
#include "attn/io/config_fields.hpp"
#include "attn/io/output_file.hpp"
#include "attn/render/render_json.hpp"
#include "attn/render/render_stats.hpp"
#include "attn/render/selection.hpp"

namespace attn {

npz_stream::npz_stream(const config& c, const render_options& options, npz_writer& zip)
    : cfg_(c), options_(options), zip_(zip) {}

void npz_stream::begin(const trace& so_far, const stage& s) {
    if (options_.stats && options_.shows(s.id())) stats_.begin(so_far, s);
    open_ = options_.shows(s.id()) && s.in_rows();
    if (open_) {  // its arrays come in rows(), and end() closes them
        stage_name_ = std::string(s.name());
        heads_ = s.tensors;
        array_ = -1;
        return;
    }
    if (!options_.shows(s.id())) return;
    for (const tensor& whole : s.tensors) {
        const tensor_selection selection = select_in(whole, options_);
        // the selected part (the tensor itself when whole), a view that is not contiguous
        // copied in row-major order
        const tensor x = selection.whole() && !whole.contiguous()
                             ? tensor{whole.name, whole.dims, row_major_copy(whole), whole.type}
                             : selected_part(whole, selection);
        zip_.begin_array(std::string(s.name()) + "." + x.name, {x.values.shape().begin(), x.values.shape().end()},
                         x.type == element_type::boolean);
        zip_.write(x.values.data(), x.values.size());
        zip_.end_array();
    }
    write_stats(s.name(), s.tensors);
}

void npz_stream::write_stats(std::string_view stage_name, const std::vector<tensor>& tensors) {
    if (!options_.stats) return;
    for (std::size_t i = 0; i < tensors.size(); ++i)
        for (const stats_array& a : stats_arrays(stats_.of(i))) {
            zip_.begin_array("stats." + std::string(stage_name) + "." + tensors[i].name + "." + a.stat, a.shape, false);
            zip_.write(a.values.data(), a.values.size());
            zip_.end_array();
        }
}

void npz_stream::start_array(std::size_t index) {
    while (static_cast<std::ptrdiff_t>(index) > array_) {
        if (array_ >= 0) zip_.end_array();
        const tensor& head = heads_[static_cast<std::size_t>(++array_)];
        selection_ = select_in(head, options_);
        zip_.begin_array(stage_name_ + "." + head.name, selection_.shape, head.type == element_type::boolean);
    }
}

void npz_stream::rows(std::size_t index, std::size_t first_row, std::size_t count, const float* rows) {
    if (!open_) return;
    if (options_.stats) stats_.rows(index, first_row, count, rows);
    start_array(index);
    const tensor& head = heads_[index];
    const tensor_shape shape(head.values.shape().begin(), head.values.shape().end());
    if (selection_.whole()) {
        zip_.write(rows, count * shape.back());
        return;
    }
    const std::vector<float> kept = kept_rows(shape, selection_, first_row, count, rows);
    zip_.write(kept.data(), kept.size());
}

void npz_stream::end(const trace&, const stage&) {
    if (!open_) return;
    start_array(heads_.size() - 1);
    zip_.end_array();
    write_stats(stage_name_, heads_);
    open_ = false;
}

void npz_stream::finish() {
    zip_.add(npz_member::text_member("config", config_to_json(cfg_).dump()));
    if (has_view(options_)) zip_.add(npz_member::text_member("selection", selection_to_json(options_).dump()));
    zip_.finish();
}

void render_npz(const trace& t, const render_options& options, const std::string& path, const std::string& what) {
    output_file file(path, what);
    npz_writer zip(file.stream(), what);
    npz_stream npz(t.cfg, options, zip);
    for (const stage& s : t.stages) {
        npz.begin(t, s);
        npz.end(t, s);
    }
    npz.finish();
    file.commit();
}

}  // namespace attn

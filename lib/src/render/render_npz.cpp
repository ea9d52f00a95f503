#include "attn/render/render_npz.hpp"

#include <list>
#include <vector>

#include "attn/compute/error.hpp"
#include "attn/io/npz.hpp"
#include "attn/render/render_json.hpp"
#include "attn/render/selection.hpp"

namespace attn {
namespace {

/// The archive's members, and the copies they need: the parts of tensors that views
/// cut, and the tensors that are not contiguous (transpose, merge), in row-major order
/// as np.save writes t.numpy() (C order). The members point into the trace's tensors
/// where they can, or into these copies.
struct archive_members {
    std::vector<npz_member> members;
    std::vector<tensor> parts;
};

/// With a view (--batch-index, --head, --row) each array is the selected part, its
/// selected axes kept at size 1, and a "selection" text member says which.
void collect_members(const trace& t, const render_options& options, archive_members& a) {
    std::size_t cut = 0;  // parts never reallocate: reserve one per tensor that may be cut
    for (const stage& s : t.stages) cut += s.tensors.size();
    a.parts.reserve(cut);
    for (const stage& s : t.stages) {
        if (!options.shows(s.name())) continue;
        for (const tensor& whole : s.tensors) {
            const tensor_selection selection = select_in(whole, options);
            const tensor& x = selection.whole() && whole.contiguous() ? whole
                              : selection.whole() ? a.parts.emplace_back(tensor{whole.name, whole.dims,
                                                                                 xt::xarray<float>(whole.values), whole.type})
                                                  : a.parts.emplace_back(selected_part(whole, selection));
            a.members.push_back(npz_member::tensor(std::string(s.name()) + "." + x.name,
                                                   {x.values.shape().begin(), x.values.shape().end()},
                                                   x.values.data(), x.type == element_type::boolean));
        }
    }
    a.members.push_back(npz_member::text_member("config", config_to_json(t.cfg).dump()));
    if (has_view(options)) a.members.push_back(npz_member::text_member("selection", selection_to_json(options).dump()));
}

}  // namespace

void render_npz(const trace& t, const render_options& options, const std::string& path, const std::string& what) {
    archive_members a;
    collect_members(t, options, a);
    write_npz(path, what, a.members);
}

void render_npz(const trace& t, const render_options& options, std::ostream& out) {
    archive_members a;
    collect_members(t, options, a);
    write_npz(out, "--format npz", a.members);
}

}  // namespace attn

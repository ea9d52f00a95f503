// The reference's replaceable steps (forward_steps.hpp), PyTorch's own.
#include "attn/compute/forward_steps.hpp"

namespace attn {

tensor view_as(const stage& from, const tensor& x, std::string name, dims dim_names, const tensor_layout& layout) {
    const std::string path = std::string(from.name()) + "." + x.name;
    return as_strided(x, path, std::move(name), std::move(dim_names), layout.shape, layout.strides);
}

// x.transpose(1, 2): [B,S,H,dk] <-> [B,H,S,dk], axes 1 and 2 swap their sizes and
// strides over the same storage ([S*D, D, dk, 1] <-> [S*D, dk, D, 1]).
tensor heads_first(const stage&, const stage& view, std::size_t i, std::size_t, dims dim_names) {
    const tensor& x = view.tensors[i];
    return view_as(view, x, x.name, std::move(dim_names), transposed(x.layout(), 1, 2));
}

tensor heads_back(const stage& context, dims dim_names) {
    const tensor& x = context.tensors[0];
    return view_as(context, x, x.name, std::move(dim_names), transposed(x.layout(), 1, 2));
}

mask_rules run_mask_rules(const config& c) { return rules_of(c.mask, c.seq, c.kv_seq, first_query_position(c)); }

}  // namespace attn

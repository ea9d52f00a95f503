#pragma once
// --format torch: each tensor exactly as PyTorch 1.13's print(t) shows it, so a
// student can diff attn's output against a notebook cell:
//
//   # softmax.weights
//   tensor([[[[1.0000, 0.0000, 0.0000, 0.0000],
//             [0.4816, 0.5184, 0.0000, 0.0000],
//   ...
//
// Print options follow render_options: precision, notation (sci_mode) and full
// (profile="full": never summarise); linewidth is PyTorch's default, 80. No
// grad_fn or requires_grad suffix, since attn's tensors have no autograd history.
#include <ostream>
#include <string>

#include "attn/render/render_options.hpp"
#include "attn/render/selection.hpp"
#include "attn/compute/trace.hpp"

namespace attn {

/// --format torch as a stage sink: for each stage that options.shows, as it is complete,
/// for each of its tensors: "# stage.tensor\n", then the print(t) text, then "\n". With a
/// view (--batch-index, --head, --row; selection.hpp) a tensor that has the selected axes
/// is printed as print(t[1:2, 2:3]) prints it, under "# stage.tensor[1:2, 2:3]".
class torch_stream : public printing_sink {
public:
    torch_stream(const render_options& options, std::ostream& out);

private:
    void print(const trace& so_far, const stage& s, const std::vector<element_grid>& grids) override;
    std::ostream& out_;
};

/// A whole trace through torch_stream.
void render_torch(const trace& t, const render_options& options, std::ostream& out);

/// print(t) of one tensor, "tensor(...)", without the trailing newline.
std::string format_torch(const tensor& t, const render_options& options);

}  // namespace attn

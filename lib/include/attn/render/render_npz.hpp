#pragma once
// --format npz: every shown tensor as a NumPy array named "stage.tensor"
// ("softmax.weights"), in stage order, and "config", the run's config as JSON
// text. Python: z = np.load("t.npz"); z["softmax.weights"]; json.loads(str(z["config"])).
// With a view (--batch-index, --head, --row) each array is the selected part (its
// selected axes kept at size 1; selection.hpp) and "selection" holds render_json's
// selection block as JSON text. With --stats each tensor's statistics follow its array as
// float32 members "stats.<stage>.<tensor>.<stat>" (render_stats.hpp), of the whole tensor.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "attn/compute/stage_sink.hpp"
#include "attn/compute/tensor_stats.hpp"
#include "attn/compute/trace.hpp"
#include "attn/io/npz.hpp"
#include "attn/io/npz_writer.hpp"
#include "attn/render/render_options.hpp"
#include "attn/render/selection.hpp"

namespace attn {

/// Writes a whole trace's archive at `path` (npz_stream, stage by stage), whole or not
/// at all; errors name `what` ("--out t.npz").
void render_npz(const trace& t, const render_options& options, const std::string& path, const std::string& what);

/// --format npz written as the stages come (a stage_sink): each shown tensor an array
/// of `zip` as soon as its stage is complete, the [B,H,Sq,Sk] ones row by row when they
/// come in rows; finish() adds "config" (and "selection") and ends the archive. The
/// archive holds the arrays render_npz writes for the same stages (each with a data
/// descriptor: npz_writer.hpp), so nothing is held to the end and nothing is seeked.
class npz_stream : public stage_sink {
public:
    npz_stream(const config& c, const render_options& options, npz_writer& zip);

    void begin(const trace& so_far, const stage& s) override;
    void rows(std::size_t index, std::size_t first_row, std::size_t count, const float* rows) override;
    void end(const trace& so_far, const stage& s) override;
    void finish();

private:
    void start_array(std::size_t index);
    /// --stats: "stats.<stage>.<tensor>.<stat>" for each of `tensors` (render_stats.hpp).
    void write_stats(std::string_view stage_name, const std::vector<tensor>& tensors);

    const config& cfg_;
    const render_options& options_;
    npz_writer& zip_;
    bool open_ = false;
    std::string stage_name_;
    std::vector<tensor> heads_;
    std::ptrdiff_t array_ = -1;  // the tensor whose rows are being written
    tensor_selection selection_;
    stage_stats stats_;  // --stats: the stage's, as it comes
};

}  // namespace attn

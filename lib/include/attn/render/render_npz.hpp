#pragma once
// --format npz: every shown tensor as a NumPy array named "stage.tensor"
// ("softmax.weights"), in stage order, and "config", the run's config as JSON
// text. Python: z = np.load("t.npz"); z["softmax.weights"]; json.loads(str(z["config"])).
// With a view (--batch-index, --head, --row) each array is the selected part (its
// selected axes kept at size 1; selection.hpp) and "selection" holds render_json's
// selection block as JSON text.
#include <ostream>
#include <string>

#include "attn/render/render_options.hpp"
#include "attn/compute/trace.hpp"

namespace attn {

/// Writes the archive at `path`, whole or not at all; errors name `what` ("--out t.npz").
void render_npz(const trace& t, const render_options& options, const std::string& path, const std::string& what);

/// Writes the archive to `out` as it goes, without seeking (npz_writer.hpp): a pipe or
/// standard output needs no temporary file.
void render_npz(const trace& t, const render_options& options, std::ostream& out);

}  // namespace attn

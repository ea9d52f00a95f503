// --format py: the script's literals read back as attn's float32 numbers, a mistake's line,
// and the runs it refuses. tests/cli/py.sh runs whole scripts in PyTorch.
#include <sstream>
#include <string>

#include <doctest/doctest.h>

#include "attn/compute/error.hpp"
#include "attn/render/render_py.hpp"
#include "support.hpp"

namespace {

/// The script render_py writes for `t`.
std::string py_script(const attn::trace& t, const attn::render_options& options = {}) {
    std::ostringstream out;
    attn::render_py(t, options, "attn trace --format py", out);
    return out.str();
}

bool py_has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// The message check_py_run throws for `c`, or "" when it accepts the run.
std::string py_refusal(const attn::config& c, const attn::render_options& options = {}) {
    try {
        attn::check_py_run(c, options);
    } catch (const attn::usage_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_SUITE("render_py") {
    TEST_CASE("literals: the fewest digits that read back as the float32, nan, inf, -0.0, booleans") {
        attn::trace t;
        t.cfg.mask.causal = true;  // so that the run has a mask stage
        // [1,1,2,3] weights by hand: 0.1f is 0.100000001490116..., which Python's 0.1 rounds back to
        xt::xarray<float> weights = {{{{0.1f, 1.0f, -0.0f}, {not_a_number, -inf, 3e-8f}}}};
        t.stages.push_back(make_stage("softmax", {{"weights", bhqk, weights}}));
        xt::xarray<float> mask = {{{{1.0f, 0.0f, 1.0f}, {0.0f, 0.0f, 1.0f}}}};
        t.stages.push_back(make_stage("mask", {{"mask", bhqk, mask, attn::element_type::boolean}}));
        const std::string script = py_script(t);
        CHECK(py_has(script, "check(\"softmax.weights\", weights, f32([[[[0.1, 1.0, -0.0],\n"
                             "                                         [nan, -inf, 3e-08]]]]))\n"));
        CHECK(py_has(script, "check(\"mask.mask\", mask.expand(1, 1, Sq, Sk), torch.tensor([[[[True, False, True],\n"));
        CHECK(py_has(script, "                                                              [False, False, True]]]]))\n"));
        CHECK(py_has(script, "inf, nan = math.inf, math.nan"));
        CHECK(!py_has(script, "check(\"scores"));  // a stage not in the trace is computed, not checked
        CHECK(py_has(script, "\nscores = q @ k.transpose(-2, -1)\n"));
    }

    TEST_CASE("the command heads the script on one comment line") {
        std::ostringstream out;
        attn::render_py(attn::trace{}, {}, "attn trace --out 'a\nb.py' --format py", out);
        CHECK(out.str().rfind("# attn trace --out 'a?b.py' --format py\n#\n", 0) == 0);
    }

    TEST_CASE("a transposed view is checked by its shape and strides") {
        attn::config c;
        const attn::trace t = run(c);
        const std::string script = py_script(t);
        CHECK(py_has(script, "check_layout(\"transpose.q\", q, (1, 2, 4, 4), (32, 4, 8, 1))\n"));
        CHECK(py_has(script, "check_layout(\"merge.context\", merged, (1, 4, 2, 4), (32, 4, 16, 1))\n"));
        CHECK(py_has(script, "B, Sq, Sk, D, H, dk = 1, 4, 4, 8, 2, 4\ntorch.manual_seed(0)\nw_q = nn.Linear(8, 8)\n"));
    }

    TEST_CASE("--mistake: the stage written as the mistake makes it, and said") {
        attn::config c;
        c.mistake = attn::mistake::softmax_axis;
        const std::string script = py_script(run(c));
        CHECK(py_has(script, "\nweights = torch.softmax(scaled, dim=-2)\n"));
        CHECK(py_has(script, "# --mistake softmax_axis: softmax over the queries (dim=-2)"));
        c.mistake = attn::mistake::dropout_not_rescaled;
        c.dropout.p = 0.5;
        c.dropout.train = true;
        CHECK(py_has(py_script(run(c)), "\nweights = weights * keep\n"));
    }

    TEST_CASE("refused: too many numbers unless --stage leaves them out, files, views, some mistakes") {
        attn::config c;
        CHECK(py_refusal(c) == "");
        c.seq = c.kv_seq = 64;  // B·H·Sq·Sk = 8192
        CHECK(py_has(py_refusal(c), "--format py: stage scores has 8192 numbers, more than the 4096"));
        attn::render_options only_output;
        only_output.stages = attn::stages(attn::stage_id::output);
        CHECK(py_refusal(c, only_output) == "");
        attn::config read;
        read.sources.x_from_file = true;  // without its file (a replay's x): refused; with it, loaded
        CHECK(py_has(py_refusal(read), "with --from they are inside the dump: pass them as --input and --kv-input files"));
        attn::render_options with_file;
        with_file.input_file = "x.npy";
        CHECK(py_refusal(read, with_file) == "");
        read.sources.params_from_file = true;  // loaded from its file (issue 40); a replay's refused
        CHECK(py_has(py_refusal(read, with_file), "pass them as --params files"));
        with_file.params_file = "p.npz";
        CHECK(py_refusal(read, with_file) == "");
        attn::config qkv;
        qkv.sources.from_projections = true;
        CHECK(py_has(py_refusal(qkv), "pass them as --q, --k and --v files"));
        attn::config masked;
        masked.mask.from_file = true;
        CHECK(py_has(py_refusal(masked), "pass them as --mask-file and --key-padding-mask files"));
        with_file.mask_file = "m.npy";
        CHECK(py_refusal(masked, with_file) == "");
        attn::config model = read;  // a checkpoint's names the script cannot write as a string
        model.sources.weight_sources = {{"w_q", "h.0.attn\"x.weight"}};
        CHECK(py_has(py_refusal(model, with_file), "a weight's name in the file is not one the script can write"));
        attn::render_options one_head;
        one_head.head = 1;
        CHECK(py_has(py_refusal(attn::config{}, one_head), "leave out --batch-index, --head and --row"));
        attn::config split;
        split.mistake = attn::mistake::split_without_transpose;
        CHECK(py_has(py_refusal(split), "no PyTorch line for --mistake split_without_transpose"));
    }
}

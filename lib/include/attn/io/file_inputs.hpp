#pragma once
// Tensors the user brings: --input, --kv-input, --params, --q --k --v and
// --mask-file. Their shapes fill in the sizes no flag gave; a flag that
// disagrees with a file is an error naming both.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attn/compute/config.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/io/model_config.hpp"
#include "attn/io/model_embedding.hpp"
#include "attn/io/model_layer.hpp"
#include "attn/io/tensor_file.hpp"

namespace attn {

/// The file given to each flag; empty = not given.
struct input_paths {
    std::string input;     // --input: x [B,Sq,Din]
    std::string kv_input;  // --kv-input: x_kv [B,Sk,Dkv] (cross-attention)
    std::string params;    // --params: .json, .npz or .safetensors of w_q b_q ... b_o, or a model's own names (model_layer.hpp)
    std::string q, k, v;   // --q --k --v: [B,Sq,D], [B,Sk,D], [B,Sk,D]
    std::string mask;      // --mask-file: [Sq,Sk], [B,Sq,Sk] or [B,1,Sq,Sk], read as config::mask.file_convention
    std::string key_padding_mask;  // --key-padding-mask: [B,Sk], read as config::mask.key_padding_convention
    model_choice model;    // --arch, --layer, and the flags a model's config.json also decides
    std::vector<std::int64_t> tokens;  // --tokens: layer 0 of the --params model from these ids (B = 1)
    bool tokens_from_text = false;     // the ids are --text's, by the checkpoint's tokenizer
    std::string vocab;     // --vocab: the tokenizer's vocab.json, the tokens' labels
    bool mask_only = false;  // attn mask: only the mask is made, a row at a time, so --max-memory is
                             // checked against its need (check_mask_views_memory), not a trace's
};

/// The size flags as typed; absent = not given (a default or a file decides).
struct size_flags {
    std::optional<std::int64_t> batch, seq, kv_seq, d_model, d_in, d_kv_in;
};

struct loaded_inputs {
    config cfg;              // sizes resolved, validated
    given_inputs given;      // pass to draw_inputs
    warning_list warnings;   // e.g. NaN or inf inside a file
};

/// Reads every file in `paths` (within base.max_memory), resolves the sizes (flag,
/// else file, else CLI.md's default; D defaults to Din when a file gives Din) and
/// validates; `base` carries every other setting. Throws attn::error naming the file
/// for an unreadable or malformed one, usage_error naming the flags for a
/// contradiction (a flag against a file, --q without --k, ...).
loaded_inputs load_inputs(config base, const size_flags& sizes, const input_paths& paths);

/// One tensor already read, with the words that name it in messages:
/// "--input x.npy", "--from t.npz input.x".
struct named_tensor {
    std::string what;
    loaded_tensor tensor;
};

/// The tensors a run is given, read but not yet checked against the flags or each other.
struct given_tensors {
    std::optional<named_tensor> x, x_kv;  // [B,Sq,Din], [B,Sk,Dkv]
    std::optional<named_tensor> q, k, v;  // all three or none (base.sources.from_projections)
    std::optional<named_tensor> mask;     // [Sq,Sk], [B,Sq,Sk] or [B,1,Sq,Sk], read as config::mask.file_convention
    std::optional<named_tensor> key_padding_mask;  // [B,Sk], read as config::mask.key_padding_convention
    bool mask_is_keep = false;  // `mask` is a dump's mask.mask: keep, whatever the recorded files were
    std::string params_what;                      // "--params p.npz"; empty: no weights given
    std::map<std::string, loaded_tensor> params;  // by bare name: w_q, b_q, ..., w_o, b_o (norm_weight, norm_bias)
    std::optional<model_layer> model;             // a model's layer, its weights in attn's names (check_inputs moves them to params)
    std::optional<hf_config> model_json;          // the config.json beside it
    model_choice model_flags;                     // input_paths::model
    std::optional<embeddings> embed;              // --tokens: the table rows x is the sum of (x given too)
    std::vector<std::int64_t> tokens;             // --tokens
    std::vector<std::string> token_labels;        // --vocab: each token's text, escaped
    bool mask_only = false;                       // input_paths::mask_only
};

/// Reads the file of each flag in `paths` (an .npz: the array a dump names after the
/// flag, else its only one) within `budget`; nothing is checked yet.
given_tensors read_given_files(const input_paths& paths, read_budget* budget = nullptr);

/// load_inputs once the files are read: checks `given` against the size flags and
/// each other and takes the weights `base` needs. A size neither a flag nor a tensor
/// gives comes from `recorded` (a dump's run, replay.hpp) when given, else from
/// CLI.md's defaults; a recorded size that equalled its default (Sk = Sq, Din = D,
/// Dkv = Din) follows it, so --seq 6 on a recorded self-attention run gives Sk = 6.
loaded_inputs check_inputs(config base, const size_flags& sizes, given_tensors given,
                           const config* recorded = nullptr);

}  // namespace attn

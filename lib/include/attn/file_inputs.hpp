#pragma once
// Tensors the user brings: --input, --kv-input, --params, --q --k --v and
// --mask-file. Their shapes fill in the sizes no flag gave; a flag that
// disagrees with a file is an error naming both.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attn/config.hpp"
#include "attn/inputs.hpp"

namespace attn {

/// The file given to each flag; empty = not given.
struct input_paths {
    std::string input;     // --input: x [B,Sq,Din]
    std::string kv_input;  // --kv-input: x_kv [B,Sk,Dkv] (cross-attention)
    std::string params;    // --params: .json object or .npz of w_q b_q w_k b_k w_v b_v w_o b_o
    std::string q, k, v;   // --q --k --v: [B,Sq,D], [B,Sk,D], [B,Sk,D]
    std::string mask;      // --mask-file: [Sq,Sk], [B,Sq,Sk] or [B,1,Sq,Sk], read as config::mask.file_convention
    std::string key_padding_mask;  // --key-padding-mask: [B,Sk], read as config::mask.key_padding_convention
};

/// The size flags as typed; absent = not given (a default or a file decides).
struct size_flags {
    std::optional<std::int64_t> batch, seq, kv_seq, d_model, d_in, d_kv_in;
};

struct loaded_inputs {
    config cfg;                         // sizes resolved, validated
    given_inputs given;                 // pass to draw_inputs
    attn::warning_list warnings;            // e.g. NaN or inf inside a file
};

/// Reads every file in `paths`, resolves the sizes (flag, else file, else
/// CLI.md's default; D defaults to Din when a file gives Din) and validates.
/// `base` carries every non-size setting. Throws attn::error naming the file
/// for an unreadable or malformed file, usage_error naming the flags for
/// contradictions (a flag against a file, --q without --k, ...).
loaded_inputs load_inputs(config base, const size_flags& sizes, const input_paths& paths);

}  // namespace attn

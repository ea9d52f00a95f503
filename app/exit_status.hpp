#pragma once
// A command that has said all it has to say and ends with a status other than 0
// without an error message: a wrong answer in attn check and attn exercise check
// (exit 1, the report on stdout); main returns `code`. And how both read the answer.
#include <iostream>

#include "attn/compute/error.hpp"
#include "attn/render/render_check.hpp"

namespace attn_app {

struct exit_status {
    int code;
};

/// What read() returns. An answer file that cannot be read is an error (exit 1, as a
/// mismatch), and with --format json (`json`) also a document saying there is no verdict
/// ("match": null, "error"); a usage error goes on as it is.
template <class Read>
auto read_answer(bool json, Read read) {
    try {
        return read();
    } catch (const attn::usage_error&) {
        throw;
    } catch (const attn::error& e) {
        if (json) attn::render_check_error_json(e.what(), std::cout);
        throw;
    }
}

}  // namespace attn_app

#pragma once
// A command that has said all it has to say and ends with a status other than 0
// without an error message: attn check's mismatch (exit 1, the report on stdout).
namespace attn_app {

struct exit_status {
    int code;
};

}  // namespace attn_app

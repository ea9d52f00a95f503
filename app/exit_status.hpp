#pragma once
// A command that has said all it has to say and ends with a status other than 0
// without an error message: a wrong answer in attn check and attn exercise check
// (exit 1, the report on stdout); main returns `code`.
namespace attn_app {

struct exit_status {
    int code;
};

}  // namespace attn_app

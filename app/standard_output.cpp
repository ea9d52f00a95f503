#include "standard_output.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <iostream>

#include <unistd.h>

#include "attn/text/printable_text.hpp"
#include "messages.hpp"

namespace attn_app {
namespace {

attn::fd_streambuf& checked_buffer() {
    static attn::fd_streambuf buffer(STDOUT_FILENO, "standard output");
    return buffer;
}

std::streambuf* original_buffer = nullptr;

}  // namespace

void use_checked_standard_output() {
    original_buffer = std::cout.rdbuf(&checked_buffer());
    std::cout.exceptions(std::ios::badbit);
}

bool color_on_standard_output(const std::string& when) {
    if (when != "auto") return when == "always";
    const char* no_color = std::getenv("NO_COLOR");
    const char* term = std::getenv("TERM");
    return isatty(STDOUT_FILENO) && (no_color == nullptr || *no_color == '\0') &&
           !(term != nullptr && std::string(term) == "dumb");
}

void finish_standard_output() {
    if (original_buffer != nullptr) checked_buffer().flush_all();
}

void release_standard_output() noexcept {
    if (original_buffer == nullptr) return;
    try {
        checked_buffer().flush_all();
    } catch (...) {
        // reported already, or the run ends with another error: nothing more to say
    }
    std::cout.exceptions(std::ios::goodbit);
    std::cout.rdbuf(original_buffer);
    original_buffer = nullptr;
}

int report_write_error(const attn::write_error& e) {
    release_standard_output();  // std::cerr is tied to std::cout: flushing a failed cout would throw again
    if (e.code == EPIPE && e.fd == STDOUT_FILENO) {
        std::signal(SIGPIPE, SIG_DFL);
        std::raise(SIGPIPE);
        return 128 + SIGPIPE;  // if SIGPIPE is blocked
    }
    std::cerr << "attn: error: " << attn_app::terminal_line(e.what()) << "\n";
    return 1;
}

}  // namespace attn_app

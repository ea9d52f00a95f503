#include "progress.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <unistd.h>

namespace attn_app {
namespace {

/// Bytes this process has written so far, to any file, pipe or terminal ("wchar" in
/// /proc/self/io): npz archives are written by minizip, by name, so no stream of ours
/// sees them. 0 where /proc is missing.
std::uint64_t bytes_written_by_process() {
    std::ifstream io("/proc/self/io");
    std::string key;
    std::uint64_t value = 0;
    while (io >> key >> value)
        if (key == "wchar:") return value;
    return 0;
}

/// 1536 -> "1.5 KiB".
std::string bytes_text(double bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 4) {
        bytes /= 1024.0;
        ++u;
    }
    char text[32];
    std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
    return text;
}

std::chrono::milliseconds delay_from_environment() {
    const char* text = std::getenv("ATTN_PROGRESS_DELAY_MS");
    if (text != nullptr && *text != '\0') {
        char* end = nullptr;
        const long ms = std::strtol(text, &end, 10);
        if (*end == '\0' && ms >= 0) return std::chrono::milliseconds(ms);
    }
    return std::chrono::milliseconds(1000);
}

}  // namespace

bool progress_wanted(bool quiet) {
    const char* ci = std::getenv("CI");
    return !quiet && isatty(STDERR_FILENO) && (ci == nullptr || *ci == '\0');
}

progress_line::progress_line(bool shown, std::uint64_t expected_bytes)
    : shown_(shown),
      expected_bytes_(expected_bytes),
      written_at_start_(shown ? bytes_written_by_process() : 0),
      start_(std::chrono::steady_clock::now()),
      delay_(delay_from_environment()),
      stage_("starting") {
    if (!shown_) return;
    if (delay_.count() == 0) draw();  // at once, before the run can end (the tests ask for it)
    thread_ = std::thread([this] { run(); });
}

progress_line::~progress_line() { finish(); }

void progress_line::stage(std::string_view name) {
    if (!shown_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    stage_ = name;
}

void progress_line::finish() {
    if (!shown_) return;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (done_) return;
        done_ = true;
    }
    wake_.notify_all();
    thread_.join();
    if (drawn_width_ != 0) {  // blank the line and go back to its start
        std::fprintf(stderr, "\r%*s\r", static_cast<int>(drawn_width_), "");
        std::fflush(stderr);
    }
}

void progress_line::run() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (wake_.wait_for(lock, delay_, [this] { return done_; })) return;  // a short run: never drawn
    while (!done_) {
        draw();
        wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return done_; });
    }
}

/// One redraw, the mutex held.
void progress_line::draw() {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const std::uint64_t now = bytes_written_by_process();
    const double written = static_cast<double>(now > written_at_start_ ? now - written_at_start_ : 0);
    const double rate = seconds > 0 ? written / seconds : 0;
    std::string line = "attn trace: " + stage_ + ", " + bytes_text(written) + " written";
    if (written > 0) line += ", " + bytes_text(rate) + "/s";
    if (expected_bytes_ != 0 && rate > 0 && written < static_cast<double>(expected_bytes_)) {
        const double left = (static_cast<double>(expected_bytes_) - written) / rate;
        char text[48];
        std::snprintf(text, sizeof text, ", about %.0f s left", left + 0.5);
        line += text;
    }
    // The line is redrawn over the last one: pad it to the last one's width.
    const std::size_t width = line.size();
    if (width < drawn_width_) line.append(drawn_width_ - width, ' ');
    std::fprintf(stderr, "\r%s", line.c_str());
    std::fflush(stderr);
    drawn_width_ = std::max(drawn_width_, width);
}

}  // namespace attn_app

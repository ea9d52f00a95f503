#include "progress.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <unistd.h>

namespace attn_app {
namespace {

std::chrono::milliseconds delay_from_environment() {
    const char* text = std::getenv("ATTN_PROGRESS_DELAY_MS");
    if (text != nullptr && *text != '\0') {
        char* end = nullptr;
        const long ms = std::strtol(text, &end, 10);
        if (*end == '\0' && ms >= 0) return std::chrono::milliseconds(ms);
    }
    return std::chrono::milliseconds(1000);
}

double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

}  // namespace

bool progress_wanted(bool quiet) {
    const char* ci = std::getenv("CI");
    return !quiet && isatty(STDERR_FILENO) && (ci == nullptr || *ci == '\0');
}

progress_line::progress_line(bool shown, std::vector<progress_step> steps)
    : shown_(shown),
      steps_(std::move(steps)),
      start_(std::chrono::steady_clock::now()),
      last_done_(start_),
      delay_(delay_from_environment()) {
    for (const progress_step& s : steps_) total_ += s.cost;
    if (!shown_) return;
    if (delay_.count() == 0) draw();  // at once, before the run can end (the tests ask for it)
    thread_ = std::thread([this] { run(); });
}

progress_line::~progress_line() { finish(); }

void progress_line::done(std::string_view name) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto step = std::find_if(steps_.begin() + static_cast<std::ptrdiff_t>(next_), steps_.end(),
                                   [&](const progress_step& s) { return s.name == name; });
    if (step == steps_.end()) return;
    for (; next_ <= static_cast<std::size_t>(step - steps_.begin()); ++next_) done_cost_ += steps_[next_].cost;
    last_done_ = std::chrono::steady_clock::now();
}

void progress_line::at(std::string_view what) {
    std::lock_guard<std::mutex> lock(mutex_);
    next_ = steps_.size();
    done_cost_ = total_;
    beyond_ = what;
}

void progress_line::finish() {
    if (!shown_) return;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (finished_) return;
        finished_ = true;
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
    if (wake_.wait_for(lock, delay_, [this] { return finished_; })) return;  // a short run: never drawn
    while (!finished_) {
        draw();
        wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return finished_; });
    }
}

/// One redraw, the mutex held.
void progress_line::draw() {
    std::string line = "attn trace: ";
    if (next_ < steps_.size()) {
        line += steps_[next_].name;
        const double share = total_ > 0 ? done_cost_ / total_ : 0;
        char text[64];
        std::snprintf(text, sizeof text, ", %.0f%% of the work done", 100 * share);
        line += text;
        // the time left at the pace of the steps done: their seconds per unit of cost
        const auto now = std::chrono::steady_clock::now();
        if (done_cost_ > 0) {
            const double pace = seconds_between(start_, last_done_) / done_cost_;
            const double left = (total_ - done_cost_) * pace - seconds_between(last_done_, now);
            if (left >= 1) {
                std::snprintf(text, sizeof text, ", about %.0f s left", left + 0.5);
                line += text;
            }
        }
    } else {
        line += beyond_.empty() ? "finishing" : beyond_;
    }
    // The line is redrawn over the last one: pad it to the last one's width.
    const std::size_t width = line.size();
    if (width < drawn_width_) line.append(drawn_width_ - width, ' ');
    std::fprintf(stderr, "\r%s", line.c_str());
    std::fflush(stderr);
    drawn_width_ = std::max(drawn_width_, width);
}

}  // namespace attn_app

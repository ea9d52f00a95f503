#pragma once
// The progress line of a long run: on stderr, when it is a terminal, after about a second.
//
//   attn trace: softmax, 412.0 MiB written, 96.3 MiB/s, about 9 s left
//
// redrawn in place with \r a few times a second and erased when the run ends, so that
// nothing of it stays in the terminal. Nothing at all in pipes, in CI (the CI variable
// set) or with --quiet. ATTN_PROGRESS_DELAY_MS sets the delay (default 1000), for tests.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace attn_app {

/// Whether a progress line may be shown: stderr a terminal, not CI, not --quiet.
bool progress_wanted(bool quiet);

class progress_line {
public:
    /// Starts the clock (and, when `shown`, the thread that draws). `expected_bytes` is
    /// about what the run will write, 0 when unknown: then the line gives no time left.
    progress_line(bool shown, std::uint64_t expected_bytes);
    ~progress_line();  // erases the line
    progress_line(const progress_line&) = delete;
    progress_line& operator=(const progress_line&) = delete;

    /// The stage the run has reached (a compute_trace callback calls it).
    void stage(std::string_view name);
    /// Stops drawing and erases the line; the destructor does it too.
    void finish();

private:
    void run();
    void draw();

    bool shown_;
    std::uint64_t expected_bytes_;
    std::uint64_t written_at_start_;
    std::chrono::steady_clock::time_point start_;
    std::chrono::milliseconds delay_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::string stage_;
    bool done_ = false;
    std::size_t drawn_width_ = 0;  // of the line on screen, 0 when none
    std::thread thread_;
};

}  // namespace attn_app

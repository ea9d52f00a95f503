#pragma once
// The progress line of a long run, on stderr after about a second (ATTN_PROGRESS_DELAY_MS,
// for tests), redrawn in place and erased at the end; never in pipes, in CI or with --quiet:
//   attn trace: softmax, 62% of the work done, about 9 s left
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "attn/render/output_format.hpp"

namespace attn_app {

/// Whether a progress line may be shown: stderr a terminal, not CI, not --quiet.
bool progress_wanted(bool quiet);

/// A part of the run, in order, and about how long it takes (any unit: shares count).
struct progress_step {
    std::string name;
    double cost;
};

class progress_line : public attn::run_watcher {
public:
    /// Starts the clock (and, when `shown`, the thread that draws) at the first of `steps`.
    progress_line(bool shown, std::vector<progress_step> steps);
    ~progress_line();  // erases the line
    progress_line(const progress_line&) = delete;
    progress_line& operator=(const progress_line&) = delete;

    /// Step `name` is complete, and every step before it: the next one is under way.
    void done(std::string_view name);
    /// The steps are complete and the run is at `what` ("writing"), which has no estimate.
    void at(std::string_view what);
    /// Stops drawing and erases the line; the destructor does it too.
    void finish();

    // attn::run_watcher: a stage is complete; the stages are drawn ("writing")
    void stage_done(std::string_view name) override { done(name); }
    void writing() override { at("writing"); }

private:
    void run();
    void draw();

    bool shown_;
    std::vector<progress_step> steps_;
    double total_ = 0;
    std::size_t next_ = 0;    // the step under way
    double done_cost_ = 0;    // of the steps before it
    std::string beyond_;      // at(): what the run does after the steps
    std::chrono::steady_clock::time_point start_, last_done_;
    std::chrono::milliseconds delay_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool finished_ = false;
    std::size_t drawn_width_ = 0;  // of the line on screen, 0 when none
    std::thread thread_;
};

}  // namespace attn_app

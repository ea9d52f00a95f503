// libFuzzer harness: an exercise file, as `attn exercise show` reads it: read_exercise
// (the keys, the texts, the config built from attn trace's defaults and validated, the
// given tensors and the answer checked against the stages of the run), then, for a run
// within the harness's memory limit, the variant (inputs drawn, the trace computed, the
// given tensors and the answer's shape taken from it) and its table, into nothing.
// The limit stands for the one the command applies (check_addressable in read_exercise;
// 64 MiB here keeps an execution short): a larger run is refused as attn::error.
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <streambuf>

#include "attn/compute/memory.hpp"
#include "attn/render/render_exercise.hpp"
#include "attn/teach/exercise.hpp"
#include "fuzz_common.hpp"

namespace {

/// An ostream that drops what it is given (the table is rendered, not kept).
class null_buffer : public std::streambuf {
protected:
    int_type overflow(int_type c) override { return traits_type::not_eof(c); }
    std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string path = attn_fuzz::write_input_file(data, size, ".json");
    attn_fuzz::expect_attn_errors_only([&] {
        const attn::read_budget budget(std::uint64_t(64) << 20);  // the file and its parsed values
        const attn::exercise e = attn::read_exercise(path, &budget);
        attn::check_memory(e.cfg, std::uint64_t(64) << 20);
        const attn::exercise_variant v = attn::make_variant(e, "student-1");
        null_buffer nothing;
        std::ostream out(&nothing);
        attn::render_exercise_table(v, attn::render_options{}, out);
    });
    return 0;
}

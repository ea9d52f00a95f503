// --batch-index, --head, --row (view_flags.hpp): checked against the run's sizes.
#include "view_flags.hpp"

#include <string>
#include <string_view>
#include <vector>

#include "attn/compute/error.hpp"
#include "attn/render/render_row.hpp"
#include "attn/text/join.hpp"

namespace attn_app {
namespace {

/// The index `value` of `flag`, which must lie in 0..size-1: "--head 4 is outside 0..3 (H = 4)".
std::size_t index_within(const char* flag, std::int64_t value, std::int64_t size, const char* size_name) {
    if (value < 0 || value >= size)
        throw attn::usage_error(std::string(flag) + " " + std::to_string(value) + " is outside 0.." +
                                std::to_string(size - 1) + " (" + size_name + " = " + std::to_string(size) + ")");
    return static_cast<std::size_t>(value);
}

/// "scores, scaled, biased, masked, softmax or dropout": the stages --row draws (stage_views.hpp).
std::string row_stages_text() {
    std::vector<std::string> names;
    for (const attn::stage_info& info : attn::stage_table)
        if (attn::row_view_shows(info.id)) names.emplace_back(info.name);
    return attn::join(names, ", ", " or ");
}

}  // namespace

void set_views(const view_flags& v, const flag_given& given, const attn::config& c, const attn::output_format& format,
               attn::render_options& options) {
    if (given("--batch-index")) options.batch_index = index_within("--batch-index", v.batch_index, c.batch, "B");
    if (given("--head")) {
        try {
            options.head = index_within("--head", v.head, c.heads, "H");
        } catch (const attn::usage_error& e) {  // --head 4 for --heads 4 is an easy slip
            if (given("--heads")) throw;
            throw attn::usage_error(std::string(e.what()) + "; did you mean --heads " + std::to_string(v.head) + "?");
        }
    }
    if (!given("--row")) return;
    options.row = index_within("--row", v.row, c.seq, "Sq");
    if (format.sink != attn::format_sink::table) return;  // the table draws bars
    for (const attn::stage_info& info : attn::stage_table)
        if (options.stages != 0 && options.shows(info.id) && !attn::row_view_shows(info.id))
            throw attn::usage_error("--stage " + std::string(info.name) + " with --row: --row draws one query's scores or weights "
                                    "as bars, from the stages " + row_stages_text() + "; for query " +
                                    std::to_string(v.row) + " of every tensor use --format json");
}

}  // namespace attn_app

// The folder a student gets (exercise_folder.hpp).
#include "attn/render/exercise_folder.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <system_error>

#include "attn/compute/error.hpp"
#include "attn/io/npy.hpp"
#include "attn/io/output_file.hpp"
#include "attn/render/render_exercise.hpp"

namespace attn {
namespace {

void write_number(float v, bool boolean, std::ostream& out) {
    if (boolean) out << (v != 0.0f ? "true" : "false");
    else if (std::isnan(v)) out << "\"nan\"";
    else if (std::isinf(v)) out << (v < 0 ? "\"-inf\"" : "\"inf\"");
    else {
        char buffer[32];
        out.write(buffer, std::to_chars(buffer, buffer + sizeof buffer, v).ptr - buffer);
    }
}

/// The elements of `values` (row-major) from `first`, axis `axis` and after.
void write_axis(const xt::xarray<float>& values, std::size_t axis, std::size_t& flat, bool boolean, std::ostream& out) {
    if (axis == values.dimension()) {
        write_number(values.flat(flat++), boolean, out);
        return;
    }
    out.put('[');
    for (std::size_t i = 0; i < values.shape()[axis]; ++i) {
        if (i != 0) out.put(',');
        write_axis(values, axis + 1, flat, boolean, out);
    }
    out.put(']');
}

}  // namespace

void write_nested_lists(const tensor& t, std::ostream& out) {
    const xt::xarray<float> values = t.values;  // row-major, whatever the view's strides
    std::size_t flat = 0;
    write_axis(values, 0, flat, t.type == element_type::boolean, out);
    out.put('\n');
}

void write_exercise_folder(const exercise_variant& v, const std::string& dir, const std::string& what) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw error(what + ": cannot make the folder: " + ec.message());
    const std::string base = (std::filesystem::path(dir) / "").string();
    for (const given_tensor& g : v.given) {
        const xt::xarray<float> values = g.values.values;  // row-major
        const std::vector<std::size_t> shape(values.shape().begin(), values.shape().end());
        const bool boolean = g.values.type == element_type::boolean;
        write_file_atomically(base + g.name + ".npy", what + ": " + g.name + ".npy", [&](std::ostream& out) {
            write_npy(values.data(), shape, boolean, [&out](const char* bytes, std::size_t size) {
                out.write(bytes, static_cast<std::streamsize>(size));
            });
        });
        write_file_atomically(base + g.name + ".json", what + ": " + g.name + ".json",
                              [&](std::ostream& out) { write_nested_lists(g.values, out); });
    }
    write_file_atomically(base + "task.md", what + ": task.md",
                          [&](std::ostream& out) { render_exercise_task_md(v, out); });
    write_file_atomically(base + "exercise.json", what + ": exercise.json",
                          [&](std::ostream& out) { render_exercise_json(v, out); });
}

}  // namespace attn

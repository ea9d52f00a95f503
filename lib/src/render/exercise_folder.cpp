// The folder a student gets (exercise_folder.hpp).
#include "attn/render/exercise_folder.hpp"

#include <filesystem>
#include <functional>
#include <string>
#include <system_error>

#include "attn/compute/error.hpp"
#include "attn/io/npy.hpp"
#include "attn/io/output_file.hpp"
#include "attn/render/json_numbers.hpp"
#include "attn/render/render_exercise.hpp"

namespace attn {

void write_nested_lists(const tensor& t, std::ostream& out) {
    write_json_data(t.values.data(), {t.values.shape().begin(), t.values.shape().end()}, t.strides,
                    t.type == element_type::boolean, out);
    out.put('\n');
}

void write_exercise_folder(const exercise_variant& v, const std::string& dir, const std::string& what) {
    std::error_code ec;
    // The student may write into their folder: DIR itself must not be a link they made
    // (to another student's folder, or the teacher's), and what they put inside is replaced.
    std::string named = dir;  // "class/alice/" names the link class/alice too
    while (named.size() > 1 && named.back() == '/') named.pop_back();
    if (std::filesystem::is_symlink(std::filesystem::symlink_status(named, ec)))
        throw error(what + ": is a symbolic link; give the folder itself, so that a link planted there cannot "
                           "send the hand-out elsewhere");
    std::filesystem::create_directories(dir, ec);
    if (ec) throw error(what + ": cannot make the folder: " + ec.message());
    const std::string base = (std::filesystem::path(dir) / "").string();
    const auto write = [&](const std::string& name, const std::function<void(std::ostream&)>& contents) {
        write_file_atomically(base + name, what + ": " + name, contents, output_file::placement::fresh);
    };
    for (const given_tensor& g : v.given) {
        const xt::xarray<float> values = g.values.values;  // row-major
        const std::vector<std::size_t> shape(values.shape().begin(), values.shape().end());
        const bool boolean = g.values.type == element_type::boolean;
        write(g.name + ".npy", [&](std::ostream& out) {
            write_npy(values.data(), shape, boolean, [&out](const char* bytes, std::size_t size) {
                out.write(bytes, static_cast<std::streamsize>(size));
            });
        });
        write(g.name + ".json", [&](std::ostream& out) { write_nested_lists(g.values, out); });
    }
    write("task.md", [&](std::ostream& out) { render_exercise_task_md(v, out); });
    write("exercise.json", [&](std::ostream& out) { render_exercise_json(v, out); });
}

}  // namespace attn

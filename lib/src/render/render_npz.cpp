#include "attn/render/render_npz.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <list>
#include <vector>

#include <unistd.h>

#include "attn/compute/error.hpp"
#include "attn/io/npz.hpp"
#include "attn/render/render_json.hpp"

namespace attn {
namespace {

/// The members point into the trace's tensors where they are contiguous; the views that
/// are not (transpose, merge) are copied into `copies` in row-major order, as np.save
/// writes t.numpy() (C order).
std::vector<npz_member> members_of(const trace& t, const render_options& options,
                                   std::list<xt::xarray<float>>& copies) {
    std::vector<npz_member> members;
    for (const stage& s : t.stages) {
        if (!options.shows(s.name())) continue;
        for (const tensor& x : s.tensors) {
            const float* data = x.values.data();
            if (!x.contiguous()) data = copies.emplace_back(x.values).data();
            members.push_back(npz_member::tensor(std::string(s.name()) + "." + x.name,
                                                 {x.values.shape().begin(), x.values.shape().end()}, data,
                                                 x.type == element_type::boolean));
        }
    }
    members.push_back(npz_member::text_member("config", config_to_json(t.cfg).dump()));
    return members;
}

/// A temporary file that is removed when it goes out of scope.
struct temporary_file {
    std::string path;
    temporary_file() {
        const char* dir = std::getenv("TMPDIR");
        std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/attn-npz-XXXXXX";
        const int fd = mkstemp(pattern.data());
        if (fd < 0) throw error("cannot create a temporary file for the npz archive in " + pattern);
        close(fd);
        path = pattern;
    }
    ~temporary_file() { std::remove(path.c_str()); }
};

}  // namespace

void render_npz(const trace& t, const render_options& options, const std::string& path, const std::string& what) {
    std::list<xt::xarray<float>> copies;
    write_npz(path, what, members_of(t, options, copies));
}

void render_npz(const trace& t, const render_options& options, std::ostream& out) {
    const temporary_file temp;
    std::list<xt::xarray<float>> copies;
    write_npz_here(temp.path, "standard output", members_of(t, options, copies));
    std::ifstream archive(temp.path, std::ios::binary);
    out << archive.rdbuf();
}

}  // namespace attn

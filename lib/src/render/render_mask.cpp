// attn mask's table and JSON (render_mask.hpp).
#include "attn/render/render_mask.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/io/config_fields.hpp"
#include "attn/render/render_json.hpp"
#include "attn/teach/stage_text.hpp"

namespace attn {
namespace {

/// Whether no key may be attended in row (b, i) of keep [B,1,Sq,Sk].
bool row_without_key(const xt::xarray<bool>& keep, std::size_t b, std::size_t i) {
    const std::size_t sq = keep.shape()[2], sk = keep.shape()[3];
    const bool* row = keep.data() + (b * sq + i) * sk;
    return std::find(row, row + sk, true) == row + sk;
}

/// The (batch, query) rows of keep in which no key may be attended.
std::vector<std::pair<std::size_t, std::size_t>> rows_without_key(const xt::xarray<bool>& keep) {
    std::vector<std::pair<std::size_t, std::size_t>> rows;
    for (std::size_t b = 0; b < keep.shape()[0]; ++b)
        for (std::size_t i = 0; i < keep.shape()[2]; ++i)
            if (row_without_key(keep, b, i)) rows.emplace_back(b, i);
    return rows;
}

/// Whether every batch item of keep [B,1,Sq,Sk] has the same [Sq,Sk] plane.
bool same_for_every_item(const xt::xarray<bool>& keep) {
    const std::size_t plane = keep.shape()[2] * keep.shape()[3];
    for (std::size_t b = 1; b < keep.shape()[0]; ++b)
        if (!std::equal(keep.data(), keep.data() + plane, keep.data() + b * plane)) return false;
    return true;
}

std::string pad_left(const std::string& text, std::size_t width) {
    return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

std::string pad_right(const std::string& text, std::size_t width) {
    return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

/// One convention's cells: T/F for a boolean view, 0 and the fill for additive.
struct block {
    const mask_view* view;
    std::size_t cell;   // the width of one cell
    std::size_t width;  // the whole block, at least the name
};

std::string cell_text(const config& c, const mask_view& v, float value) {
    if (v.boolean) return value != 0.0f ? "T" : "F";
    return value == 0.0f ? "0" : fill_text(c);
}

/// [b,i,j] of a view's data, [Sq,Sk] or [B,Sq,Sk].
float at(const mask_view& v, std::size_t b, std::size_t i, std::size_t j) {
    return v.data.dimension() == 3 ? v.data(b, i, j) : v.data(i, j);
}

/// The four views of batch item b side by side, with row and key labels.
void print_planes(std::ostream& out, const config& c, const mask_views& views, const xt::xarray<bool>& keep,
                  std::size_t b) {
    const std::size_t sq = keep.shape()[2], sk = keep.shape()[3];
    const std::size_t key_digits = std::to_string(sk - 1).size();
    const std::size_t label = std::max<std::size_t>(std::string("query " + std::to_string(sq - 1)).size(), 3);
    const std::string gap = "   ";
    std::vector<block> blocks;
    for (const mask_view& v : views.views) {
        const std::size_t cell = std::max(key_digits, v.boolean ? std::size_t{1} : fill_text(c).size());
        blocks.push_back({&v, cell, std::max(v.name.size(), sk * (cell + 1) - 1)});
    }
    // the convention names, then the key numbers
    std::string names = std::string(label, ' '), keys = pad_right("key", label);
    for (const block& k : blocks) {
        names += gap + pad_right(k.view->name, k.width);
        std::string numbers;
        for (std::size_t j = 0; j < sk; ++j) numbers += (j ? " " : "") + pad_left(std::to_string(j), k.cell);
        keys += gap + pad_left(numbers, k.width);
    }
    names.erase(names.find_last_not_of(' ') + 1);
    out << names << '\n' << keys << '\n';
    for (std::size_t i = 0; i < sq; ++i) {
        std::string line = pad_right("query " + std::to_string(i), label);
        for (const block& k : blocks) {
            std::string cells;
            for (std::size_t j = 0; j < sk; ++j)
                cells += (j ? " " : "") + pad_left(cell_text(c, *k.view, at(*k.view, b, i, j)), k.cell);
            line += gap + pad_left(cells, k.width);
        }
        if (row_without_key(keep, b, i)) line += "   no allowed key";
        out << line << '\n';
    }
}

/// `text` in lines of at most 100 columns, broken at spaces, the later ones
/// indented by `indent`; each line ends with '\n'.
std::string wrapped(const std::string& text, std::size_t indent) {
    constexpr std::size_t width = 100;
    std::string out, line;
    std::size_t at = 0;
    while (at < text.size()) {
        std::size_t end = text.find(' ', at + 1);
        if (end == std::string::npos) end = text.size();
        const std::string word = text.substr(at, end - at);  // with its leading space, but the first
        if (!line.empty() && line.size() + word.size() > width && line.find_first_not_of(' ') != std::string::npos) {
            out += line + '\n';
            line = std::string(indent, ' ') + word.substr(word[0] == ' ' ? 1 : 0);
        } else {
            line += word;
        }
        at = end;
    }
    return out + line + '\n';
}

/// "B=2  Sq=5  Sk=5".
std::string sizes(const config& c) {
    return "B=" + std::to_string(c.batch) + "  Sq=" + std::to_string(c.seq) + "  Sk=" + std::to_string(c.kv_seq);
}

/// The mask line of run_summary: "causal+padding (lengths 3,5), fill -inf".
std::string mask_line(const config& c) {
    for (const run_line& line : run_summary(c))
        if (line.label == "mask") return line.text;
    return {};
}

/// A view's data as nested lists, as tensor.tolist() (booleans, or 0 and the fill), written
/// to `out` element by element, as nlohmann's dump() writes them: a mask [B,Sq,Sk] never
/// becomes a JSON tree (about 16 bytes a cell, where the data holds 4).
void write_data_json(const mask_view& v, std::ostream& out) {
    float last = 0.0f;
    std::string last_text = "0.0";  // the dump of `last`: masks hold few distinct values
    const auto value = [&](float x) -> const std::string& {
        static const std::string yes = "true", no = "false", minus_inf = "\"-inf\"", inf = "\"inf\"";
        if (v.boolean) return x != 0.0f ? yes : no;
        if (std::isinf(x)) return x < 0 ? minus_inf : inf;
        if (!(x == last && std::signbit(x) == std::signbit(last))) {
            last = x;
            last_text = nlohmann::ordered_json(static_cast<double>(x)).dump();
        }
        return last_text;
    };
    const std::size_t sq = v.data.shape()[v.data.dimension() - 2], sk = v.data.shape()[v.data.dimension() - 1];
    const auto plane = [&](std::size_t b) {
        out << '[';
        for (std::size_t i = 0; i < sq; ++i) {
            out << (i ? ",[" : "[");
            for (std::size_t j = 0; j < sk; ++j) out << (j ? "," : "") << value(at(v, b, i, j));
            out << ']';
        }
        out << ']';
    };
    if (v.data.dimension() == 2) return plane(0);
    out << '[';
    for (std::size_t b = 0; b < v.data.shape()[0]; ++b) {
        if (b) out << ',';
        plane(b);
    }
    out << ']';
}

/// `j`'s compact dump without its closing brace, for members to follow.
std::string open_object(const nlohmann::ordered_json& j) {
    std::string text = j.dump();
    text.pop_back();
    return text;
}

}  // namespace

void render_mask_table(const config& c, const mask_views& views, const xt::xarray<bool>& keep,
                       const warning_list& warnings, std::ostream& out) {
    out << "mask   " << mask_line(c) << '\n' << "sizes  " << sizes(c) << '\n';
    for (const warning& w : warnings) out << wrapped("   ! " + w.text, 5);
    out << '\n';

    // the four side by side, per batch item when they differ
    const std::size_t batch = keep.shape()[0];
    if (!views.per_batch || same_for_every_item(keep)) {
        if (batch > 1) out << "every batch item (the same mask)\n";
        print_planes(out, c, views, keep, 0);
    } else {
        for (std::size_t b = 0; b < batch; ++b) {
            out << (b ? "\n" : "") << "batch " << b;
            if (c.mask.padding) out << " (lengths[" << b << "] = " << c.mask.lengths[b] << ")";
            out << '\n';
            print_planes(out, c, views, keep, b);
        }
    }
    out << "\nT = True, F = False; additive: 0 = may attend, " << fill_text(c) << " = may not\n\n";

    // each convention in PyTorch
    out << "In PyTorch, after\n";
    std::size_t start = 0;
    while (start <= views.setup.size()) {
        const std::size_t end = std::min(views.setup.find('\n', start), views.setup.size());
        out << "    " << views.setup.substr(start, end - start) << '\n';
        start = end + 1;
    }
    out << wrapped("each build line makes its mask above exactly, and each apply line the weights from scores "
                   "[B,H,Sq,Sk] as PyTorch computes them with it:", 0)
        << '\n';
    for (const mask_view& v : views.views) {
        out << pad_right(v.name, 10) << v.meaning << '\n';
        out << wrapped(std::string(10, ' ') + v.used_by, 10);
        out << "  build   " << v.name << " = " << v.build << '\n';
        out << "  apply   weights = " << v.apply << '\n';
        if (!v.pass.empty()) out << "  pass    " << v.pass << '\n';
        out << wrapped("  empty   " + v.empty_row, 10) << (&v == &views.views.back() ? "" : "\n");
    }
}

void render_mask_json(const config& c, const mask_views& views, const xt::xarray<bool>& keep,
                      const warning_list& warnings, std::ostream& out) {
    nlohmann::ordered_json j;
    j["format"] = "attn.mask/1";
    j["config"] = config_to_json(c);
    j["setup"] = views.setup;
    const mask_view& first = views.views.front();
    j["shape"] = first.data.shape();
    j["dims"] = views.per_batch ? std::vector<std::string>{"batch", "query", "key"}
                                : std::vector<std::string>{"query", "key"};
    // the conventions' data streamed between the members dumped whole
    out << open_object(j) << ",\"conventions\":[";
    for (std::size_t n = 0; n < views.views.size(); ++n) {
        const mask_view& v = views.views[n];
        nlohmann::ordered_json one{{"name", v.name},   {"meaning", v.meaning}, {"used_by", v.used_by},
                                   {"torch", v.build}, {"apply", v.apply}};
        if (!v.pass.empty()) one["pass"] = v.pass;
        one["fully_masked_row"] = v.empty_row;
        one["dtype"] = v.boolean ? "bool" : "float32";
        out << (n ? "," : "") << open_object(one) << ",\"data\":";
        write_data_json(v, out);
        out << '}';
    }
    out << ']';
    nlohmann::ordered_json rest;
    rest["rows_without_key"] = nlohmann::ordered_json::array();
    for (const auto& [b, i] : rows_without_key(keep)) rest["rows_without_key"].push_back({b, i});
    rest["warnings"] = nlohmann::ordered_json::array();
    for (const warning& w : warnings) rest["warnings"].push_back(w.text);
    out << ',' << rest.dump().substr(1) << '\n';
}

}  // namespace attn

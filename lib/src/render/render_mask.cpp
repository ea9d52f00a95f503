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

/// Whether no key may be attended in a row [Sk] of the mask.
bool without_key(const bool* row, std::size_t sk) { return std::find(row, row + sk, true) == row + sk; }

/// Whether every batch item of the mask has the same [Sq,Sk] plane: each item's rows against
/// item 0's, read again beside them.
bool same_for_every_item(const mask_stream& mask) {
    mask_stream rows(mask), first(mask);
    const std::size_t sq = mask.rows(), sk = mask.keys();
    for (std::size_t i = 0; i < sq; ++i) rows.next();  // item 0 is itself
    for (std::size_t b = 1; b < mask.batch(); ++b) {
        first.restart();
        for (std::size_t i = 0; i < sq; ++i) {
            const bool* row = rows.next();
            if (!std::equal(row, row + sk, first.next())) return false;
        }
    }
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
    std::string shown[2];  // the cell of a key that may not [0] and may [1] be attended, padded to `cell`
};

std::string cell_text(const config& c, const mask_view& v, float value) {
    if (v.boolean) return value != 0.0f ? "T" : "F";
    return value == 0.0f ? "0" : fill_text(c);
}

/// The four views of the next Sq rows of `mask` (one batch item) side by side, with row and key labels.
void print_planes(std::ostream& out, const config& c, const mask_views& views, mask_stream& mask) {
    const std::size_t sq = mask.rows(), sk = mask.keys();
    const std::size_t key_digits = std::to_string(sk - 1).size();
    const std::size_t label = std::max<std::size_t>(std::string("query " + std::to_string(sq - 1)).size(), 3);
    const std::string gap = "   ";
    std::vector<block> blocks;
    for (const mask_view& v : views.views) {
        const std::size_t cell = std::max(key_digits, v.boolean ? std::size_t{1} : fill_text(c).size());
        block k{&v, cell, std::max(v.name.size(), sk * (cell + 1) - 1), {}};
        for (const bool allowed : {false, true}) k.shown[allowed] = pad_left(cell_text(c, v, v.value(allowed)), cell);
        blocks.push_back(std::move(k));
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
    std::string line, cells;  // a row's text: what the table holds
    for (std::size_t i = 0; i < sq; ++i) {
        const bool* row = mask.next();
        line = pad_right("query " + std::to_string(i), label);
        for (const block& k : blocks) {
            cells.clear();
            for (std::size_t j = 0; j < sk; ++j) {
                if (j) cells += ' ';
                cells += k.shown[row[j]];
            }
            line += gap;
            if (cells.size() < k.width) line.append(k.width - cells.size(), ' ');
            line += cells;
        }
        if (without_key(row, sk)) line += "   no allowed key";
        line += '\n';
        out << line;
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

/// A cell as tensor.tolist() dumps it: true/false, or 0 and the fill as nlohmann dumps floats.
std::string cell_json(const mask_view& v, float x) {
    if (v.boolean) return x != 0.0f ? "true" : "false";
    if (std::isinf(x)) return x < 0 ? "\"-inf\"" : "\"inf\"";
    return nlohmann::ordered_json(static_cast<double>(x)).dump();
}

/// A view's data as nested lists, as tensor.tolist() ([Sq,Sk] of item 0, or [B,Sq,Sk]), written
/// to `out` a row at a time from a fresh read of `mask`: the text of a row is all it holds.
void write_data_json(const mask_view& v, bool per_batch, const mask_stream& mask, std::ostream& out) {
    const std::string shown[2] = {cell_json(v, v.value(false)), cell_json(v, v.value(true))};
    mask_stream rows(mask);
    const std::size_t sq = mask.rows(), sk = mask.keys();
    std::string text;
    const auto plane = [&] {
        out << '[';
        for (std::size_t i = 0; i < sq; ++i) {
            const bool* row = rows.next();
            text.assign(i ? ",[" : "[");
            for (std::size_t j = 0; j < sk; ++j) {
                if (j) text += ',';
                text += shown[row[j]];
            }
            text += ']';
            out << text;
        }
        out << ']';
    };
    if (!per_batch) return plane();
    out << '[';
    for (std::size_t b = 0; b < mask.batch(); ++b) {
        if (b) out << ',';
        plane();
    }
    out << ']';
}

/// A setup line's text as the inside of a JSON string.
std::string json_inside(const std::string& text) {
    std::string quoted = nlohmann::ordered_json(text).dump();
    return quoted.substr(1, quoted.size() - 2);
}

/// `j`'s compact dump without its closing brace, for members to follow.
std::string open_object(const nlohmann::ordered_json& j) {
    std::string text = j.dump();
    text.pop_back();
    return text;
}

}  // namespace

void render_mask_table(const config& c, const mask_views& views, const mask_stream& mask,
                       const warning_list& warnings, std::ostream& out) {
    out << "mask   " << mask_line(c) << '\n' << "sizes  " << sizes(c) << '\n';
    for (const warning& w : warnings) out << wrapped("   ! " + w.text, 5);
    out << '\n';

    // the four side by side, per batch item when they differ
    const std::size_t batch = mask.batch();
    mask_stream rows(mask);
    if (!views.per_batch || same_for_every_item(mask)) {
        if (batch > 1) out << "every batch item (the same mask)\n";
        print_planes(out, c, views, rows);
    } else {
        for (std::size_t b = 0; b < batch; ++b) {
            out << (b ? "\n" : "") << "batch " << b;
            if (c.mask.padding) out << " (lengths[" << b << "] = " << c.mask.lengths[b] << ")";
            out << '\n';
            print_planes(out, c, views, rows);
        }
    }
    out << "\nT = True, F = False; additive: 0 = may attend, " << fill_text(c) << " = may not\n\n";

    // each convention in PyTorch
    out << "In PyTorch, after\n";
    for (std::size_t n = 0; n < views.setup.size(); ++n) {
        out << "    ";
        write_setup_line(out, views, n);
        out << '\n';
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

void render_mask_json(const config& c, const mask_views& views, const mask_stream& mask,
                      const warning_list& warnings, std::ostream& out) {
    nlohmann::ordered_json j;
    j["format"] = "attn.mask/1";
    j["config"] = config_to_json(c);
    // the setup (the mask files' literal in it) and the conventions' data streamed between
    // the members dumped whole
    out << open_object(j) << ",\"setup\":\"";
    for (std::size_t n = 0; n < views.setup.size(); ++n) {
        if (n) out << "\\n";
        write_setup_line(out, views, n, json_inside);
    }
    out << "\",\"shape\":" << nlohmann::ordered_json(views.shape).dump() << ",\"dims\":"
        << nlohmann::ordered_json(views.per_batch ? std::vector<std::string>{"batch", "query", "key"}
                                                  : std::vector<std::string>{"query", "key"})
               .dump();
    out << ",\"conventions\":[";
    for (std::size_t n = 0; n < views.views.size(); ++n) {
        const mask_view& v = views.views[n];
        nlohmann::ordered_json one{{"name", v.name},   {"meaning", v.meaning}, {"used_by", v.used_by},
                                   {"torch", v.build}, {"apply", v.apply}};
        if (!v.pass.empty()) one["pass"] = v.pass;
        one["fully_masked_row"] = v.empty_row;
        one["dtype"] = v.boolean ? "bool" : "float32";
        out << (n ? "," : "") << open_object(one) << ",\"data\":";
        write_data_json(v, views.per_batch, mask, out);
        out << '}';
    }
    out << ']';
    // the rows with no allowed key, [batch, query] as they are found
    out << ",\"rows_without_key\":[";
    mask_stream rows(mask);
    bool first = true;
    for (std::size_t b = 0; b < mask.batch(); ++b)
        for (std::size_t i = 0; i < mask.rows(); ++i)
            if (without_key(rows.next(), mask.keys())) {
                out << (first ? "[" : ",[") << b << ',' << i << ']';
                first = false;
            }
    nlohmann::ordered_json texts = nlohmann::ordered_json::array();
    for (const warning& w : warnings) texts.push_back(w.text);
    out << "],\"warnings\":" << texts.dump() << "}\n";
}

}  // namespace attn

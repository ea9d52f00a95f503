// One mask in PyTorch's four conventions (mask_conventions.hpp): the Python that
// builds each, term by term, from the kinds the config asks for. What each convention
// means, and who uses it, is share/attn/text/masks.md's.
#include "attn/teach/mask_conventions.hpp"

#include <algorithm>
#include <cstddef>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string_view>

#include "attn/compute/error.hpp"
#include "attn/teach/prose.hpp"
#include "attn/teach/stage_text.hpp"
#include "attn/text/join.hpp"
#include "attn/text/number_text.hpp"

namespace attn {
namespace {

/// What one mask kind adds to the Python expressions.
struct term {
    enum shape_kind { square, per_key, per_batch };  // [Sq,Sk], [B,Sk], [B,Sq,Sk]
    std::string allowed;    // true = may attend: "torch.tril(torch.ones(Sq, Sk, dtype=torch.bool))"
    std::string forbidden;  // true = may NOT attend: "torch.triu(torch.ones(Sq, Sk), diagonal=1).bool()"
    shape_kind shape = square;
    bool comparison = false;  // a comparison: needs parentheses next to & and | (they bind tighter)
};

/// The fewest digits that read back as the same double, exponent as Python writes
/// it by hand: 0.5, 1e9, -1e-05 -> -1e-5.
std::string shortest(double value) {
    const std::string s = shortest_text(value);
    const std::size_t e = s.find('e');
    if (e == std::string::npos) return s;
    std::string exponent = s.substr(e + 1);
    const bool negative = exponent[0] == '-';
    if (exponent[0] == '+' || exponent[0] == '-') exponent.erase(0, 1);
    exponent.erase(0, exponent.find_first_not_of('0') == std::string::npos ? exponent.size() - 1
                                                                             : exponent.find_first_not_of('0'));
    return s.substr(0, e + 1) + (negative ? "-" : "") + exponent;
}

/// The causal term: torch.tril for keep, torch.triu one diagonal up for mha (as notebook 003);
/// lower-right moves both by Sk - Sq (torch.tril's diagonal is 0 by default).
term causal_term(const config& c) {
    const bool lower_right = c.mask.causal_align == causal_alignment::lower_right;
    const std::string tril_diagonal = lower_right ? ", diagonal=Sk - Sq" : "";
    return {"torch.tril(torch.ones(Sq, Sk, dtype=torch.bool)" + tril_diagonal + ")",
            std::string("torch.triu(torch.ones(Sq, Sk), diagonal=") + (lower_right ? "Sk - Sq + 1" : "1") + ").bool()",
            term::square, false};
}

/// The terms of every kind c.mask asks for, in --mask's order; a mask file is file_keep.
std::vector<term> mask_terms(const config& c) {
    const mask_spec& m = c.mask;
    std::vector<term> terms;
    if (m.causal) terms.push_back(causal_term(c));
    if (m.padding)
        terms.push_back({"torch.arange(Sk) < lengths[:, None]", "torch.arange(Sk) >= lengths[:, None]", term::per_key,
                         true});
    if (m.window) {  // the queries' positions among the keys': N..N+Sq-1 in a decoding step (--past N)
        const std::string queries = first_query_position(c) > 0 ? "torch.arange(N, N + Sq)" : "torch.arange(Sq)";
        terms.push_back({"(" + queries + "[:, None] - torch.arange(Sk)).abs() <= W",
                         "(" + queries + "[:, None] - torch.arange(Sk)).abs() > W", term::square, true});
    }
    if (m.random) {
        const std::string p = shortest(m.random_keep);
        terms.push_back({"rand < " + p, "rand >= " + p, term::per_batch, true});
    }
    if (m.from_file || m.key_padding) terms.push_back({"file_keep", "~file_keep", term::per_batch, false});
    return terms;
}

/// The terms joined by `op` (" & " or " | "): a [B,Sk] term is lifted to [B,1,Sk]
/// to meet the [Sq,Sk] ones, and a lone [B,Sk] term is expanded to [B,Sq,Sk].
std::string combine(const std::vector<term>& terms, bool allowed, const std::string& op) {
    std::vector<std::string> parts;
    for (const term& t : terms) {
        const std::string& e = allowed ? t.allowed : t.forbidden;
        if (t.shape == term::per_key)
            parts.push_back("(" + e + ")[:, None, :]" + (terms.size() == 1 ? ".expand(B, Sq, Sk)" : ""));
        else
            parts.push_back(terms.size() > 1 && t.comparison ? "(" + e + ")" : e);
    }
    return join(parts, op);
}

bool any_shape(const std::vector<term>& terms, term::shape_kind shape) {
    return std::any_of(terms.begin(), terms.end(), [shape](const term& t) { return t.shape == shape; });
}

/// Where a literal goes in the mask files' setup line.
constexpr std::string_view literal_place = "{literal}";

/// "torch.tensor([[[1, 0], [1, 1]]], dtype=torch.bool)": keep [B,1,Sq,Sk] as [B,Sq,Sk], to
/// `out` a row at a time (the text of a row [Sk] is all it holds).
void write_bool_literal(std::ostream& out, const xt::xarray<bool>& keep) {
    const std::size_t batch = keep.shape()[0], sq = keep.shape()[2], sk = keep.shape()[3];
    out << "torch.tensor([";
    std::string row;
    for (std::size_t b = 0; b < batch; ++b) {
        out << (b ? ", [" : "[");
        for (std::size_t i = 0; i < sq; ++i) {
            const bool* cells = keep.data() + (b * sq + i) * sk;
            row.assign(i ? ", [" : "[");
            for (std::size_t j = 0; j < sk; ++j) row += j ? (cells[j] ? ", 1" : ", 0") : (cells[j] ? "1" : "0");
            row += ']';
            out << row;
        }
        out << ']';
    }
    out << "], dtype=torch.bool)";
}

/// The Python lines that give every name the expressions use.
std::vector<std::string> setup_lines(const config& c, bool heads) {
    const mask_spec& m = c.mask;
    std::vector<std::string> lines;
    lines.push_back(heads ? "B, H, Sq, Sk = " + join({c.batch, c.heads, c.seq, c.kv_seq}, ", ")
                          : "B, Sq, Sk = " + join({c.batch, c.seq, c.kv_seq}, ", "));
    if (m.padding)
        lines.push_back("lengths = torch.tensor([" + join(m.lengths, ", ") + "])  # valid keys per batch item");
    if (m.window) lines.push_back("W = " + std::to_string(m.window_size.value_or(0)));
    if (m.window && first_query_position(c) > 0)
        lines.push_back("N = " + std::to_string(first_query_position(c)) + "  # cached tokens: the queries are at N..N+Sq-1");
    if (m.random)
        lines.push_back("rand = torch.rand(B, Sq, Sk, generator=torch.Generator().manual_seed(" +
                        std::to_string(m.random_seed) + "))  # as torch.manual_seed(N); torch.rand(B,1,Sq,Sk)");
    if (m.from_file || m.key_padding)
        lines.push_back("file_keep = " + std::string(literal_place) + "  # the mask files as attn read them");
    return lines;
}

/// How nn.MultiheadAttention takes the mask: an [Sq,Sk] attn_mask and a [B,Sk]
/// key_padding_mask (true = NOT allowed), or, for a mask that differs per batch
/// item otherwise, the whole of it per head as a 3-D attn_mask [B*H,Sq,Sk].
std::string mha_pass(const config& c, const std::vector<term>& terms, bool& needs_heads) {
    const std::string call = std::string("nn.MultiheadAttention(D, H, batch_first=True)(") +
                             (c.cross() ? "x, x_kv, x_kv, " : "x, x, x, ");
    needs_heads = any_shape(terms, term::per_batch);
    if (needs_heads) return call + "attn_mask=mha.repeat_interleave(H, dim=0))";
    if (!any_shape(terms, term::per_key)) return call + "attn_mask=mha)";
    std::vector<term> square;
    std::string key_padding;
    for (const term& t : terms)
        if (t.shape == term::per_key)
            key_padding = t.forbidden;
        else
            square.push_back(t);
    if (square.empty()) return call + "key_padding_mask=" + key_padding + ")";
    return call + "attn_mask=" + combine(square, false, " | ") + ", key_padding_mask=" + key_padding + ")";
}

/// How F.scaled_dot_product_attention takes it, with its shortcut for a causal mask alone.
std::string sdpa_pass(const config& c, const std::vector<term>& terms, const std::string& name, bool per_batch) {
    std::string text = "F.scaled_dot_product_attention(q, k, v, attn_mask=" + name + (per_batch ? "[:, None]" : "") + ")";
    const mask_spec& m = c.mask;
    const bool causal_only = m.causal && terms.size() == 1;
    if (causal_only && name == "sdpa")
        text += "; " + prose(m.causal_align == causal_alignment::upper_left ? "masks.sdpa.causal.upper_left"
                                                                            : "masks.sdpa.causal.lower_right");
    return text;
}

/// "torch.softmax(<scores>, dim=-1)": the weights from masked or biased scores [B,H,Sq,Sk].
std::string softmax_of(const std::string& scores) { return "torch.softmax(" + scores + ", dim=-1)"; }

}  // namespace

std::string python_float(float value) {
    if (std::isinf(value)) return value < 0 ? "float('-inf')" : "float('inf')";
    if (std::isnan(value)) return "float('nan')";
    return shortest(static_cast<double>(value));  // the float's exact value as a double: the same float32
}

mask_views describe_mask(const config& c, const xt::xarray<bool>* files) {
    const std::vector<term> terms = mask_terms(c);
    mask_views out;
    out.per_batch = any_shape(terms, term::per_key) || any_shape(terms, term::per_batch);
    const std::string head_axis = out.per_batch ? "[:, None]" : "";  // [B,Sq,Sk] -> [B,1,Sq,Sk] over the heads
    const std::string fill = python_float(c.fill);
    const std::string neg_inf = "float('-inf')";
    const auto batch = static_cast<std::size_t>(c.batch), sq = static_cast<std::size_t>(c.seq),
               sk = static_cast<std::size_t>(c.kv_seq);
    out.shape = out.per_batch ? std::vector<std::size_t>{batch, sq, sk} : std::vector<std::size_t>{sq, sk};
    if ((c.mask.from_file || c.mask.key_padding) && files == nullptr)
        throw error("internal: describe_mask needs the mask files' mask");
    out.files = files;

    bool needs_heads = false;
    const std::string mha = mha_pass(c, terms, needs_heads);
    out.setup = setup_lines(c, needs_heads);

    const std::string keep_build = combine(terms, true, " & ");
    out.views.push_back({"keep", prose("masks.keep.meaning"), prose("masks.keep.used_by"), keep_build,
                         softmax_of("scores.masked_fill(~keep" + head_axis + ", " + fill + ")"), "",
                         prose("masks.keep.empty_row"), true, false});
    out.views.push_back({"mha", prose("masks.mha.meaning"), prose("masks.mha.used_by"), combine(terms, false, " | "),
                         softmax_of("scores.masked_fill(mha" + head_axis + ", " + neg_inf + ")"), mha,
                         prose("masks.mha.empty_row"), true, true});
    out.views.push_back({"sdpa", prose("masks.sdpa.meaning"), prose("masks.sdpa.used_by"), keep_build,
                         softmax_of("scores.masked_fill(~sdpa" + head_axis + ", " + neg_inf + ")"),
                         sdpa_pass(c, terms, "sdpa", out.per_batch), prose("masks.sdpa.empty_row"), true, false});
    out.views.push_back({"additive", prose("masks.additive.meaning", {{"fill", std::isinf(c.fill) ? "-inf" : fill}}),
                         prose("masks.additive.used_by"),
                         "torch.zeros(" + std::string(out.per_batch ? "B, " : "") + "Sq, Sk).masked_fill(~keep, " +
                             fill + ")",
                         softmax_of("scores + additive" + head_axis),
                         sdpa_pass(c, terms, "additive", out.per_batch), prose("masks.additive.empty_row"), false,
                         false, c.fill});
    return out;
}

void write_setup_line(std::ostream& out, const mask_views& views, std::size_t n,
                      std::string (*quote)(const std::string&)) {
    const auto text = [quote](const std::string& t) { return quote ? quote(t) : t; };
    const std::string& line = views.setup.at(n);
    const std::size_t at = line.find(literal_place);
    if (at == std::string::npos || views.files == nullptr) {
        out << text(line);
        return;
    }
    out << text(line.substr(0, at));
    write_bool_literal(out, *views.files);
    out << text(line.substr(at + literal_place.size()));
}

std::string setup_text(const mask_views& views) {
    std::ostringstream out;
    for (std::size_t n = 0; n < views.setup.size(); ++n) {
        if (n) out << '\n';
        write_setup_line(out, views, n);
    }
    return out.str();
}

}  // namespace attn

#include "attn/render/table_explain.hpp"

#include "attn/teach/explain.hpp"

namespace attn::table {
namespace {

constexpr std::size_t explain_width = 100;
constexpr std::size_t indent = 3;       // as the formula under a heading
constexpr std::size_t label_width = 8;  // "memory" and two spaces
constexpr std::size_t short_code = 40;  // columns: code in brackets this short is never broken

/// Labelled lines: the label in its column, the text wrapped beside it.
void print_labelled(std::ostream& out, const std::vector<explanation_line>& lines, const palette& p) {
    for (const explanation_line& line : lines) {
        const std::vector<std::string> rows = wrap_words(line.text, explain_width - indent - label_width);
        for (std::size_t i = 0; i < rows.size(); ++i) {
            write_spaces(out, indent);
            if (i == 0)
                write_left(out, line.label, label_width, p.dim, p);
            else
                write_spaces(out, label_width);
            out << rows[i] << '\n';
        }
    }
}

/// Whether the group opened at text[open] ('(' or '[') is code: a call or index
/// ("view(B, Sq, D)", "x[b, s, i]"), a shape or a tuple ("[B,H,Sq,dk]", "(40, 8, 1)"),
/// not a remark in parentheses.
bool is_code_group(std::string_view text, std::size_t open) {
    if (text[open] == '[') return true;
    const bool called = open > 0 && text[open - 1] != ' ' && text[open - 1] != '(';
    const char first = open + 1 < text.size() ? text[open + 1] : ' ';
    return called || (first >= '0' && first <= '9') || first == '-';
}

/// Whether a line may break at the space text[at]: not inside a short group of
/// code (is_code_group), nor just before a '[' (so "out [2,5,8]" stays together).
bool may_break_at(std::string_view text, std::size_t at) {
    if (at + 1 < text.size() && text[at + 1] == '[') return false;
    int depth = 0;
    for (std::size_t i = at; i-- > 0;) {  // each group still open at `at`, innermost first
        if (text[i] == ')' || text[i] == ']') ++depth;
        if (text[i] != '(' && text[i] != '[') continue;
        if (depth > 0) {
            --depth;
            continue;
        }
        if (!is_code_group(text, i)) continue;
        std::size_t close = at, inner = 0;  // where it closes
        for (; close < text.size(); ++close) {
            if (text[close] == '(' || text[close] == '[') ++inner;
            if (text[close] == ')' || text[close] == ']') {
                if (inner == 0) break;
                --inner;
            }
        }
        if (close < text.size() && text_width(text.substr(i, close - i + 1)) <= short_code) return false;
    }
    return true;
}

}  // namespace

std::vector<std::string> wrap_words(std::string_view text, std::size_t width) {
    // words: the text between break points, each with the spaces before it
    struct word {
        std::string_view gap, text;
    };
    std::vector<word> words;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t gap_end = start;
        while (gap_end < text.size() && text[gap_end] == ' ') ++gap_end;
        std::size_t end = gap_end;
        while (end < text.size() && !(text[end] == ' ' && may_break_at(text, end))) ++end;
        words.push_back({text.substr(start, gap_end - start), text.substr(gap_end, end - gap_end)});
        start = end;
    }
    std::vector<std::string> lines;
    std::string line;
    std::size_t used = 0;  // visible columns in `line`
    for (const word& w : words) {
        const std::size_t gap = line.empty() ? 0 : w.gap.size(), size = text_width(w.text);
        if (!line.empty() && used + gap + size > width) {
            lines.push_back(line);
            line.clear();
            used = 0;
        }
        if (!line.empty()) {
            line += w.gap;
            used += gap;
        }
        line += w.text;
        used += size;
    }
    if (!line.empty()) lines.push_back(line);
    return lines;
}

void print_explain_intro(std::ostream& out, const config& c, const palette& p) {
    out << p.bold << "── multi-head attention, explained ──" << p.reset << '\n';
    const std::vector<std::string> paragraphs = explain_intro(c);
    for (std::size_t k = 0; k < paragraphs.size(); ++k) {
        if (k != 0) out << '\n';
        const std::string& paragraph = paragraphs[k];
        for (const std::string& row : wrap_words(paragraph, explain_width - indent)) {
            write_spaces(out, indent);
            out << row << '\n';
        }
    }
    out << '\n';
}

void print_stage_explanation(std::ostream& out, const config& c, const stage& s, const palette& p) {
    print_labelled(out, explanation_lines(explain_stage(c, s)), p);
}

void print_explain_summary(std::ostream& out, const config& c, const palette& p) {
    out << '\n' << p.bold << "── summary ──" << p.reset << '\n';
    print_labelled(out, explain_summary(c), p);
}

}  // namespace attn::table

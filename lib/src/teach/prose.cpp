// The teaching texts (prose.hpp): the embedded files split into sections once, then
// filled by libfmt.
#include "attn/teach/prose.hpp"

#include <atomic>
#include <cstddef>
#include <map>
#include <stdexcept>

#include <fmt/args.h>
#include <fmt/format.h>

namespace attn {

struct prose_file {  // written by cmake/embed_texts.cmake: a file's name without .md, and its text
    const char* name;
    const char* text;
};
extern const prose_file prose_files[];
extern const std::size_t prose_file_count;

namespace {

struct section {
    std::string text;
    std::atomic<bool> used{false};
};

/// Adds the sections of `file` to `sections` as "name.SECTION": the text after each
/// "## SECTION" line, its lines joined by one space, without blank lines at either end.
void split(const prose_file& file, std::map<std::string, section, std::less<>>& sections) {
    std::string_view rest = file.text;
    section* current = nullptr;
    while (!rest.empty()) {
        const std::size_t end = rest.find('\n');
        const std::string_view line = rest.substr(0, end);
        rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
        if (line.substr(0, 3) == "## ") {
            const std::string id = std::string(file.name) + "." + std::string(line.substr(3));
            const auto [at, added] = sections.try_emplace(id);
            if (!added) throw std::logic_error("share/attn/text: section " + id + " written twice");
            current = &at->second;
        } else if (current && !line.empty()) {
            if (!current->text.empty()) current->text += ' ';
            current->text += line;
        }
    }
}

std::map<std::string, section, std::less<>>& all_sections() {
    static std::map<std::string, section, std::less<>> sections = [] {
        std::map<std::string, section, std::less<>> made;
        for (std::size_t f = 0; f < prose_file_count; ++f) split(prose_files[f], made);
        return made;
    }();
    return sections;
}

}  // namespace

std::string prose(std::string_view id, const std::vector<prose_arg>& args) {
    const auto found = all_sections().find(id);
    if (found == all_sections().end()) throw std::logic_error("share/attn/text: no section " + std::string(id));
    found->second.used.store(true, std::memory_order_relaxed);
    fmt::dynamic_format_arg_store<fmt::format_context> values;
    for (const prose_arg& a : args) values.push_back(fmt::arg(a.name, a.value));
    try {
        return fmt::vformat(found->second.text, values);
    } catch (const fmt::format_error& e) {
        throw std::logic_error("share/attn/text: section " + std::string(id) + ": " + e.what());
    }
}

std::vector<std::string> prose_ids() {
    std::vector<std::string> ids;
    for (const auto& entry : all_sections()) ids.push_back(entry.first);
    return ids;
}

bool prose_used(std::string_view id) {
    const auto found = all_sections().find(id);
    return found != all_sections().end() && found->second.used.load(std::memory_order_relaxed);
}

}  // namespace attn

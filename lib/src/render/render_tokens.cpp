// attn tokens' table and JSON (render_tokens.hpp).
#include "attn/render/render_tokens.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "attn/text/join.hpp"
#include "attn/text/printable_text.hpp"
#include "attn/text/utf8_text.hpp"

namespace attn {

void render_tokens_table(const text_tokens& t, std::ostream& out) {
    std::vector<std::string> ids;
    for (const token_piece& p : t.tokens) ids.push_back(std::to_string(p.id));
    out << "vocab   " << printable_text(t.vocab_path) << "\n";
    out << "ids     " << join(ids, ",") << "   (" << t.tokens.size() << (t.tokens.size() == 1 ? " token" : " tokens")
        << "; --tokens takes this list)\n\n";
    const std::size_t id_width = std::max<std::size_t>(2, std::max_element(ids.begin(), ids.end(), [](const auto& a, const auto& b) {
                                                               return a.size() < b.size();
                                                           })->size());
    const std::size_t position_width = std::max<std::size_t>(8, std::to_string(t.tokens.size() - 1).size());
    out << std::string(position_width - 8, ' ') << "position  " << std::string(id_width - 2, ' ') << "id  token\n";
    for (std::size_t i = 0; i < t.tokens.size(); ++i) {
        const std::string position = std::to_string(i);
        out << std::string(position_width - position.size(), ' ') << position << "  "
            << std::string(id_width - ids[i].size(), ' ') << ids[i] << "  " << printable_text(t.tokens[i].piece) << "\n";
    }
}

void render_tokens_json(const text_tokens& t, std::ostream& out) {
    nlohmann::ordered_json j{{"format", "attn.tokens/1"}, {"vocab", utf8_escaped(t.vocab_path)}};
    std::vector<std::int64_t> ids;
    std::vector<std::string> pieces;
    for (const token_piece& p : t.tokens) ids.push_back(p.id), pieces.push_back(utf8_escaped(p.piece));
    j["ids"] = ids;
    j["tokens"] = pieces;
    out << j.dump() << "\n";
}

}  // namespace attn

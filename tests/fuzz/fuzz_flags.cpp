// libFuzzer harness: the run flags. An input is a command line, one argument per line:
//   --batch
//   6148914691236517206
//   --mask-file
//   @mask2d
// parsed by CLI11 with attn trace's own run flags and --max-memory (run_flags.hpp,
// messages.hpp), turned into a config (files read, sizes resolved, validated) and
// checked against the memory limit, as `attn trace` does before it computes.
// Flags that read files are refused, except --mask-file and --key-padding-mask with
// one of the harness's own small masks: @mask2d [4,4], @mask3d [2,4,4], @mask4d
// [2,1,4,4], @kpm [2,4].
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "attn/compute/memory.hpp"
#include "fuzz_common.hpp"
#include "messages.hpp"
#include "run_flags.hpp"

namespace {

/// The harness's masks, written once, by the name an input gives them.
const std::map<std::string, std::string>& mask_files() {
    static const std::map<std::string, std::string> files = [] {
        const std::map<std::string, std::string> text{
            {"@mask2d", "[[1,0,0,0],[1,1,0,0],[1,1,1,0],[1,1,1,1]]"},
            {"@mask3d", "[[[1,0,0,0],[1,1,0,0],[1,1,1,0],[1,1,1,1]],[[1,1,1,1],[1,1,1,1],[0,0,0,0],[1,0,1,0]]]"},
            {"@mask4d", "[[[[1,0,0,0],[1,1,0,0],[1,1,1,0],[1,1,1,1]]],[[[1,1,1,1],[1,1,1,1],[0,0,0,0],[1,0,1,0]]]]"},
            {"@kpm", "[[false,false,true,true],[false,false,false,false]]"}};
        std::map<std::string, std::string> paths;
        for (const auto& [name, json] : text)
            paths[name] = attn_fuzz::write_input_file(reinterpret_cast<const std::uint8_t*>(json.data()), json.size(),
                                                      (name.substr(1) + ".json").c_str());
        return paths;
    }();
    return files;
}

/// The arguments, one per line, or false when one names a file the harness does not own.
bool command_line(const std::uint8_t* data, std::size_t size, std::vector<std::string>& args) {
    static const std::vector<std::string> file_flags{"--input", "--kv-input", "--params", "--q", "--k", "--v", "--from"};
    static const std::vector<std::string> mask_flags{"--mask-file", "--key-padding-mask"};
    std::string text(reinterpret_cast<const char*>(data), size);
    if (!text.empty() && text.back() == '\n') text.pop_back();  // a file's last line
    if (text.empty()) return true;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        args.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    const auto names = [](const std::string& arg, const std::string& flag) {
        return arg == flag || arg.rfind(flag + "=", 0) == 0;
    };
    for (std::size_t i = 0; i < args.size(); ++i) {
        for (const std::string& flag : file_flags)
            if (names(args[i], flag)) return false;
        for (const std::string& flag : mask_flags) {
            if (!names(args[i], flag)) continue;
            const bool separate = args[i] == flag;  // "--mask-file @mask2d", not "--mask-file=@mask2d"
            if (separate && i + 1 == args.size()) break;  // no value: CLI11's usage error
            std::string& value = separate ? args[i + 1] : args[i];
            const auto it = mask_files().find(separate ? value : value.substr(flag.size() + 1));
            if (it == mask_files().end()) return false;
            value = separate ? it->second : flag + "=" + it->second;
            if (separate) ++i;
        }
    }
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<std::string> args{"attn"};
    if (!command_line(data, size, args)) return 0;
    CLI::App app{"attn trace", "trace"};
    attn_app::run_options o;
    std::uint64_t max_memory = 0;
    attn_app::add_run_flags(&app, o);
    app.add_option("--max-memory", max_memory)->transform(attn_app::byte_size());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    try {
        app.parse(static_cast<int>(argv.size()), argv.data());
    } catch (const CLI::ParseError&) {
        return 0;  // a usage error (or --help): attn says so and exits 2
    }
    const attn_app::flag_given given = [&](const char* flag) { return app.count(flag) > 0; };
    // The limit is the run's before its files are read, as run_trace sets it (1 GiB here
    // for attn's default of 80% of RAM): the mask files are expanded within it.
    o.max_memory = std::to_string(max_memory != 0 ? max_memory : std::uint64_t(1) << 30);  // run_options: as --max-memory gives it
    attn_fuzz::expect_attn_errors_only([&] {
        const attn::loaded_inputs loaded = attn_app::load_run_inputs(o, given);
        attn::estimate_total_bytes(loaded.cfg);
        attn::check_memory(loaded.cfg, loaded.cfg.limits.max_memory);
    });
    return 0;
}

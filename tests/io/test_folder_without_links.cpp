// folder_without_links and output_file's folder constructor: a hand-out folder a student
// may write into. No link in any component is followed; what is planted at a file's name
// is replaced, except a read-only file.
#include <filesystem>
#include <fstream>
#include <string>

#include <sys/stat.h>

#include <doctest/doctest.h>

#include "attn/compute/error.hpp"
#include "attn/io/folder_without_links.hpp"
#include "attn/io/output_file.hpp"

#include "support.hpp"

namespace fs = std::filesystem;

TEST_SUITE("folder_without_links") {
    TEST_CASE("missing components are made; a file is written relative to the folder") {
        const scratch_dir dir("folder-make");
        const attn::folder_without_links folder(dir / "a/b/./c/", "--out a/b/c");
        attn::output_file file(folder, "task.md", "--out a/b/c: task.md");
        file.stream() << "hello";
        file.commit();
        CHECK(file_bytes(dir / "a/b/c/task.md") == "hello");
        CHECK(dir.entries() == 1);
        CHECK(fs::directory_iterator(dir / "a/b/c") != fs::directory_iterator());
    }

    TEST_CASE("a link in an intermediate component is refused and named; nothing is made behind it") {
        const scratch_dir dir("folder-link");
        fs::create_directories(dir / "cls/bob");
        fs::create_directories(dir / "elsewhere");
        fs::create_directory_symlink("../../elsewhere", dir / "cls/bob/lab");
        const std::string link = "--out X: " + (dir / "cls/bob/lab") + " is a symbolic link";
        CHECK_THROWS_WITH_AS(attn::folder_without_links(dir / "cls/bob/lab/part1", "--out X"),
                             doctest::Contains(link.c_str()), attn::error);
        CHECK(fs::is_empty(dir / "elsewhere"));
        CHECK_THROWS_AS(attn::folder_without_links(dir / "cls/bob/lab", "--out X"), attn::error);  // the last one too
    }

    TEST_CASE("a component that is a file is not a folder") {
        const scratch_dir dir("folder-file");
        std::ofstream(dir / "plain") << "x";
        CHECK_THROWS_WITH_AS(attn::folder_without_links(dir / "plain/x", "--out P"),
                             ("--out P: " + (dir / "plain") + " is not a folder").c_str(), attn::error);
    }

    TEST_CASE("a link planted at a file's name is replaced, not followed; a read-only file is refused") {
        const scratch_dir dir("folder-planted");
        fs::create_directories(dir / "alice");
        std::ofstream(dir / "outside.txt") << "outside";
        fs::create_symlink("../outside.txt", dir / "alice/task.md");
        const attn::folder_without_links folder(dir / "alice", "--out alice");
        {
            attn::output_file file(folder, "task.md", "--out alice: task.md");
            file.stream() << "new";
            file.commit();
        }
        CHECK(file_bytes(dir / "outside.txt") == "outside");
        CHECK(fs::is_regular_file(fs::symlink_status(dir / "alice/task.md")));
        chmod((dir / "alice/task.md").c_str(), 0444);
        CHECK_THROWS_WITH_AS(attn::output_file(folder, "task.md", "--out alice: task.md"),
                             "--out alice: task.md: Permission denied (the file is read-only)", attn::error);
        CHECK(file_bytes(dir / "alice/task.md") == "new");
        CHECK(dir.temporaries() == 0);
    }
}

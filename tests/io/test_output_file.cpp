// output_file: where --out goes, written whole or not at all, and never over what is
// not a plain file (issue 11, findings 4 to 6). fd_streambuf: every write error
// thrown. temporary_files: what a signal handler removes.
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include "attn/compute/error.hpp"
#include "attn/io/output_file.hpp"
#include "attn/io/temporary_files.hpp"

#include "support.hpp"

namespace {

namespace fs = std::filesystem;

void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

struct stat stat_of(const std::string& path) {
    struct stat st {};
    REQUIRE(lstat(path.c_str(), &st) == 0);
    return st;
}

/// Writes `text` to `path` through an output_file and commits it.
void put(const std::string& path, const std::string& text) {
    attn::output_file file(path, "--out " + path);
    file.stream() << text;
    file.commit();
}

bool is_root() { return geteuid() == 0; }

}  // namespace

TEST_SUITE("output_file") {
    TEST_CASE("a new file: written whole, with a new file's mode, no temporary left") {
        scratch_dir dir("output");
        const mode_t mask = umask(022);
        put(dir / "t.json", "{}\n");
        umask(mask);
        CHECK(file_bytes(dir / "t.json") == "{}\n");
        CHECK((stat_of(dir / "t.json").st_mode & 07777) == 0644);
        CHECK(dir.entries() == 1);
    }

    TEST_CASE("a regular file is replaced atomically and keeps its permission bits") {
        scratch_dir dir("output");
        write_text(dir / "t.json", "old");
        chmod((dir / "t.json").c_str(), 0640);
        attn::output_file file(dir / "t.json", "--out t.json");
        CHECK(file.how() == attn::output_file::method::replace);
        file.stream() << "new";
        CHECK(dir.temporaries() == 1);  // the bytes go to a temporary beside the target ...
        CHECK(file_bytes(dir / "t.json") == "old");  // ... and the target stays as it was until commit
        file.commit();
        CHECK(file_bytes(dir / "t.json") == "new");
        CHECK((stat_of(dir / "t.json").st_mode & 07777) == 0640);
        CHECK(dir.entries() == 1);
    }

    TEST_CASE("without commit the target is left as it was and the temporary removed") {
        scratch_dir dir("output");
        write_text(dir / "t.json", "old");
        {
            attn::output_file file(dir / "t.json", "--out t.json");
            file.stream() << std::string(200000, 'x');  // more than the buffer: bytes reach the temporary
        }
        CHECK(file_bytes(dir / "t.json") == "old");
        CHECK(dir.entries() == 1);
    }

    TEST_CASE("a read-only file is refused, as cp refuses it, even for root") {
        scratch_dir dir("output");
        write_text(dir / "ro.json", "keep");
        chmod((dir / "ro.json").c_str(), 0444);
        CHECK_THROWS_WITH_AS(attn::output_file(dir / "ro.json", "--out ro.json"),
                             "--out ro.json: Permission denied (the file is read-only)", attn::error);
        CHECK(file_bytes(dir / "ro.json") == "keep");
        CHECK(dir.entries() == 1);
    }

    TEST_CASE("a directory, or a name ending in /, is refused at once") {
        scratch_dir dir("output");
        fs::create_directory(dir.path / "sub");
        CHECK_THROWS_WITH_AS(attn::output_file(dir / "sub", "--out sub"), "--out sub: is a directory; give a file name",
                             attn::error);
        CHECK_THROWS_WITH_AS(attn::output_file(dir / "new/", "--out new/"),
                             "--out new/: is a directory name (it ends in /); give a file name", attn::error);
        CHECK(fs::is_directory(dir.path / "sub"));
        CHECK(dir.entries() == 1);
    }

    TEST_CASE("a missing folder is named") {
        scratch_dir dir("output");
        CHECK_THROWS_WITH_AS(attn::output_file(dir / "no/t.json", "--out no/t.json"),
                             ("--out no/t.json: cannot create a file in " + (dir / "no") + ": No such file or directory")
                                 .c_str(),
                             attn::error);
    }

    TEST_CASE("a symbolic link is followed: its target is replaced, the link stays") {
        scratch_dir dir("output");
        fs::create_directory(dir.path / "real");
        write_text(dir / "real/t.json", "old");
        fs::create_symlink("real/t.json", dir.path / "link.json");
        attn::output_file file(dir / "link.json", "--out link.json");
        CHECK(file.target() == fs::canonical(dir.path / "real/t.json").string());
        CHECK(fs::path(file.temporary()).parent_path() == fs::canonical(dir.path / "real"));  // beside the target
        file.stream() << "new";
        file.commit();
        CHECK(fs::is_symlink(dir.path / "link.json"));
        CHECK(fs::read_symlink(dir.path / "link.json") == "real/t.json");
        CHECK(file_bytes(dir / "real/t.json") == "new");
        CHECK(dir.entries() == 2);
    }

    TEST_CASE("a dangling symbolic link is an error, and nothing is created") {
        scratch_dir dir("output");
        fs::create_symlink("nowhere.json", dir.path / "link.json");
        CHECK_THROWS_WITH_AS(attn::output_file(dir / "link.json", "--out link.json"),
                             "--out link.json: a dangling symbolic link (to nowhere.json, which does not exist); attn "
                             "writes through links, not over them",
                             attn::error);
        CHECK(fs::is_symlink(dir.path / "link.json"));
        CHECK(dir.entries() == 1);
    }

    TEST_CASE("a file with hard links is written in place: every name shows the new bytes") {
        scratch_dir dir("output");
        write_text(dir / "a.json", std::string(100000, 'o'));
        fs::create_hard_link(dir.path / "a.json", dir.path / "b.json");
        const ino_t inode = stat_of(dir / "a.json").st_ino;
        attn::output_file file(dir / "a.json", "--out a.json");
        CHECK(file.how() == attn::output_file::method::copy_into_linked);
        file.stream() << "short";
        file.commit();
        CHECK(file_bytes(dir / "a.json") == "short");
        CHECK(file_bytes(dir / "b.json") == "short");
        CHECK(stat_of(dir / "a.json").st_ino == inode);
        CHECK(stat_of(dir / "a.json").st_nlink == 2);
        CHECK(dir.entries() == 2);
    }

    TEST_CASE("a 254-character name works: the temporary's name does not grow with it") {
        scratch_dir dir("output");
        const std::string name(254, 'n');
        put(dir / name, "ok");
        CHECK(file_bytes(dir / name) == "ok");
        CHECK(dir.entries() == 1);
    }

    TEST_CASE("a FIFO is written straight to, and stays a FIFO") {
        scratch_dir dir("output");
        REQUIRE(mkfifo((dir / "fifo").c_str(), 0644) == 0);
        const int reader = open((dir / "fifo").c_str(), O_RDONLY | O_NONBLOCK);  // so that opening to write does not wait
        REQUIRE(reader >= 0);
        attn::output_file file(dir / "fifo", "--out fifo");
        CHECK(file.how() == attn::output_file::method::straight);
        CHECK(file.temporary().empty());
        file.stream() << "through";
        file.commit();
        char got[16] = {};
        CHECK(read(reader, got, sizeof got) == 7);
        CHECK(std::string(got) == "through");
        close(reader);
        CHECK(S_ISFIFO(stat_of(dir / "fifo").st_mode));
        CHECK(dir.entries() == 1);
    }

    TEST_CASE("a FIFO whose reader went away: EPIPE is a write error") {
        scratch_dir dir("output");
        const auto old = std::signal(SIGPIPE, SIG_IGN);
        REQUIRE(mkfifo((dir / "fifo").c_str(), 0644) == 0);
        const int reader = open((dir / "fifo").c_str(), O_RDONLY | O_NONBLOCK);
        attn::output_file file(dir / "fifo", "--out fifo");
        close(reader);
        file.stream() << "lost";
        CHECK_THROWS_WITH_AS(file.commit(), "--out fifo: Broken pipe", attn::write_error);
        std::signal(SIGPIPE, old);
    }

    TEST_CASE("a device is written straight to, and stays a device; a full one is an error") {
        scratch_dir dir("output");
        if (!is_root()) return;  // mknod needs root
        REQUIRE(mknod((dir / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);  // a copy of /dev/null
        REQUIRE(mknod((dir / "full").c_str(), S_IFCHR | 0666, makedev(1, 7)) == 0);  // a copy of /dev/full
        put(dir / "null", "gone");
        CHECK(S_ISCHR(stat_of(dir / "null").st_mode));
        {
            attn::output_file file(dir / "full", "--out full");
            file.stream() << "lost";
            CHECK_THROWS_WITH_AS(file.commit(), "--out full: No space left on device", attn::write_error);
        }
        {
            attn::output_file file(dir / "full", "--out full");  // a large write fails at once, not at commit
            CHECK_THROWS_WITH_AS(file.stream() << std::string(1 << 20, 'x'), "--out full: No space left on device",
                                 attn::write_error);
        }
        CHECK(S_ISCHR(stat_of(dir / "full").st_mode));
        CHECK(dir.entries() == 2);
    }

    TEST_CASE("a socket cannot be opened: an error, and it stays") {
        scratch_dir dir("output");
        // A socket file without a listener is enough: open(2) refuses any socket.
        // (bind needs <sys/un.h>; mknod makes one too.)
        REQUIRE(mknod((dir / "sock").c_str(), S_IFSOCK | 0644, 0) == 0);
        CHECK_THROWS_WITH_AS(attn::output_file(dir / "sock", "--out sock"), "--out sock: No such device or address",
                             attn::error);
        CHECK(S_ISSOCK(stat_of(dir / "sock").st_mode));
    }
}

TEST_SUITE("temporary_files") {
    TEST_CASE("the registered temporaries are removed by the signal handler's call") {
        scratch_dir dir("output");
        attn::output_file file(dir / "t.json", "--out t.json");
        CHECK(dir.temporaries() == 1);
        attn::remove_registered_temporary_files();  // what app/signals.cpp does on SIGINT/TERM/HUP
        CHECK(dir.temporaries() == 0);
        CHECK(dir.entries() == 0);
    }

    TEST_CASE("a signal while signals_deferred lives is noted, then raised when it ends") {
        // the handler app/signals.cpp installs, in the part this test can watch
        static volatile std::sig_atomic_t handled = 0;
        struct sigaction action {}, before {};
        action.sa_handler = [](int sig) {
            if (attn::signal_deferred(sig)) return;
            handled = sig;
        };
        sigemptyset(&action.sa_mask);
        REQUIRE(sigaction(SIGUSR1, &action, &before) == 0);
        handled = 0;
        {
            const attn::signals_deferred hold;
            std::raise(SIGUSR1);
            CHECK(handled == 0);  // noted, not acted on
        }
        CHECK(handled == SIGUSR1);  // raised again at the hold's end
        handled = 0;
        std::raise(SIGUSR1);  // without a hold: acted on at once
        CHECK(handled == SIGUSR1);
        handled = 0;
        { const attn::signals_deferred hold; }  // nothing noted: nothing raised
        CHECK(handled == 0);
        sigaction(SIGUSR1, &before, nullptr);
    }

    TEST_CASE("a committed or discarded output is no longer listed") {
        scratch_dir dir("output");
        put(dir / "t.json", "kept");
        write_text(dir / ".attn-other", "not ours");
        attn::remove_registered_temporary_files();
        CHECK(file_bytes(dir / "t.json") == "kept");
        CHECK(fs::exists(dir.path / ".attn-other"));
    }
}

TEST_SUITE("fd_streambuf") {
    TEST_CASE("bytes arrive in order, small and large writes alike") {
        int fds[2];
        REQUIRE(pipe(fds) == 0);
        {
            attn::output_stream out(fds[1], "standard output");
            out << "a" << 1 << ' ';
            out.write("bcd", 3);
            out.flush_all();
        }
        close(fds[1]);
        char got[16] = {};
        CHECK(read(fds[0], got, sizeof got) == 6);
        CHECK(std::string(got) == "a1 bcd");
        close(fds[0]);
    }

    TEST_CASE("a closed pipe throws write_error with EPIPE and the descriptor") {
        const auto old = std::signal(SIGPIPE, SIG_IGN);
        int fds[2];
        REQUIRE(pipe(fds) == 0);
        close(fds[0]);
        attn::output_stream out(fds[1], "standard output");
        try {
            out << "x";
            out.flush();
            FAIL("no error");
        } catch (const attn::write_error& e) {
            CHECK(e.code == EPIPE);
            CHECK(e.fd == fds[1]);
            CHECK(std::string(e.what()) == "standard output: Broken pipe");
        }
        close(fds[1]);
        std::signal(SIGPIPE, old);
    }
}

// fd_streambuf past write_behind::start: the output goes through background_writer's
// buffers and thread, whole pages of a regular file with O_DIRECT. Every byte must
// arrive, in order, whatever the offsets and the sizes of the writes; a failed write
// must reach the caller; and the file's pages must not stay in the page cache. Lent
// blocks (write_lent) arrive in their place among the copied bytes, and are held until
// copied: give_back returns only then, and lets the owner go.
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <iterator>
#include <string>
#include <thread>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include "attn/io/background_writer.hpp"
#include "attn/io/output_stream.hpp"

#include "scratch_dir.hpp"

namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;

/// `size` bytes that differ from one place to the next (a linear congruential sequence).
std::string pattern(std::size_t size) {
    std::string bytes(size, '\0');
    std::uint32_t x = 12345;
    for (char& c : bytes) {
        x = x * 1664525u + 1013904223u;
        c = static_cast<char>(x >> 24);
    }
    return bytes;
}

/// Writes `bytes` in pieces of awkward sizes (1 byte to 13 MiB), with std::flush (a
/// partial buffer handed over) now and then, then flush_all().
void write_in_pieces(attn::output_stream& out, const std::string& bytes) {
    const std::size_t sizes[] = {1, 7, 4093, 5 * MiB + 3, 65536, 13 * MiB, 3, 999999};
    std::size_t at = 0;
    for (std::size_t i = 0; at < bytes.size(); ++i) {
        const std::size_t n = std::min(sizes[i % std::size(sizes)], bytes.size() - at);
        out.write(bytes.data() + at, static_cast<std::streamsize>(n));
        at += n;
        if (i % 5 == 4) out.flush();
    }
    out.flush_all();
}

std::string file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

/// The share of `path`'s pages in the page cache (mincore over a mapping of it).
double share_cached(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    struct stat st {};
    REQUIRE(fstat(fd, &st) == 0);
    const std::size_t size = static_cast<std::size_t>(st.st_size);
    void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    REQUIRE(map != MAP_FAILED);
    const std::size_t pages = (size + 4095) / 4096;
    std::string resident(pages, '\0');
    REQUIRE(mincore(map, size, reinterpret_cast<unsigned char*>(resident.data())) == 0);
    std::size_t in_cache = 0;
    for (char c : resident) in_cache += static_cast<unsigned char>(c) & 1;
    munmap(map, size);
    close(fd);
    return static_cast<double>(in_cache) / static_cast<double>(pages);
}

bool on_tmpfs(const std::string& path) {
    struct statfs fs {};
    return statfs(path.c_str(), &fs) == 0 && fs.f_type == 0x01021994;  // TMPFS_MAGIC: it is the page cache
}

/// `bytes` as the owner of lent memory: a shared copy whose count tells who holds it.
std::shared_ptr<std::string> owned(const std::string& bytes) { return std::make_shared<std::string>(bytes); }

/// `bytes` copied to `skew` bytes past a page, in memory owned by the result.
std::shared_ptr<char> at_page_skew(const std::string& bytes, std::size_t skew) {
    void* block = nullptr;
    REQUIRE(posix_memalign(&block, 4096, bytes.size() + skew) == 0);
    std::memcpy(static_cast<char*>(block) + skew, bytes.data(), bytes.size());
    return std::shared_ptr<char>(static_cast<char*>(block), [](char* b) { std::free(b); });
}

}  // namespace

TEST_SUITE("background_writer") {
    TEST_CASE("a large file arrives whole and in order, from an offset off a page") {
        scratch_dir dir("background_writer");
        const std::string prefix = "written before: " + std::string(1000, 'p');
        const std::string bytes = pattern(160 * MiB + 12345);
        const int fd = open((dir / "big").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        REQUIRE(fd >= 0);
        REQUIRE(write(fd, prefix.data(), prefix.size()) == static_cast<ssize_t>(prefix.size()));
        {
            attn::output_stream out(fd, "--out big");
            write_in_pieces(out, bytes);
        }
        CHECK((fcntl(fd, F_GETFL) & O_DIRECT) == 0);  // the descriptor left as it was given
        close(fd);
        // Past write_behind::start the pages went straight to the disk: most are not cached.
        if (on_tmpfs(dir.path.string()))
            MESSAGE("on tmpfs, whose files are the page cache: not checked that the pages left it");
        else
            CHECK(share_cached(dir / "big") < 0.6);
        const std::string got = file_bytes(dir / "big");
        REQUIRE(got.size() == prefix.size() + bytes.size());
        CHECK(got.compare(0, prefix.size(), prefix) == 0);
        CHECK(got.compare(prefix.size(), bytes.size(), bytes) == 0);
    }

    TEST_CASE("a file opened for appending (>>) gets every byte after what it had") {
        scratch_dir dir("background_writer");
        const std::string had = "kept\n";
        std::ofstream(dir / "log", std::ios::binary) << had;
        const std::string bytes = pattern(70 * MiB + 1);
        const int fd = open((dir / "log").c_str(), O_WRONLY | O_APPEND);
        REQUIRE(fd >= 0);
        {
            attn::output_stream out(fd, "standard output");
            write_in_pieces(out, bytes);
        }
        close(fd);
        CHECK(file_bytes(dir / "log") == had + bytes);
    }

    TEST_CASE("a pipe gets every byte, in order") {
        int fds[2];
        REQUIRE(pipe(fds) == 0);
        const std::string bytes = pattern(80 * MiB + 7);
        std::string got;
        std::thread reader([&] {
            char block[65536];
            for (ssize_t n; (n = read(fds[0], block, sizeof block)) > 0;) got.append(block, static_cast<std::size_t>(n));
        });
        {
            attn::output_stream out(fds[1], "standard output");
            write_in_pieces(out, bytes);
        }
        close(fds[1]);
        reader.join();
        close(fds[0]);
        CHECK(got.size() == bytes.size());
        CHECK(got == bytes);
    }

    TEST_CASE("a write that fails on the writer's thread is thrown to the caller") {
        // /dev/full: every write fails with ENOSPC. fd_streambuf writes a device straight,
        // so the writer is made here by hand.
        const int fd = open("/dev/full", O_WRONLY);
        REQUIRE(fd >= 0);
        const std::string bytes = pattern(3 * MiB);
        attn::write_behind behind(fd);
        int code = 0;
        std::string message;
        {
            attn::background_writer writer(fd, "--out full", behind);
            try {  // thrown by a later write once the buffers are full, or at the latest by drain()
                for (int i = 0; i < 40; ++i) writer.write(bytes.data(), bytes.size());
                writer.drain();
            } catch (const attn::write_error& e) {
                code = e.code;
                message = e.what();
            }
        }
        close(fd);
        CHECK(code == ENOSPC);
        CHECK(message == "--out full: No space left on device");
    }

    TEST_CASE("a device is written straight, and its error thrown at once") {
        const int fd = open("/dev/full", O_WRONLY);
        REQUIRE(fd >= 0);
        const std::string bytes = pattern(8 * MiB);
        int writes = 0;
        {
            attn::output_stream out(fd, "--out full");
            try {
                for (; writes < 20; ++writes) out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
            } catch (const attn::write_error& e) {
                CHECK(e.code == ENOSPC);
            }
        }
        close(fd);
        CHECK(writes == 0);  // the first large write fails, with no thread in between
    }

    TEST_CASE("the failure of a write past the first 64 MiB is thrown, not lost") {
        // A pipe whose reader stops: EPIPE only once the writer's thread writes.
        const auto old = std::signal(SIGPIPE, SIG_IGN);
        int fds[2];
        REQUIRE(pipe(fds) == 0);
        const std::size_t before = static_cast<std::size_t>(attn::write_behind::start) + MiB;
        std::thread reader([&] {
            char block[65536];
            std::size_t got = 0;
            for (ssize_t n; got < before && (n = read(fds[0], block, sizeof block)) > 0;) got += static_cast<std::size_t>(n);
            close(fds[0]);
        });
        const std::string bytes = pattern(MiB);
        int code = 0;
        {
            attn::output_stream out(fds[1], "standard output");
            try {
                for (int i = 0; i < 200; ++i) out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
                out.flush_all();
            } catch (const attn::write_error& e) {
                code = e.code;
            }
        }
        reader.join();
        close(fds[1]);
        std::signal(SIGPIPE, old);
        CHECK(code == EPIPE);
    }

    TEST_CASE("lent blocks arrive in their place among copied bytes, and are let go once copied") {
        scratch_dir dir("background_writer");
        const std::string prefix(777, 'p');  // off a page, as a member's data in an npz
        const std::string all = pattern(150 * MiB + 4321);
        const int fd = open((dir / "mixed").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        REQUIRE(fd >= 0);
        REQUIRE(write(fd, prefix.data(), prefix.size()) == static_cast<ssize_t>(prefix.size()));
        // copied and lent pieces in turn, of awkward sizes; two lends in a row; lent
        // pieces before and after the writer's start (written at once, then lent)
        const std::size_t sizes[] = {5, 40 * MiB + 1, 3 * MiB, 33 * MiB + 17, 9 * MiB + 5, 4093, 17 * MiB};
        const bool lent[] = {false, true, false, true, true, false, true};
        std::vector<std::shared_ptr<std::string>> owners;
        {
            attn::output_stream out(fd, "--out mixed");
            std::size_t at = 0;
            for (std::size_t i = 0; at < all.size(); ++i) {
                const std::size_t n = std::min(sizes[i % std::size(sizes)], all.size() - at);
                if (lent[i % std::size(lent)]) {
                    owners.push_back(owned(all.substr(at, n)));
                    attn::write_lent(out, owners.back()->data(), n, owners.back());
                } else {
                    out.write(all.data() + at, static_cast<std::streamsize>(n));
                }
                at += n;
            }
            for (const auto& o : owners) attn::give_back(out, o.get());
            for (const auto& o : owners) CHECK(o.use_count() == 1);  // copied, and let go
            out.flush_all();
        }
        close(fd);
        const std::string got = file_bytes(dir / "mixed");
        REQUIRE(got.size() == prefix.size() + all.size());
        CHECK(got.compare(prefix.size(), all.size(), all) == 0);
    }

    TEST_CASE("lent bytes that lie within their pages as in the file are written from where they lie") {
        // a file's pages with O_DIRECT, when the bytes' address and their file offset
        // agree within a page: from a page on (an npz's aligned array), or off a page by as
        // much (the partial first and last pages copied); else copied. A pipe: all in place.
        scratch_dir dir("background_writer");
        const std::string lent = pattern(24 * MiB + 1000);
        struct placing {
            std::size_t offset_skew, memory_skew;
            bool in_place;
        };
        for (const placing p : {placing{0, 0, true}, placing{777, 777, true}, placing{777, 0, false},
                                placing{0, 5, false}}) {
            CAPTURE(p.offset_skew);
            CAPTURE(p.memory_skew);
            const std::string before = pattern(4096 + p.offset_skew);
            const std::shared_ptr<char> block = at_page_skew(lent, p.memory_skew);
            const char* bytes = block.get() + p.memory_skew;
            auto sum = std::make_shared<std::uint64_t>(0);  // what `copied` saw
            const int fd = open((dir / "placed").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            REQUIRE(fd >= 0);
            REQUIRE(write(fd, before.data(), before.size()) == static_cast<ssize_t>(before.size()));
            attn::write_behind behind(fd);
            std::uint64_t in_place = 0;
            {
                attn::background_writer writer(fd, "--out placed", behind);
                writer.lend(bytes, lent.size(), block, [sum](const char* piece, std::size_t n) {
                    for (std::size_t i = 0; i < n; ++i) *sum += static_cast<unsigned char>(piece[i]);
                });
                writer.give_back(block.get());
                CHECK(block.use_count() == 1);  // written, and let go
                std::memset(block.get(), 'x', lent.size() + p.memory_skew);  // as a stage computed in place next
                writer.drain();
                in_place = writer.bytes_written_in_place();
            }
            close(fd);
            CHECK(file_bytes(dir / "placed") == before + lent);
            std::uint64_t want = 0;
            for (char c : lent) want += static_cast<unsigned char>(c);
            CHECK(*sum == want);
            if (on_tmpfs(dir.path.string()))  // no O_DIRECT there: every byte in place, by write(2)
                CHECK(in_place == lent.size());
            else if (p.in_place)  // whole pages in place, the partial first and last copied
                CHECK(in_place == (lent.size() - (4096 - p.offset_skew) % 4096) / 4096 * 4096);
            else
                CHECK(in_place == 0);
        }

        int fds[2];
        REQUIRE(pipe(fds) == 0);
        std::string piped;
        std::thread reader([&] {
            char chunk[65536];
            for (ssize_t n; (n = read(fds[0], chunk, sizeof chunk)) > 0;) piped.append(chunk, static_cast<std::size_t>(n));
        });
        const std::shared_ptr<char> block = at_page_skew(lent, 3);
        {
            attn::write_behind behind(fds[1]);
            attn::background_writer writer(fds[1], "standard output", behind);
            writer.lend(block.get() + 3, lent.size(), block);
            writer.drain();
            CHECK(writer.bytes_written_in_place() == lent.size());
        }
        close(fds[1]);
        reader.join();
        close(fds[0]);
        CHECK(piped == lent);
    }

    TEST_CASE("give_back returns only once the lent bytes are copied: changed after, they arrive as lent") {
        scratch_dir dir("background_writer");
        const std::string before = pattern(70 * MiB);  // past the writer's start: the next block is lent
        const int fd = open((dir / "changed").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        REQUIRE(fd >= 0);
        auto block = owned(pattern(64 * MiB + 3));
        const std::string lent = *block;
        {
            attn::output_stream out(fd, "--out changed");
            out.write(before.data(), static_cast<std::streamsize>(before.size()));
            attn::write_lent(out, block->data(), block->size(), block);
            CHECK(block.use_count() > 1);  // behind 64 MiB of copies: still held
            attn::give_back(out, block.get());
            CHECK(block.use_count() == 1);
            std::fill(block->begin(), block->end(), 'x');  // as a stage computed in place next
            out.flush_all();
        }
        close(fd);
        CHECK(file_bytes(dir / "changed") == before + lent);
    }

    TEST_CASE("a lent block that fails to be written is let go, and the failure thrown") {
        const int fd = open("/dev/full", O_WRONLY);
        REQUIRE(fd >= 0);
        attn::write_behind behind(fd);
        auto block = owned(pattern(20 * MiB));
        int code = 0;
        {
            attn::background_writer writer(fd, "--out full", behind);
            writer.lend(block->data(), block->size(), block);
            writer.give_back(block.get());
            CHECK(block.use_count() == 1);
            try {
                writer.drain();
            } catch (const attn::write_error& e) {
                code = e.code;
            }
        }
        close(fd);
        CHECK(code == ENOSPC);
    }

    TEST_CASE("a writer destroyed with lent blocks still queued lets their owners go") {
        int fds[2];
        REQUIRE(pipe(fds) == 0);
        std::thread reader([&] {  // slow: the writer is still on the first block when destroyed
            char block[65536];
            for (ssize_t n; (n = read(fds[0], block, sizeof block)) > 0;) usleep(100);
        });
        attn::write_behind behind(fds[1]);
        auto first = owned(pattern(24 * MiB)), second = owned(pattern(24 * MiB));
        {
            attn::background_writer writer(fds[1], "standard output", behind);
            writer.lend(first->data(), first->size(), first);
            writer.lend(second->data(), second->size(), second);
            CHECK(second.use_count() > 1);
        }  // destroyed without drain(): what is not written is dropped
        CHECK(first.use_count() == 1);
        CHECK(second.use_count() == 1);
        close(fds[1]);
        reader.join();
        close(fds[0]);
    }

    TEST_CASE("bytes made later see what `copied` saw of the lent bytes before them") {
        // an npz's data descriptor: the CRC-32 the copier computes of the lent elements,
        // written after them, while the caller has gone on
        scratch_dir dir("background_writer");
        const std::string before = pattern(70 * MiB), after = "the end";
        auto block = owned(pattern(40 * MiB + 5));
        const int fd = open((dir / "made").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        REQUIRE(fd >= 0);
        auto sum = std::make_shared<std::uint64_t>(0);  // of the bytes, as `copied` sees them
        {
            attn::output_stream out(fd, "--out made");
            out.write(before.data(), static_cast<std::streamsize>(before.size()));
            attn::write_lent(out, block->data(), block->size(), block, [sum](const char* piece, std::size_t n) {
                for (std::size_t i = 0; i < n; ++i) *sum += static_cast<unsigned char>(piece[i]);
            });
            attn::write_later(out, sizeof(std::uint64_t),
                              [sum](char* to) { std::memcpy(to, sum.get(), sizeof(std::uint64_t)); });
            out.write(after.data(), static_cast<std::streamsize>(after.size()));
            attn::settle(out);
            out.flush_all();
        }
        close(fd);
        std::uint64_t want = 0;
        for (char c : *block) want += static_cast<unsigned char>(c);
        CHECK(*sum == want);
        std::string made(sizeof want, '\0');
        std::memcpy(made.data(), &want, sizeof want);
        CHECK(file_bytes(dir / "made") == before + *block + made + after);
    }
}

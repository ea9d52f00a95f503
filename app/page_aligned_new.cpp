// attn's operator new: blocks of 16 MiB or more start at a page.
//
// Stages of 16 MiB or more are lent to the output's writer, which writes them with
// O_DIRECT straight from their own pages when they lie within their pages as they do in
// the file (background_writer.hpp); an npz starts such arrays at a page (render_npz).
// glibc's malloc puts a large block 16 bytes past a page, so that every lent stage would
// be copied instead: about 0.15 s of CPU for the 1.1 GB of B1 S2048 D1024 H16. Smaller
// blocks are malloc's, as before: asked at a page, every block of a MiB or more was
// mapped afresh instead of reusing freed memory (4 ms more for a 26 MiB JSON run). Every
// operator delete frees either with free().
//
// Not under AddressSanitizer, whose own operator new must stay (ATTN_FUZZ builds): there
// lent stages are copied, with the same bytes in the file.
#include <cstddef>
#include <cstdlib>
#include <new>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTN_KEEP_OPERATOR_NEW 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define ATTN_KEEP_OPERATOR_NEW 1
#endif

#ifndef ATTN_KEEP_OPERATOR_NEW
namespace {
constexpr std::size_t page = 4096;
constexpr std::size_t page_aligned_from = std::size_t{16} << 20;

void* allocate(std::size_t size) noexcept {
    if (size < page_aligned_from) return std::malloc(size == 0 ? 1 : size);
    void* block = nullptr;
    return posix_memalign(&block, page, size) == 0 ? block : nullptr;
}
}  // namespace

void* operator new(std::size_t size) {
    for (;;) {
        if (void* block = allocate(size)) return block;
        const std::new_handler handler = std::get_new_handler();
        if (handler == nullptr) throw std::bad_alloc();
        handler();
    }
}

void* operator new[](std::size_t size) { return ::operator new(size); }
void operator delete(void* block) noexcept { std::free(block); }
void operator delete[](void* block) noexcept { std::free(block); }
void operator delete(void* block, std::size_t) noexcept { std::free(block); }
void operator delete[](void* block, std::size_t) noexcept { std::free(block); }
#endif

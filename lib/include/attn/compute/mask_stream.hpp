#pragma once
// A mask [B,1,Sq,Sk] read one query row at a time, in order (batch item 0's rows, then
// item 1's, ...), never held whole: what `attn mask` writes at any size. Each row is
// build_mask's (mask.hpp), bit for bit:
//
//   rules' row (mask_rows: causal, padding, window)   all true without rules
//   AND the random mask's row                          torch.rand(B,1,Sq,Sk) < --mask-keep, drawn
//                                                      as it goes: torch.rand is one stream of
//                                                      draws in element order, so Sk draws a row
//   AND the mask files' row                            [B,1,Sq,Sk] as read (--mask-file,
//                                                      --key-padding-mask): the only part held
//
// It holds a row [Sk] and, for a random mask, its draws [Sk] and the generator (2.5 KiB).
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include <xtensor/xarray.hpp>

#include "attn/compute/config.hpp"
#include "attn/compute/generator.hpp"
#include "attn/compute/mask.hpp"

namespace attn {

class mask_stream {
public:
    /// The mask c.mask asks for (call only when c.mask.any()); `files` [B,1,Sq,Sk], true = may
    /// attend, when c has mask files. `c` and `files` must outlive this. Starts at row (0, 0).
    explicit mask_stream(const config& c, const xt::xarray<bool>* files = nullptr);
    /// Another read of the same mask, from row (0, 0) wherever `other` is (a pass of its own).
    mask_stream(const mask_stream& other);
    mask_stream& operator=(const mask_stream&) = delete;

    /// Back to row (0, 0); the random draws start again from --mask-seed.
    void restart();
    /// The next row [Sk], true = may attend; valid until the next call. Rows past the last
    /// (B·Sq of them) are an error of the caller.
    const bool* next();

    std::size_t batch() const { return batch_; }  // B
    std::size_t rows() const { return rows_; }    // Sq
    std::size_t keys() const { return keys_; }    // Sk

private:
    const config& c_;
    const xt::xarray<bool>* files_;
    std::size_t batch_, rows_, keys_;
    bool rules_on_;                 // causal, padding or window: the rows start from mask_rows'
    mask_rows rules_;
    std::optional<torch_generator> draws_;  // the random mask's generator, at the next row's draws
    std::vector<float> draw_row_;   // [Sk] this row's draws
    std::unique_ptr<bool[]> row_;   // [Sk] the row handed out
    std::size_t b_ = 0, i_ = 0;     // the row next() returns next
};

}  // namespace attn

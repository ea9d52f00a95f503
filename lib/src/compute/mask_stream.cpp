// A mask read a query row at a time (mask_stream.hpp).
#include "attn/compute/mask_stream.hpp"

#include <algorithm>

#include "attn/compute/error.hpp"

namespace attn {

mask_stream::mask_stream(const config& c, const xt::xarray<bool>* files)
    : c_(c),
      files_(files),
      batch_(static_cast<std::size_t>(c.batch)),
      rows_(static_cast<std::size_t>(c.seq)),
      keys_(static_cast<std::size_t>(c.kv_seq)),
      rules_on_(c.mask.causal || c.mask.padding || c.mask.window),
      rules_(c.mask, c.seq, c.kv_seq, first_query_position(c)),  // build_mask's rules_of
      row_(new bool[std::max<std::size_t>(keys_, 1)]) {
    if (c.mask.random) draw_row_.resize(keys_);
    restart();
}

mask_stream::mask_stream(const mask_stream& other) : mask_stream(other.c_, other.files_) {}

void mask_stream::restart() {
    b_ = i_ = 0;
    if (c_.mask.random) draws_.emplace(c_.mask.random_seed);  // torch.manual_seed(N)
}

const bool* mask_stream::next() {
    if (b_ >= batch_) throw error("internal: mask_stream read past its last row");
    bool* row = row_.get();
    if (rules_on_) {
        const bool* made = rules_.row(b_, i_, row);  // made into `row`
        if (made != row) std::copy(made, made + keys_, row);
    } else {
        std::fill(row, row + keys_, true);
    }
    if (draws_) {  // torch.rand(B,1,Sq,Sk) < keep: compared in float32, as mask_random
        draws_->rand(draw_row_.data(), keys_);
        const auto threshold = static_cast<float>(c_.mask.random_keep);
        for (std::size_t j = 0; j < keys_; ++j) row[j] = row[j] && draw_row_[j] < threshold;
    }
    if (files_ != nullptr) {
        const bool* file_row = files_->data() + (b_ * rows_ + i_) * keys_;
        for (std::size_t j = 0; j < keys_; ++j) row[j] = row[j] && file_row[j];
    }
    if (++i_ == rows_) i_ = 0, ++b_;
    return row;
}

}  // namespace attn

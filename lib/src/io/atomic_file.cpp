#include "attn/io/atomic_file.hpp"

#include "attn/io/output_file.hpp"

namespace attn {

void write_file_atomically(const std::string& path, const std::string& what,
                           const std::function<void(std::ostream&)>& write) {
    output_file file(path, what);
    write(file.stream());
    file.commit();
}

}  // namespace attn

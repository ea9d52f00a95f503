// Prints the kernel OpenBLAS runs here, as openblas_get_corename() names it (OPENBLAS_CORETYPE
// forces one). cli/files.sh asks it which set of tests/reference/torch_text to diff against
// (tests/reference/openblas/kernels.txt); test_fixtures.cpp asks OpenBLAS itself.
#include <cstdio>

extern "C" char* openblas_get_corename(void);

int main() {
    std::puts(openblas_get_corename());
    return 0;
}

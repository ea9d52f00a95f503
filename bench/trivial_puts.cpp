// A smaller yardstick of start-up: one line with the C library only (bench/run.py).
#include <cstdio>

int main() {
    std::puts("attention");
    return 0;
}

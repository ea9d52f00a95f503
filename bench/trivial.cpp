// The yardstick of start-up: a C++ program that prints one line (bench/run.py).
#include <cstdio>

int main() {
    std::puts("attention");
    return 0;
}

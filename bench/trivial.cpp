// The yardstick of start-up: C++'s hello world (bench/run.py), which loads libstdc++ as
// any C++ program built with the defaults does.
#include <iostream>

int main() {
    std::cout << "attention\n";
    return 0;
}

// spawn_timer N PROGRAM ARGS...: runs PROGRAM N times, stdout to /dev/null, and prints the
// wall time of each run in milliseconds, one a line. bench/run.py times start-up with it:
// spawning from Python adds about a millisecond of its own, more than what is measured.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: spawn_timer N PROGRAM ARGS...\n");
        return 2;
    }
    const int runs = std::atoi(argv[1]);
    for (int i = 0; i < runs; ++i) {
        const auto start = std::chrono::steady_clock::now();
        const pid_t child = fork();
        if (child == 0) {
            const int null = open("/dev/null", O_WRONLY);
            dup2(null, STDOUT_FILENO);
            execv(argv[2], argv + 2);
            _exit(127);
        }
        int status = 0;
        waitpid(child, &status, 0);
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            std::fprintf(stderr, "spawn_timer: %s failed\n", argv[2]);
            return 1;
        }
        std::printf("%.4f\n", ms);
    }
    return 0;
}

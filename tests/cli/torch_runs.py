"""Runs many small PyTorch scripts after importing torch once (it takes seconds; each script,
milliseconds): each in a child forked from this process, with a fresh namespace, its own
sys.argv, and its output in a file of its own, as `python3 SCRIPT ARGS...` would run it.

    /usr/bin/python3 torch_runs.py JOBS

JOBS has a line per script, fields separated by tabs: OUT SCRIPT ARG...; the script's stdout
and stderr go to OUT, its exit status to OUT.rc (1 for an uncaught exception, whose traceback
is the last of OUT, as python3 prints it). Two run at a time. A forked child computes with
one thread (torch's own fork handler), which changes no bit at the tests' sizes.
"""
import os
import runpy
import sys
import traceback

import torch  # noqa: F401  (imported once, before the forks: the point of this runner)


def run_one(out, script, args):
    """In a forked child: SCRIPT run as __main__ with its output in OUT; never returns."""
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    sys.stdout = os.fdopen(1, "w", buffering=1)
    sys.stderr = os.fdopen(2, "w", buffering=1)
    sys.argv = [script, *args]
    status = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if not isinstance(e.code, (int, type(None))):
            print(e.code, file=sys.stderr)
    except BaseException:  # what python3 would print, and its exit status
        traceback.print_exc()
        status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def main():
    # paths and arguments as the file system has them: bytes that are not UTF-8 kept (surrogateescape)
    jobs = [line.rstrip("\n").split("\t") for line in open(sys.argv[1], errors="surrogateescape") if line.strip()]
    running = {}
    for out, script, *args in jobs:
        if len(running) == 2:
            pid, status = os.wait()
            finish(running.pop(pid), status)
        pid = os.fork()
        if pid == 0:
            run_one(out, script, args)
        running[pid] = out
    while running:
        pid, status = os.wait()
        finish(running.pop(pid), status)


def finish(out, status):
    with open(out + ".rc", "w") as rc:
        rc.write(f"{os.waitstatus_to_exitcode(status)}\n")


main()

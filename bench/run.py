#!/usr/bin/env python3
"""attn against PyTorch, side by side on this machine (README "Speed").

  bench/run.py --attn build/attn --timer build/bench/spawn_timer --trivial build/bench/trivial
  (or: cmake --build build --target bench)

Same shapes, same threads (torch.set_num_threads = attn's threads = BENCH_THREADS or every
core), runs alternating between the two, the median of --runs rounds (for start-up, of the fastest of
each round's 20 or 40 runs). Prints one table:
  a) the seed-000 trace as a whole process, against a Python script printing the same stages
  b) every stage to .npz at B1 S2048 D1024 H16 causal, each run (but the very first) replacing
     the file of the run before, with the disk synced first, against PyTorch eager computing the same stages and
     numpy.savez-ing them (timed inside Python: without its start-up), on this machine's
     OpenBLAS kernel and again, both sides, under OPENBLAS_CORETYPE=Haswell; and, not a
     target, each run writing a new file
  c) JSON bytes per second of the softmax weights at B1 S1024 D512 H16, the whole run to
     /dev/null, against json.dumps(t.tolist()) of the same weights (a string in memory)
  d) peak RSS: b)'s against the bytes of its stages, and --stage softmax at B1 S8192 D1024 H16
     causal to .npz under --max-memory 2GiB (a 4 GiB file in the temporary directory, deleted
     right after; one run)
  e) attn's start-up against a trivial C++ program
Not a test: it prints numbers and never fails on them.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TORCH_PYTHON = "/usr/bin/python3"  # Debian's, with python3-torch
TORCH_SCRIPT = os.path.join(HERE, "torch_stages.py")
SEED_000 = ["trace", "--seed", "24", "--batch", "2", "--seq", "5", "--d-model", "8", "--heads", "4",
            "--mask", "causal", "--no-out-proj"]


def run_measured(argv, env=None, stdout=subprocess.DEVNULL):
    """Wall seconds, peak RSS in bytes and stdout of one whole process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=stdout, env=env)
    out = proc.stdout.read() if proc.stdout else b""  # before waiting: a full pipe would block it
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"bench: {' '.join(argv)} failed ({proc.returncode})")
    return seconds, usage.ru_maxrss * 1024, out


def spawn_times(timer, runs, argv):
    """Milliseconds of each of `runs` whole runs of argv (spawn_timer: no Python in between).
    Start-up is timed by the fastest of a block of runs: on a shared machine the others
    measure the neighbours."""
    out = subprocess.run([timer, str(runs)] + argv, check=True, capture_output=True, text=True).stdout
    return [float(line) for line in out.split()]


def alternate(runs, *jobs):
    """Runs each job once per round, `runs` rounds; the results per job, in lists."""
    results = [[] for _ in jobs]
    for _ in range(runs):
        for i, job in enumerate(jobs):
            results[i].append(job())
    return results


def settle(path, new_file):
    """Before a timed run that writes `path` (outside the timing): the disk synced, so that no
    run pays for the writeback of the 1.2 GB the run before left dirty; with `new_file`, no
    file there either (else the run replaces it, as ext4 sees a rerun)."""
    if new_file and os.path.exists(path):
        os.remove(path)
    os.sync()


def mib(n):
    return f"{n / 2**20:.0f} MiB"


def machine():
    model = platform.processor() or "?"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, Linux {platform.release()}"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--attn", required=True)
    p.add_argument("--timer", required=True, help="bench/spawn_timer, built by the bench target")
    p.add_argument("--trivial", required=True, help="bench/trivial, built by the bench target")
    p.add_argument("--trivial-puts", help="bench/trivial_puts, built by the bench target")
    p.add_argument("--runs", type=int, default=5, help="rounds of alternating runs (default 5)")
    p.add_argument("--quick", action="store_true", help="b) at S1024 D512 instead of S2048 D1024")
    a = p.parse_args()
    attn = os.path.abspath(a.attn)
    a.timer, a.trivial = os.path.abspath(a.timer), os.path.abspath(a.trivial)
    yardsticks = [("a trivial C++ program (iostream)", a.trivial)]
    if a.trivial_puts:
        yardsticks.append(("one with puts only", os.path.abspath(a.trivial_puts)))
    threads = int(os.environ.get("BENCH_THREADS", os.cpu_count()))
    env = dict(os.environ, BENCH_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    env.pop("CI", None)
    env.pop("OPENBLAS_CORETYPE", None)  # the machine's own kernel; b) runs Haswell's too
    env_haswell = dict(env, OPENBLAS_CORETYPE="Haswell")
    thread_flag = []
    help_text = subprocess.run([attn, "trace", "--help"], capture_output=True, text=True).stdout
    if "--threads" in help_text:
        thread_flag = ["--threads", str(threads)]
    rows = []
    work = tempfile.mkdtemp(prefix="attn-bench-")

    # a) the seed-000 trace, whole processes
    seed_attn, seed_torch = alternate(
        a.runs,
        lambda: min(spawn_times(a.timer, 20, [attn] + SEED_000 + thread_flag)),
        lambda: run_measured([TORCH_PYTHON, TORCH_SCRIPT, "print"], env=env)[0] * 1000)
    t_attn, t_torch = statistics.median(seed_attn), statistics.median(seed_torch)
    rows.append(("a) seed-000 trace, whole process", f"{t_attn:.2f} ms", f"{t_torch:.0f} ms",
                 f"{t_torch / t_attn:.0f}x faster", ">= 200x"))

    # b) every stage to .npz, causal
    B, S, D, H = (1, 1024, 512, 16) if a.quick else (1, 2048, 1024, 16)
    shape = [str(B), str(S), str(D), str(H)]
    npz_attn, npz_torch = os.path.join(work, "attn.npz"), os.path.join(work, "torch.npz")
    attn_npz = [attn, "trace", "--batch", shape[0], "--seq", shape[1], "--d-model", shape[2], "--heads",
                shape[3], "--mask", "causal", "--format", "npz", "--out", npz_attn] + thread_flag

    def attn_npz_run(kernel_env, new_file=False):
        settle(npz_attn, new_file)
        return run_measured(attn_npz, env=kernel_env)[:2]

    def torch_npz(kernel_env, new_file=False):
        settle(npz_torch, new_file)
        _, rss, out = run_measured([TORCH_PYTHON, TORCH_SCRIPT, "npz"] + shape + [npz_torch], env=kernel_env,
                                   stdout=subprocess.PIPE)
        r = json.loads(out)
        return r["seconds"], rss, r["bytes"]

    for kernel, kernel_env in (("this machine's OpenBLAS kernel", env), ("OPENBLAS_CORETYPE=Haswell", env_haswell)):
        attn_runs, torch_runs = alternate(a.runs, lambda: attn_npz_run(kernel_env), lambda: torch_npz(kernel_env))
        t_attn = statistics.median(r[0] for r in attn_runs)
        t_torch = statistics.median(r[0] for r in torch_runs)
        if kernel_env is env:  # d) reports the machine's own kernel's runs
            stage_bytes = torch_runs[0][2]
            rss_attn = max(r[1] for r in attn_runs)
            rss_torch = max(r[1] for r in torch_runs)
        rows.append((f"b) every stage to .npz, B{B} S{S} D{D} H{H} causal ({mib(stage_bytes)}), {kernel}",
                     f"{t_attn:.2f} s", f"{t_torch:.2f} s", f"{t_attn / t_torch:.2f}x the time", "<= 0.8x"))
    # b) again, each run writing a new file (the one before removed): not a target
    new_attn, new_torch = alternate(a.runs, lambda: attn_npz_run(env, new_file=True),
                                    lambda: torch_npz(env, new_file=True))
    t_attn = statistics.median(r[0] for r in new_attn)
    t_torch = statistics.median(r[0] for r in new_torch)
    rows.append(("b) the same, each run writing a new file (not a target)",
                 f"{t_attn:.2f} s", f"{t_torch:.2f} s", f"{t_attn / t_torch:.2f}x the time", ""))
    os.remove(npz_attn)
    os.remove(npz_torch)

    # c) JSON bytes per second: the softmax weights
    jB, jS, jD, jH = 1, 1024, 512, 16
    jshape = [str(jB), str(jS), str(jD), str(jH)]
    attn_sizes = [attn, "trace", "--batch", jshape[0], "--seq", jshape[1], "--d-model", jshape[2], "--heads",
                  jshape[3], "--stage", "softmax"] + thread_flag
    attn_json = attn_sizes + ["--format", "json"]
    # the same run with a small write: what the JSON run spends on anything but the text
    attn_compute = attn_sizes + ["--format", "npz", "--out", os.path.join(work, "w.npz")]

    # attn's text goes to /dev/null, as json.dumps' stays in memory: a pipe read by this
    # script would time Python's reading of 210 MiB too (0.1-0.2 s here)
    json_bytes = len(run_measured(attn_json, env=env, stdout=subprocess.PIPE)[2])

    def attn_json_run():
        return run_measured(attn_json, env=env)[0]

    def torch_json_run():
        out = run_measured([TORCH_PYTHON, TORCH_SCRIPT, "json"] + jshape, env=env, stdout=subprocess.PIPE)[2]
        r = json.loads(out)
        return r["seconds"], r["bytes"]

    json_attn, json_torch, compute_attn = alternate(a.runs, attn_json_run, torch_json_run,
                                                    lambda: run_measured(attn_compute, env=env)[0])
    t_json = statistics.median(json_attn)
    t_write = t_json - statistics.median(compute_attn)
    rate_torch = statistics.median(r[1] / r[0] for r in json_torch)
    rate_whole = json_bytes / t_json
    writing, writing_ratio = "", ""
    if t_write > 0.005:  # else too close to the noise to say
        writing = f" ({json_bytes / t_write / 2**20:.0f} writing only)"
        writing_ratio = f" ({json_bytes / t_write / rate_torch:.1f}x)"
    rows.append((f"c) JSON of softmax [{jB},{jH},{jS},{jS}] ({mib(json_bytes)}), bytes/s",
                 f"{rate_whole / 2**20:.0f} MiB/s whole run{writing}",
                 f"{rate_torch / 2**20:.1f} MiB/s", f"{rate_whole / rate_torch:.1f}x{writing_ratio}", ">= 10x"))

    # d) peak RSS: b)'s run against the bytes of its stages, and softmax alone at S8192 (one run)
    rows.append((f"d) peak RSS, b) every stage ({mib(stage_bytes)} of stages)", mib(rss_attn), mib(rss_torch),
                 f"{rss_attn / stage_bytes:.2f}x the stages (torch {rss_torch / stage_bytes:.2f}x)", ""))
    sB, sS, sD, sH = 1, 8192, 1024, 16
    softmax_bytes = sB * sH * sS * sS * 4
    npz_softmax = os.path.join(work, "softmax.npz")
    t_softmax, rss_softmax, _ = run_measured(
        [attn, "trace", "--batch", str(sB), "--seq", str(sS), "--d-model", str(sD), "--heads", str(sH),
         "--mask", "causal", "--stage", "softmax", "--format", "npz", "--out", npz_softmax,
         "--max-memory", "2GiB", "--quiet"] + thread_flag, env=env)
    os.remove(npz_softmax)
    rows.append((f"d) peak RSS, --stage softmax B{sB} S{sS} D{sD} H{sH} causal to .npz, --max-memory 2GiB "
                 f"({mib(softmax_bytes)})", mib(rss_softmax), "",
                 f"{rss_softmax / softmax_bytes:.2f}x the stage ({t_softmax:.1f} s)", "<= 1 GiB"))

    # e) start-up: the default trace against a trivial C++ program
    startup = alternate(a.runs, lambda: min(spawn_times(a.timer, 40, [attn, "trace"])),
                        *[lambda path=path: min(spawn_times(a.timer, 40, [path]))
                          for _, path in yardsticks])
    t_attn = statistics.median(startup[0])
    for (name, _), times in zip(yardsticks, startup[1:]):
        t_trivial = statistics.median(times)
        rows.append((f"e) start-up: `attn trace` vs {name}", f"{t_attn:.2f} ms", f"{t_trivial:.2f} ms",
                     f"{t_attn / t_trivial:.2f}x", "<= 1.5x"))
    os.remove(os.path.join(work, "w.npz"))
    os.rmdir(work)

    print(f"Machine: {machine()}; {threads} threads for attn and PyTorch; median of {a.runs} alternating rounds\n")
    print("| measure | attn | PyTorch (or yardstick) | ratio | target |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()

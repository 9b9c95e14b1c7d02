"""The TFS plugin's share of one flake8 process's CPU time, measured inside that process.

    python benchmarks/plugin_share.py OUTPUT.json -- FLAKE8_ARGS...

Run with ``-j 1`` among the flake8 arguments: every check then runs in this process, and
the plugin's ``run`` is timed with ``time.process_time`` around each call, the cycle
collector's passes with ``gc.callbacks``. Two runs of flake8, with and without the
plugin, differ by less than this machine's noise (a 20-30 s run varies by 10-20% from
one round to the next, in CPU time as much as in wall time), but a share of one process
is a ratio of two times taken together, so the noise cancels out. What it leaves out: the
plugin's module loading before the first file (milliseconds), and what its imported
modules add to the collector's later passes over flake8's own objects, which is why the
collector's time outside the plugin is written too.

Standalone (run by path), like flake8_runner.py, whose plugin handling it reuses.
"""

import gc
import json
import os
import sys
import time


def main(argv):
    output, argv = argv[0], argv[1:]
    if argv and argv[0] == "--":
        argv = argv[1:]
    if "1" not in [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("-j", "--jobs")]:
        sys.exit("plugin_share.py: pass -j 1, so that every file is checked in this process")

    from syncadvisor.flake8_plugin import SyncAdvisorChecker

    totals = {"plugin_cpu_s": 0.0, "gc_cpu_s": 0.0, "gc_in_plugin_cpu_s": 0.0, "plugin_calls": 0}
    state = {"in_plugin": False, "gc_start": 0.0}

    def collecting(phase, info):
        if phase == "start":
            state["gc_start"] = time.process_time()
            return
        spent = time.process_time() - state["gc_start"]
        totals["gc_cpu_s"] += spent
        if state["in_plugin"]:
            totals["gc_in_plugin_cpu_s"] += spent

    original = SyncAdvisorChecker.run

    def timed_run(self):
        start = time.process_time()
        state["in_plugin"] = True
        try:
            reported = list(original(self))  # a generator or a list: all its work, here
        finally:
            state["in_plugin"] = False
            totals["plugin_cpu_s"] += time.process_time() - start
            totals["plugin_calls"] += 1
        return iter(reported)

    SyncAdvisorChecker.run = timed_run
    gc.callbacks.append(collecting)

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import flake8_runner

    start = time.process_time()
    try:
        code = flake8_runner.main(argv)
    except SystemExit as exc:
        code = exc.code
    totals["process_cpu_s"] = time.process_time() - start
    with open(output, "w") as handle:
        json.dump(totals, handle)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

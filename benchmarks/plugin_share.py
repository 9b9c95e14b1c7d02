"""The TFS plugin's share of one flake8 process's CPU time, measured inside that process.

    python benchmarks/plugin_share.py OUTPUT.json [--without syncadvisor] -- FLAKE8_ARGS...

Run with ``-j 1`` among the flake8 arguments: every check then runs in this process, and
the plugin's ``run`` is timed with ``time.process_time`` around each call, the cycle
collector's passes (by generation, in and out of the plugin) with ``gc.callbacks``. Two
runs of flake8, with and without the plugin, differ by more than the plugin costs on a
shared machine (a 20-30 s run varies by 10-20% from one round to the next, in CPU time as
much as in wall time), but a share of one process is a ratio of two times taken together.

The plugin also makes flake8's own work dearer: the modules it imports stay, and every
full pass of the collector looks at them again. That is only
seen against a run without the plugin (``--without syncadvisor``, through
flake8_runner.py), which writes the same numbers for the collector, so that the harness
can add what the full passes gained.

Standalone (run by path), like flake8_runner.py, whose plugin handling it reuses.
"""

import gc
import json
import os
import sys
import time


def main(argv):
    output, argv = argv[0], argv[1:]
    without = argv[:2] == ["--without", "syncadvisor"]
    flake8_args = argv[argv.index("--") + 1:] if "--" in argv else argv
    if "1" not in [flake8_args[i + 1] for i, a in enumerate(flake8_args[:-1])
                   if a in ("-j", "--jobs")]:
        sys.exit("plugin_share.py: pass -j 1, so that every file is checked in this process")

    totals = {"plugin_cpu_s": 0.0, "gc_cpu_s": 0.0, "gc_in_plugin_cpu_s": 0.0,
              "gc_full_cpu_s": 0.0, "gc_full_in_plugin_cpu_s": 0.0, "plugin_calls": 0}
    state = {"in_plugin": False, "gc_start": 0.0, "generation": 0}

    def collecting(phase, info):
        if phase == "start":
            state["gc_start"], state["generation"] = time.process_time(), info["generation"]
            return
        spent = time.process_time() - state["gc_start"]
        full = state["generation"] == 2
        totals["gc_cpu_s"] += spent
        totals["gc_full_cpu_s"] += spent if full else 0.0
        if state["in_plugin"]:
            totals["gc_in_plugin_cpu_s"] += spent
            totals["gc_full_in_plugin_cpu_s"] += spent if full else 0.0

    if not without:
        from syncadvisor.flake8_plugin import SyncAdvisorChecker

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

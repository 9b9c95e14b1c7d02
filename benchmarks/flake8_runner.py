"""Run flake8, optionally with some installed plugins left out.

    python benchmarks/flake8_runner.py [--without PACKAGE]... -- FLAKE8_ARGS...

flake8 has no switch to turn an installed plugin off (``--select`` only filters
what is reported; every plugin still runs), so "plain flake8" in an
environment where syncadvisor is installed is flake8 with the distributions
named by ``--without`` dropped from plugin discovery.  Both benchmark rows
(with and without the plugin) go through this same script so that the only
difference between them is the plugin.

This is a standalone script (run by path, not ``-m``) so it needs nothing on
``sys.path`` beyond flake8 itself.
"""

import multiprocessing
import sys


def main(argv):
    without = set()
    while argv and argv[0] == "--without":
        without.add(argv[1].lower())
        argv = argv[2:]
    if argv and argv[0] == "--":
        argv = argv[1:]

    from flake8.main import cli
    from flake8.plugins import finder

    if without:
        original = finder.find_plugins

        def find_plugins(cfg, opts):
            return [p for p in original(cfg, opts) if p.package.lower() not in without]

        finder.find_plugins = find_plugins

    # flake8 -j N keeps the parent's (filtered) plugins in its workers only when they
    # are forked; use fork for both rows so that they differ in the plugin alone.
    try:
        multiprocessing.set_start_method("fork")
    except (ValueError, RuntimeError):
        pass

    return cli.main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

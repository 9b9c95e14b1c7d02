"""How `--fix`'s cost grows: with the project's size, and with the files it changes.

    python -m benchmarks.fix_rounds                    # N=100..800 modules, K=1..16 to fix
    python -m benchmarks.fix_rounds --sizes 400,4 400,16

Each project is a generated package of N modules (eight Keras layers each, helpers that
call the next module's), K of which have findings whose fixes take rounds: a spelling fix
that shows what it spelled, and a fix that brings a TFS303, which is held back, so that
round is done again and its fixes tried one by one. The files are modelled first; what is
timed is `Run.fix` (CPU seconds, best of `--repeat`), against one plain check of the same
run: the ratio is how many checks' worth of work the fix run costs.
"""
from __future__ import annotations

import argparse
import os
import tempfile
import textwrap
import time
from typing import Dict, List, Tuple

LAYERS = 8

TO_FIX = textwrap.dedent("""\
    with strategy.scope():
        a = tf.Variable(0.0, synchronization="on_read", aggregation="SUM", trainable=False)
        b = tf.Variable(0.0, aggregation=tf.VariableAggregation.ONLY_FIRST_TOWER)
        c = tf.Variable(0.0, synchronization="on_write")
        d = tf.Variable(0.0, synchronization=tf.VariableSynchronization.DEFAULT)
    """)


def project(n: int, k: int) -> Dict[str, str]:
    """The modules of a generated package, by file name."""
    step = max(1, n // max(k, 1))
    to_fix = set(range(0, step * k, step))
    files = {"__init__.py": ""}
    for i in range(n):
        j = (i + 1) % n
        parts = [f"import tensorflow as tf\nfrom proj import m{j}\n\n"
                 "strategy = tf.distribute.MirroredStrategy()\n\n"]
        for c in range(LAYERS):
            parts.append(textwrap.dedent(f"""\
                class L{c}(tf.keras.layers.Layer):
                    def build(self, shape):
                        self.w = self.add_weight(shape=(), aggregation="mean")
                        self.s = tf.Variable(
                            0, trainable=False, aggregation=tf.VariableAggregation.SUM)
                    def call(self, x):
                        self.s.assign_add(1)
                        return helper{c}(x) * self.w

                def helper{c}(x):
                    y = m{j}.helper{(c + 1) % LAYERS}(x) if x is None else x + {c}
                    for q in range(3):
                        y = y * q
                    return y

                """))
        if i in to_fix:
            parts.append(TO_FIX)
        files[f"m{i}.py"] = "".join(parts)
    return files


def measure(n: int, k: int, repeat: int) -> Tuple[float, float, int, int]:
    """(fix CPU seconds, check CPU seconds, checks the fix run made, files it fixed)."""
    from syncadvisor import fixes
    from syncadvisor.config import Settings
    from syncadvisor.engine import Run

    checks: List[int] = []
    real_check = fixes.check

    def counting(*args, **kwargs):
        checks.append(1)
        return real_check(*args, **kwargs)

    best = None
    with tempfile.TemporaryDirectory() as root:
        folder = os.path.join(root, "proj")
        os.makedirs(folder)
        for name, text in project(n, k).items():
            with open(os.path.join(folder, name), "w", encoding="utf-8") as out:
                out.write(text)
        for _ in range(repeat):
            run = Run(Settings(root=root))
            for name in sorted(os.listdir(folder)):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as source:
                    run.add_text(path, source.read())
            run.analyze()
            start = time.process_time()
            run.check()
            check_s = time.process_time() - start
            checks.clear()
            fixes.check = counting
            try:
                start = time.process_time()
                outcome = run.fix(False)
                fix_s = time.process_time() - start
            finally:
                fixes.check = real_check
            row = (fix_s, check_s, len(checks), len(outcome.files))
            best = row if best is None or row[0] < best[0] else best
    assert best is not None
    return best


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", nargs="*", default=["100,4", "200,4", "400,4", "800,4", "400,1",
                                                  "400,16"], metavar="N,K")
    p.add_argument("--repeat", type=int, default=2)
    args = p.parse_args(argv)
    print(f"{'N':>5} {'K':>3} {'check s':>8} {'fix s':>7} {'checks worth':>12} "
          f"{'checks made':>11} {'fixed':>5}")
    for size in args.sizes:
        n, k = (int(x) for x in size.split(","))
        fix_s, check_s, checks, fixed = measure(n, k, args.repeat)
        print(f"{n:>5} {k:>3} {check_s:>8.2f} {fix_s:>7.2f} {fix_s / check_s:>12.1f} "
              f"{checks:>11} {fixed:>5}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

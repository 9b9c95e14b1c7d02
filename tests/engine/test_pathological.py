"""Pathological inputs stay bounded: no traceback, work that grows with the input (not
with its square), and where a bound is reached the answer is "cannot tell" -- no error
finding from a merged answer.

Work is counted, not timed: the Python calls a check makes (cProfile's count, the same
from run to run but for the order of a few sets) and the questions the query engine
answers, for an input and for the same input twice as large. Linear work doubles; the
quadratic growth each of these once had quadruples it. Each test also bounds the CPU
time of its largest input (`CPU_SECONDS`: the process's own time, which other load on
the machine does not add to; each takes a few seconds at most).
"""
from __future__ import annotations

import ast
import cProfile
import pstats
import sys
import textwrap
import time
import tracemalloc
from typing import Dict, List, Optional, Tuple

import pytest

from syncadvisor.config import Settings
from syncadvisor.engine import Run
from syncadvisor.engine.check import Linked, check, link
from syncadvisor.findings import ERROR, Finding
from syncadvisor.model import db as db_module
from syncadvisor.model.contexts import CANNOT_TELL
from syncadvisor.model.replica import WHERES_CANNOT_TELL

SETTINGS = Settings(root="/p")
HEAD = "import tensorflow as tf\nstrategy = tf.distribute.MirroredStrategy()\n"
# Doubling the input at most multiplies the work by this (linear: 2, and a little more
# for the fixed cost of a run being spread over less; quadratic: 4).
LINEAR = 2.6
# The most CPU seconds modelling and checking any one input here may take: some ten
# times what the largest takes, profiled, on a slow machine.
CPU_SECONDS = 60.0


def _run(sources: Dict[str, str]) -> Run:
    run = Run(SETTINGS)
    for path, text in sources.items():
        run.add_text(path, text)
    return run


class Checked:
    """A run's findings, its projects (to ask about) and how much work its check took."""

    def __init__(self, sources: Dict[str, str], tracked: bool = False, profile: bool = False):
        start = time.process_time()
        run = _run(sources)
        results = run.analyze()
        models = [r.model for r in results if r.model is not None]
        self.projects = Linked(models).projects if tracked else link(models)
        profiler = cProfile.Profile() if profile else None
        if profiler is not None:
            profiler.enable()
        self.findings: List[Finding] = check(results, SETTINGS, lambda path: sources.get(path),
                                             linked=self.projects).findings
        if profiler is not None:
            profiler.disable()
        self.calls = pstats.Stats(profiler).total_calls if profiler else 0  # type: ignore
        self.answers = sum(sum(p.db.answers().values()) for p in set(self.projects.values()))
        self.cpu = time.process_time() - start

    def project(self, path: str):
        return self.projects[path]

    def codes(self, severity: Optional[str] = None) -> List[str]:
        return sorted(f.code for f in self.findings
                      if severity is None or f.severity == severity)


def _no_tool_error(checked: Checked) -> None:
    """No internal error, and no more than CPU_SECONDS."""
    assert not [f.message for f in checked.findings if "internal error" in f.message]
    assert checked.cpu <= CPU_SECONDS, checked.cpu


def _grows_linearly(make, n: int, tracked: bool = False) -> Tuple[Checked, Checked]:
    small, large = Checked(make(n), tracked, True), Checked(make(2 * n), tracked, True)
    for checked in (small, large):
        _no_tool_error(checked)
    assert large.calls <= LINEAR * small.calls, (small.calls, large.calls)
    assert large.answers <= LINEAR * small.answers, (small.answers, large.answers)
    return small, large


# --- deep nesting ---------------------------------------------------------------------

def _deepest(make, lo: int = 10, hi: int = 20000) -> int:
    """The deepest nesting of `make(depth)` that Python's own parser accepts."""
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            ast.parse(make(mid))
            lo = mid
        except (SyntaxError, RecursionError, MemoryError):
            hi = mid - 1
    return lo


EXPRESSIONS = {
    "operands": lambda n: "+".join(["x"] * n),
    "lambdas": lambda n: "lambda: " * n + "x",
    "calls": lambda n: "f" + "(x)" * n,
    "attributes": lambda n: "x" + ".a" * n,
    "subscripts": lambda n: "x" + "[0]" * n,
    "brackets": lambda n: "[" * n + "x" + "]" * n,
    "conditionals": lambda n: "x if c else " * n + "x",
    "unary": lambda n: "-" * n + "x",
}


@pytest.mark.parametrize("shape", sorted(EXPRESSIONS))
def test_expressions_nested_to_pythons_limit(shape):
    """As deep as Python parses them, in a creation's argument, an update's value and a
    scope: the file is modelled, or it is one TFS900 saying it is nested too deeply (the
    model builder's bound) -- never a traceback, never another finding about that code."""
    nest = EXPRESSIONS[shape]

    def source(depth: int) -> str:
        return HEAD + textwrap.dedent(f"""\
            with strategy.scope():
                v = tf.Variable({nest(depth)}, synchronization=tf.VariableSynchronization.DEFAULT)
            def step():
                v.assign({nest(depth)})
            with {nest(depth)}:
                w = tf.Variable(0.0)
            """)

    depth = _deepest(source)
    assert depth >= 199
    # Python's limit is relative to how deep in the stack it parses: the tool parses a
    # few frames deeper than this test, which takes away a few levels.
    checked = Checked({"/p/deep.py": source(depth - 150 if depth > 1000 else depth)})
    assert not [f for f in checked.findings if f.message.startswith("cannot parse")]
    _no_tool_error(checked)
    assert checked.codes() == ["TFS001"] or [f.message for f in checked.findings] == [
        "cannot analyse: the code is nested too deeply"], checked.findings


BLOCKS = ["if flag:", "with strategy.scope():", "def f{i}(x):", "class C{i}(tf.Module):",
          "for i in range(3):", "while flag:", "try:", "async def g{i}():"]


def _nested_blocks(depth: int) -> str:
    lines = [HEAD]
    for i in range(depth):
        lines.append("    " * i + BLOCKS[i % len(BLOCKS)].format(i=i))
    inner = "    " * depth
    lines.append(inner + "v = tf.Variable(0.0, synchronization=tf.VariableSynchronization.DEFAULT)")
    lines.append(inner + "v.assign_add(1.0)")
    for i in reversed(range(depth)):
        if BLOCKS[i % len(BLOCKS)] == "try:":
            lines.append("    " * i + "except E:\n" + "    " * (i + 1) + "pass")
    return "\n".join(lines) + "\n"


def test_statements_nested_to_pythons_limit():
    """Blocks of every kind inside each other, as deep as Python's indentation allows."""
    depth = _deepest(_nested_blocks, 10, 200)
    checked = Checked({"/p/blocks.py": _nested_blocks(depth)})
    _no_tool_error(checked)
    assert checked.codes() == ["TFS001"]


def _call_chain(depth: int) -> Dict[str, str]:
    """A chain of `depth` functions, each calling the next; the last makes a variable
    with no aggregation that replicas update; the first is called under a strategy."""
    out = [HEAD]
    for i in range(depth):
        out.append(f"def f{i}():\n    return f{i + 1}()\n")
    out.append(f"def f{depth}():\n"
               f"    v = tf.Variable(0.0, aggregation=tf.VariableAggregation.NONE)\n"
               f"    strategy.run(lambda: v.assign(tf.random.normal([])))\n"
               f"    return v\n")
    out.append("with strategy.scope():\n    f0()\n")
    return {"/p/chain.py": "\n".join(out)}


def test_a_call_chain_deeper_than_the_engine_follows_cannot_tell():
    """Deeper than the query engine follows (`db.MAX_OPEN` open questions), the strategy
    a function runs under cannot be told: no error from the chain; shallow, there is."""
    from syncadvisor.model.contexts import IN_STRATEGY

    shallow = Checked(_call_chain(10)).project("/p/chain.py").strategies
    assert {c.kind for c in shallow.contexts("chain.f10")} == {IN_STRATEGY}
    deep = Checked(_call_chain(2 * db_module.MAX_OPEN))
    _no_tool_error(deep)
    assert not deep.codes(ERROR), deep.findings
    strategies = deep.project("/p/chain.py").strategies
    assert strategies.contexts(f"chain.f{2 * db_module.MAX_OPEN}") == CANNOT_TELL
    _grows_linearly(_call_chain, db_module.MAX_OPEN)


# --- thousands of bindings of one name --------------------------------------------------

def _bindings(n: int) -> Dict[str, str]:
    out = [HEAD, "with strategy.scope():\n"
                 "    v = tf.Variable(0.0, aggregation=tf.VariableAggregation.NONE)\n"]
    out += [f"v = v + {i}" if i % 2 else f"v = make(v, {i})" for i in range(n)]
    out.append("def step():\n    v.assign(tf.random.normal([]))\nstrategy.run(step)\n")
    out.append("def f(x):\n" + "".join(f"    x = g(x, {i})\n" for i in range(n)) +
               "    return x\n")
    return {"/p/bindings.py": "\n".join(out) + "\n"}


def test_thousands_of_bindings_of_one_name():
    """Each use of a name listed every binding of it in its scope: memory and work grew
    with the square of the bindings. Past `MAX_NAME_BINDINGS` a use cannot tell which
    it sees: the update of `v` is no finding (with a few bindings it is)."""
    from syncadvisor.engine.analyze import analyze_text
    from syncadvisor.model.builder.handovers import MAX_NAME_BINDINGS

    assert "TFS201" in Checked(_bindings(3)).codes()
    many = Checked(_bindings(MAX_NAME_BINDINGS + 1))
    _no_tool_error(many)
    assert "TFS201" not in many.codes()
    peaks = []
    for n in (1000, 2000):
        text = _bindings(n)["/p/bindings.py"]
        tracemalloc.start()
        analyze_text(text, "/p/bindings.py", SETTINGS)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] <= LINEAR * peaks[0], peaks
    _grows_linearly(_bindings, 600)


# --- import cycles --------------------------------------------------------------------

def _cycle(n: int) -> Dict[str, str]:
    """n modules in one import cycle (and a shortcut each), each re-exporting the next
    one's names with a star import, passing a function and a variable round the circle,
    updating its own in replica context."""
    files = {"/p/cyc/__init__.py": ""}
    for i in range(n):
        j, k = (i + 1) % n, (i * 7 + 3) % n
        files[f"/p/cyc/m{i}.py"] = textwrap.dedent(f"""\
            import tensorflow as tf
            from cyc.m{j} import *
            from cyc import m{k}
            from cyc.m{j} import make{j} as following, v{j}

            def make{i}(x):
                return following(x)

            v{i} = v{j}
            strategy = m{k}.strategy
            with strategy.scope():
                w{i} = tf.Variable(0.0, aggregation=tf.VariableAggregation.NONE)

            def step{i}():
                w{i}.assign(tf.random.normal([]))
                v{i}.assign_add(1.0)
                m{k}.step{k}()
            strategy.run(step{i})
            """)
    return files


def test_an_import_cycle_among_many_modules():
    """Every finding's message searched the whole run for how its context was entered
    (`Replica.call_path`): work grew with the square of the modules."""
    small, large = _grows_linearly(_cycle, 100)
    assert len(large.findings) == 2 * len(small.findings) > 0


# --- a 50,000-line module ---------------------------------------------------------------

def _module(lines: int) -> Dict[str, str]:
    """A module of `lines` lines: Keras layers with a finding each (a counter with no
    aggregation that replicas update), helpers they call, and plain code between."""
    out, n, i = [HEAD], HEAD.count("\n"), 0
    while n < lines:
        block = textwrap.dedent(f"""\
            class L{i}(tf.keras.layers.Layer):
                def build(self, shape):
                    self.w = self.add_weight(shape=(), aggregation="sum")
                    self.s = tf.Variable(0, trainable=False)
                def call(self, x):
                    self.s.assign_add(1)
                    return helper{i % 50}(x) * self.w

            def helper{i}(x):
                y = x + {i}
                if y > {i}:
                    y = y - 1
                for k in range(3):
                    y = y * k
                return y

            TABLE{i} = {{"a": {i}, "b": [1, 2, 3], "c": "text"}}

            """)
        out.append(block)
        n += block.count("\n")
        i += 1
    return {"/p/big.py": "".join(out)}


def test_a_50000_line_module():
    small, large = _grows_linearly(_module, 1500)
    assert len(large.findings) >= 2 * len(small.findings) - 2
    big = Checked(_module(50000))
    _no_tool_error(big)
    layers = big.findings[-1].line // 20  # (one layer, and its finding, every 20 lines)
    assert len(big.findings) >= layers >= 2400


# --- a call fanning out to thousands of functions ------------------------------------------

def _fan_out(n: int) -> Dict[str, str]:
    """A method name defined in n Keras layers, each updating a variable with no
    aggregation in `call` and calling its own `call` in another method (n calls that
    name `call`); one call under a strategy may run any of them."""
    out = [HEAD]
    for i in range(n):
        out.append(textwrap.dedent(f"""\
            class L{i}(tf.keras.layers.Layer):
                def build(self, shape):
                    self.s = tf.Variable(0.0, aggregation=tf.VariableAggregation.NONE)
                def call(self, x):
                    self.s.assign(tf.random.normal([]))
                    return x
                def forward(self, x):
                    return self.call(x)
            """))
    out.append("with strategy.scope():\n    LAYERS = [" + ", ".join(f"L{i}()" for i in range(n))
               + "]\n")
    out.append("def apply(x):\n    for layer in LAYERS:\n        x = layer.call(x)\n"
               "    return x\n")
    out.append("y = apply(1.0)\n")
    return {"/p/fanout.py": "\n".join(out)}


@pytest.mark.parametrize("tracked", [False, True], ids=["command", "server"])
def test_a_call_fanning_out_to_thousands_of_functions(tracked):
    """`layer.call(x)` for a layer of any of n classes: a call that may run more than
    MAX_TARGETS functions runs each in a context that cannot be told. Found either way
    the run finds callers (the command's table of every call's targets; a kept
    project's calls by the name they call, once a name for all its methods)."""
    from syncadvisor.model.contexts import MAX_TARGETS

    narrow = Checked(_fan_out(3), tracked)
    assert narrow.codes().count("TFS201") == 3
    wide = Checked(_fan_out(MAX_TARGETS + 1), tracked)
    _no_tool_error(wide)
    assert "TFS201" not in wide.codes()
    project = wide.project("/p/fanout.py")
    assert project.strategies.contexts("fanout.L0.call") == CANNOT_TELL
    assert project.replica.where("fanout.L0.call") == WHERES_CANNOT_TELL
    _grows_linearly(_fan_out, 300, tracked)


# --- a function called from thousands of places -------------------------------------------

def _fan_in(n: int, depth: int = 20) -> Dict[str, str]:
    """A helper called from n places, each under its own strategy and in its own
    `strategy.run`; it calls a chain of `depth` functions, the last making a variable."""
    out = [HEAD]
    for k in range(depth):
        out.append(f"def helper{k}(x):\n    return helper{k + 1}(x)\n")
    out.append(f"def helper{depth}(x):\n"
               f"    v = tf.Variable(0.0, aggregation=tf.VariableAggregation.NONE)\n"
               f"    v.assign(tf.reduce_mean(x))\n    return v\n")
    for i in range(n):
        out.append(f"s{i} = tf.distribute.MirroredStrategy()\n"
                   f"with s{i}.scope():\n    helper0(1.0)\n"
                   f"def step{i}(x):\n    return helper0(x)\n"
                   f"s{i}.run(step{i}, args=(1.0,))\n")
    return {"/p/fanin.py": "\n".join(out)}


def test_a_function_called_from_thousands_of_places():
    """Every caller under its own strategy: a function with more than MAX_CONTEXTS
    contexts (or replica contexts) cannot tell which, and neither can what it calls --
    no finding, not one made on the merge of thousands; with a few callers, the update
    in each caller's replica context is one."""
    from syncadvisor.model.contexts import MAX_CONTEXTS

    few = Checked(_fan_in(3))
    assert "TFS201" in few.codes()  # (each caller's replica context, named in the message)
    many = Checked(_fan_in(MAX_CONTEXTS + 1))
    _no_tool_error(many)
    assert not many.codes(), many.findings
    project = many.project("/p/fanin.py")
    assert project.strategies.contexts("fanin.helper20") == CANNOT_TELL
    assert project.replica.where("fanin.helper20") == WHERES_CANNOT_TELL
    _grows_linearly(lambda n: _fan_in(n), 500)


def test_the_recursion_limit_is_restored():
    limit = sys.getrecursionlimit()
    Checked(_call_chain(2 * db_module.MAX_OPEN))
    assert sys.getrecursionlimit() == limit


def _two_ways(n: int) -> Dict[str, str]:
    """A helper called from n places, every other one inside a strategy's scope."""
    out = [HEAD, "def helper(x):\n    return tf.Variable(x)\n"]
    out += ["with strategy.scope():\n    helper(1.0)\n" if i % 2 else "helper(1.0)\n"
            for i in range(n)]
    return {"/p/twoways.py": "\n".join(out)}


def test_more_calls_than_placements_tell_apart():
    """`placed` names the call that gives each context where calls differ; past
    MAX_PLACED such calls it cannot tell (TFS108 pairs two placements: their product)."""
    from syncadvisor.model.contexts import CTX_CANNOT_TELL, MAX_PLACED

    at = ("/p/twoways.py", "twoways.helper", ())
    few = Checked(_two_ways(10)).project("/p/twoways.py").strategies.placed(at)
    assert len(few) == 10 and all(via is not None for _, via in few)
    many = Checked(_two_ways(MAX_PLACED + 1))
    _no_tool_error(many)
    assert many.project("/p/twoways.py").strategies.placed(at) == [(CTX_CANNOT_TELL, None)]

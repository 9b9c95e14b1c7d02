"""`tfapi.MERGE_CALL_REFUSING_CALLS` under real TensorFlow: in replica context, an update of
a variable with an aggregation inside the branch or loop body each entry names raises
RuntimeError (`merge_call` inside a graph being built), which is why TFS201 offers no
aggregation fix for an update reached through one. The entries marked conditional raise
only with a tensor predicate; with a Python bool they call the function directly and the
update runs clean, as it does outside any branch and inside `vectorized_map`.

AutoGraph's `if`/`while`/conditional expression do the same in a traced function when
their test is a tensor (tfapi.TENSOR_VALUED_CALLS): with a Python test, or run eagerly
(`strategy.run` outside any `tf.function`), they are plain Python and the update runs
clean.

Every entry of the table has a call here, so that the table cannot claim more than was run.
Skipped without TensorFlow unless SYNCADVISOR_REQUIRE_TF=1.
"""
from __future__ import annotations

import importlib.util
import os

import pytest

from syncadvisor.model import tfapi

from .runner import run_snippets

PRELUDE = """\
import tensorflow as tf
import keras
from tensorflow.python.framework import smart_cond as tf_smart_cond
from tf_keras.src.utils import control_flow_util

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    v = tf.Variable(0.0, aggregation=tf.VariableAggregation.MEAN)
    flag = tf.Variable(1.0)


def upd(x):
    v.assign(x)
    return tf.constant(0.0)


def zero():
    return tf.constant(0.0)


ELEMS = tf.constant([1.0])
"""

RUN = """
@tf.function
def step():
    x = tf.cast(tf.distribute.get_replica_context().replica_id_in_sync_group, tf.float32)
    return CALL(x + 1.0)


strategy.run(step)
RESULT = [float(copy) for copy in strategy.experimental_local_results(v)]
"""

# Qualified name -> the call, with `P` for its predicate where it has one.
CALLS = {
    "tensorflow.cond": "tf.cond(P, lambda: upd(x), zero)",
    "tensorflow.compat.v1.cond": "tf.compat.v1.cond(P, lambda: upd(x), zero)",
    "tensorflow.case": "tf.case([(P, lambda: upd(x))], default=zero)",
    "tensorflow.compat.v1.case": "tf.compat.v1.case([(P, lambda: upd(x))], default=zero)",
    "tensorflow.switch_case": "tf.switch_case(tf.constant(0), [lambda: upd(x), zero])",
    "tensorflow.compat.v1.switch_case":
        "tf.compat.v1.switch_case(tf.constant(0), [lambda: upd(x), zero])",
    "tensorflow.while_loop": "tf.while_loop(lambda i: i < 1, lambda i: (upd(x), i + 1)[1], [0])",
    "tensorflow.compat.v1.while_loop":
        "tf.compat.v1.while_loop(lambda i: i < 1, lambda i: (upd(x), i + 1)[1], [0])",
    "tensorflow.map_fn": "tf.map_fn(lambda e: upd(x) + e, ELEMS)",
    "tensorflow.compat.v1.map_fn": "tf.compat.v1.map_fn(lambda e: upd(x) + e, ELEMS)",
    "tensorflow.scan": "tf.scan(lambda a, e: upd(x) + e, ELEMS)",
    "tensorflow.compat.v1.scan": "tf.compat.v1.scan(lambda a, e: upd(x) + e, ELEMS)",
    "tensorflow.foldl": "tf.foldl(lambda a, e: upd(x) + e, ELEMS, initializer=zero())",
    "tensorflow.compat.v1.foldl":
        "tf.compat.v1.foldl(lambda a, e: upd(x) + e, ELEMS, initializer=zero())",
    "tensorflow.foldr": "tf.foldr(lambda a, e: upd(x) + e, ELEMS, initializer=zero())",
    "tensorflow.compat.v1.foldr":
        "tf.compat.v1.foldr(lambda a, e: upd(x) + e, ELEMS, initializer=zero())",
    "keras.ops.while_loop":
        "keras.ops.while_loop(lambda i: i < 1, lambda i: (upd(x), i + 1)[1], [0])",
    "keras.ops.fori_loop": "keras.ops.fori_loop(0, 1, lambda i, a: upd(x) + a, zero())",
    "keras.ops.switch": "keras.ops.switch(tf.constant(0), [lambda: upd(x), zero])",
    "keras.ops.map": "keras.ops.map(lambda e: upd(x) + e, ELEMS)",
    "keras.ops.scan": "keras.ops.scan(lambda a, e: (upd(x) + a, e), zero(), ELEMS)",
    "tensorflow.python.framework.smart_cond.smart_cond":
        "tf_smart_cond.smart_cond(P, lambda: upd(x), zero)",
    "tensorflow.__internal__.smart_cond.smart_cond":
        "tf.__internal__.smart_cond.smart_cond(P, lambda: upd(x), zero)",
    "tf_keras.utils.control_flow_util.smart_cond":
        "control_flow_util.smart_cond(P, lambda: upd(x), zero)",
    "keras.ops.cond": "keras.ops.cond(P, lambda: upd(x), zero)",
}
# Calls that run the update clean: the baseline, and what the table leaves out on purpose.
CLEAN = {
    "direct": "upd(x)",
    "tensorflow.vectorized_map": "tf.vectorized_map(lambda e: upd(x) + e, ELEMS)",
}
# What TFS201's message quotes (tfapi.MERGE_CALL_REFUSED_ERROR, between its quotes).
REFUSED = tfapi.MERGE_CALL_REFUSED_ERROR.split('"')[1]
TENSOR_PREDICATE = "flag > 0"  # a variable's value: no constant folding makes it a bool


def _source(call: str, predicate: str = TENSOR_PREDICATE) -> str:
    return PRELUDE + f"\nCALL = lambda x: {call.replace('P', predicate)}\n" + RUN


# AutoGraph's statements, as (tensor test, Python test) bodies of the function the step
# calls: each calls `upd` under it, as a caller's `if` around the call that reaches an
# update does.
AUTOGRAPH = {
    "if": ("if flag > 0:\n    upd(x)", "if True:\n    upd(x)"),
    "while": ("i = tf.constant(0)\nwhile i < 1:\n    upd(x)\n    i += 1",
              "i = 0\nwhile i < 1:\n    upd(x)\n    i += 1"),
    "if-expression": ("upd(x) if flag > 0 else zero()", "upd(x) if True else zero()"),
}


def _autograph_source(body: str, traced: bool = True) -> str:
    run = RUN if traced else RUN.replace("@tf.function\n", "")
    lines = "".join(f"    {line}\n" for line in body.splitlines())
    return PRELUDE + f"\ndef CALL(x):\n{lines}    return zero()\n" + run


def _tensorflow_or_skip() -> None:
    if importlib.util.find_spec("tensorflow") is None:
        if os.environ.get("SYNCADVISOR_REQUIRE_TF") == "1":
            pytest.fail("SYNCADVISOR_REQUIRE_TF=1 but tensorflow is not installed", pytrace=False)
        pytest.skip("tensorflow is not installed")


def test_every_entry_has_a_call():
    assert set(CALLS) == set(tfapi.MERGE_CALL_REFUSING_CALLS)
    assert not set(CLEAN) & set(tfapi.MERGE_CALL_REFUSING_CALLS)


def test_aggregated_updates_raise_inside_the_branches_the_table_names():
    _tensorflow_or_skip()
    snippets = {f"tensor:{name}": _source(call) for name, call in CALLS.items()}
    snippets.update({f"bool:{name}": _source(call, "True") for name, call in CALLS.items()
                     if not tfapi.MERGE_CALL_REFUSING_CALLS[name]})
    snippets.update({f"clean:{name}": _source(call) for name, call in CLEAN.items()})
    for name, (tensor, python) in AUTOGRAPH.items():
        snippets[f"tensor:autograph-{name}"] = _autograph_source(tensor)
        snippets[f"bool:autograph-{name}"] = _autograph_source(python)
        snippets[f"eager:autograph-{name}"] = _autograph_source(tensor, traced=False)
    results = run_snippets(snippets, per_snippet_timeout=120.0)
    wrong = []
    for key, record in results.items():
        kind, _, name = key.partition(":")
        if kind == "tensor":
            refused = not record["ok"] and record["exc_type"] == "RuntimeError" and \
                REFUSED in (record["message"] or "")
            if not refused:
                wrong.append((key, record["exc_type"], (record["message"] or "")[:200]))
        elif not record["ok"] or record["result"] != [1.5, 1.5]:
            # runs clean, and the aggregation averages the replicas' 1.0 and 2.0
            wrong.append((key, record["exc_type"], record["result"]))
    assert not wrong, wrong

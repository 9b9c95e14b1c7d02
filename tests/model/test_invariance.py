"""invariance.py: which values written in replica context can differ between replicas,
and what outside state the others read (linking settles that state)."""
import ast
import textwrap

import pytest

from syncadvisor.model.facts import SOURCE_INPUT, SOURCE_RANDOM, SOURCE_REPLICA_ID
from syncadvisor.model.invariance import Definitions, Invariance


def _invariance(source: str):
    tree = ast.parse(textwrap.dedent(source))
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Lambda))]
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute) and n.func.attr == "assign"]
    value = calls[-1].args[0]
    inner = [f for f in functions if any(n is value for n in ast.walk(f))]
    chain = [Definitions(f) for f in reversed(inner)]  # ast.walk is outermost first
    self_name = "self" if "self" in {a.arg for f in inner for a in f.args.args} else None
    return Invariance(chain, self_name), value


def _reads(source: str):
    """What the value of the last `...assign(value)` in the innermost function reads:
    None if it can differ, else the read expressions' text."""
    invariance, value = _invariance(source)
    reads = invariance.reads(value)
    return None if reads is None else sorted({ast.unparse(r) for r in reads})


@pytest.mark.parametrize("source, expected", [
    ("def f(x):\n    v.assign(1.0)", []),
    ("def f(x):\n    v.assign(x)", None),  # a parameter: each replica's own
    ("def f(x):\n    y = x * 2\n    v.assign(y)", None),
    ("def f(x):\n    v.assign(v + 1)", ["v"]),
    ("def f(self):\n    self.u.assign(self.u * self.k)", ["self.k", "self.u"]),
    ("def f(x):\n    v.assign(tf.random.normal([]))", None),
    ("def f(x):\n    v.assign(keras.random.uniform([]) * 0)", None),
    ("def f(x):\n    v.assign(ctx.replica_id_in_sync_group)", None),
    ("def f(x):\n    v.assign(tf.cast(1.0, x.dtype))", ["tf"]),  # alike everywhere
    ("def f(x):\n    v.assign(tf.cast(x.shape[0], tf.float32))", None),  # uneven batches
    # past axis 0, a shape is the global batch's on every replica (a padded length)
    ("def f(x):\n    v.assign(tf.cast(x.shape[1], tf.float32))", ["tf"]),
    ("def f(x):\n    v.assign(table(tf.shape(x)[1]))", ["table"]),
    ("def f(x):\n    v.assign(table(tf.shape(x)[0]))", None),
    ("def f(x):\n    v.assign(table(tf.shape(x)[-1]))", None),  # the last: axis 0 at rank 1
    ("def f(x):\n    v.assign(tf.reduce_prod(tf.shape(x)[1:]))", ["tf"]),
    ("def f(x):\n    v.assign(tf.reduce_prod(tf.shape(x)[:2]))", None),
    ("def f(x):\n    b, n = shape_list(x)\n    v.assign(table(n))", ["table"]),
    ("def f(x):\n    b, n = shape_list(x)\n    v.assign(table(b))", None),
    ("def f(x):\n    s = tf.shape(x)\n    v.assign(table(s[2]))", ["table"]),
    ("def f(x, s):\n    v.assign(table(s[2]))", None),  # a parameter: not known a shape
    ("def f(x):\n    v.assign(table(x.shape.as_list()[1]))", ["table"]),
    ("def f(x):\n    v.assign(table(keras.ops.shape(x)[1]))", ["table"]),
    ("def f(x):\n    v.assign(table(x[1]))", None),  # an element, not a size
    ("def f(x, vs):\n    g = ctx.all_reduce('sum', x)\n    for acc, y in zip(vs, g):\n"
     "        v.assign(y)", []),  # each element from its own iterable
    ("def f(x, vs):\n    for acc, y in zip(vs, x):\n        v.assign(y)", None),
    ("def f(xs):\n    for i, y in enumerate(xs):\n        v.assign(i)", []),
    ("def f(xs):\n    for i, y in enumerate(xs):\n        v.assign(y)", None),
    ("def f(x):\n    a, b = 1.0, x\n    v.assign(a)", []),
    ("def f(x):\n    a, b = 1.0, x\n    v.assign(b)", None),
    ("def f(x):\n    v.assign(tf.compat.v1.random_uniform(()))", None),
    ("def f(x):\n    v.assign(tf.keras.backend.random_normal(()))", None),
    ("def f(x):\n    v.assign(tf.truncated_normal(()))", None),
    # `self` state written here from the replica's input
    ("def f(self, x):\n    self.last = tf.reduce_mean(x)\n    v.assign(self.last)", None),
    ("def f(self, x):\n    self.k = 2.\n    v.assign(self.k)", ["self.k"]),
    ("def f(x):\n    v.assign(ctx.all_reduce('sum', x))", []),
    ("def f(x):\n    v.assign(tf.distribute.get_replica_context().all_gather(x, 0))", []),
    ("def f(x):\n    v.assign(tf.cond(c, lambda: w, lambda: 0.))", ["c", "tf", "w"]),
    ("def f(x):\n    v.assign(tf.map_fn(lambda e: e, w))", None),  # a lambda with parameters
    ("def f(x):\n    v.assign([e for e in w])", None),  # comprehensions are not followed
    # a loop: a local assigned from itself is decided by its other definitions
    ("def f(self):\n    u = self.u.value\n    for _ in range(self.n):\n"
     "        u = norm(u @ self.w)\n    self.u.assign(u)",
     ["norm", "self.u", "self.w"]),
    ("def f(self, x):\n    u = self.u.value\n    for _ in range(3):\n"
     "        u = norm(u @ x)\n    self.u.assign(u)", None),
    # a closure: the enclosing function's parameters are what its replica was handed too
    ("def outer(x):\n    def inner():\n        v.assign(x)\n    inner()", None),
    ("def outer():\n    y = 3.\n    def inner():\n        v.assign(y)\n    inner()", []),
    # ... unless it hands the inner one out: bound before that runs, once for all replicas
    ("def make(opts):\n    def step(x):\n        v.assign(opts.lr if opts.warm else 0.)\n"
     "    return step", ["opts"]),
    ("def make(opts):\n    def step(x):\n        v.assign(opts.lr)\n"
     "    return tf.function(step)", ["opts"]),
    ("def make(opts):\n    def step(x):\n        v.assign(opts.lr)\n"
     "    def train(b):\n        return strategy.run(step, args=(b,))\n    return train",
     ["opts"]),
    ("def make(opts):\n    def step(x):\n        v.assign(opts.lr)\n"
     "    return tf.cond(c, step, step)", None),  # run in `make`, as `make` runs
    ("def f(x):\n    global g\n    g = x\n    v.assign(g)", ["g"]),  # decided by linking
    ("def f(x):\n    try:\n        pass\n    except E as e:\n        v.assign(e)", None),
    ("def f(x):\n    a, b = x\n    v.assign(a)", None),
    ("def f(x):\n    import numpy as np\n    v.assign(np.pi)", []),
    # Keras' `training` flag: the same mode on every replica
    ("def call(self, x, training=None):\n    m = 1. if training else 0.\n    self.f.assign(m)",
     []),
    ("def call(self, x, training=None):\n    m = 1. if sum(x) > 0 else 0.\n    self.f.assign(m)",
     None),
    # a local rebound in the function's own statements: read after, that value alone
    ("def f(x):\n    m = tf.reduce_mean(x)\n    m = ctx.all_reduce('mean', m)\n    v.assign(m)",
     []),
    ("def f(x):\n    m = tf.reduce_mean(x)\n    m = ctx.all_reduce('mean', m)\n"
     "    def g():\n        v.assign(m)\n    g()", []),
    ("def f(x):\n    m = tf.reduce_mean(x)\n    def g():\n        v.assign(m)\n    g()\n"
     "    m = ctx.all_reduce('mean', m)", None),  # the def comes before the rebinding
    ("def f(x):\n    m = tf.reduce_mean(x)\n    if c:\n        m = ctx.all_reduce('mean', m)\n"
     "    v.assign(m)", None),  # rebound in a branch: either value
    ("def f(x):\n    m = ctx.all_reduce('mean', x)\n    for e in x:\n        m = e\n"
     "    v.assign(m)", None),
])
def test_what_a_replica_value_reads(source, expected):
    assert _reads(source) == expected


def test_locals_defined_from_each_other_cost_a_bounded_walk():
    body = "".join("    a = b + c + d\n    b = a + c + d\n    c = a + b + d\n    d = a + b + c\n"
                   for _ in range(40))
    source = "def f(x):\n    a = b = c = d = 1.0\n" + body + "    v.assign(a)"
    assert _reads(source) is None  # too much to follow: as if it could differ


@pytest.mark.parametrize("source, expected", [
    ("def f(x):\n    y = tf.reduce_mean(x)\n    v.assign(y * 2)", (SOURCE_INPUT, "x", 2)),
    ("def f(x):\n    v.assign(1. + tf.random.normal([]))", (SOURCE_RANDOM, "tf.random.normal", 2)),
    ("def f():\n    ctx = tf.distribute.get_replica_context()\n"
     "    i = ctx.replica_id_in_sync_group\n    v.assign(i)",
     (SOURCE_REPLICA_ID, "replica_id_in_sync_group", 3)),
    # the first source in the value's order, through the locals it reads
    ("def f(x):\n    n = tf.random.normal([])\n    v.assign(n + x)",
     (SOURCE_RANDOM, "tf.random.normal", 2)),
    ("def f(x):\n    v.assign([e for e in x])", None),  # not followed: no source to name
    ("def f(x):\n    v.assign(1.)", None),  # the same everywhere
])
def test_what_makes_a_replica_value_differ(source, expected):
    invariance, value = _invariance(source)
    invariance.reads(value)
    found = invariance.source
    assert (found and (found[0], found[1], found[2].lineno)) == expected


def _parameters(source: str, settled=True):
    """The parameters the value of the last `...assign(value)` reads, where the functions
    around it are ones whose calls the file shows (`settled`), by name."""
    invariance, value = _invariance(source)
    invariance.callers_seen = [settled] * len(invariance.chain)
    reads = invariance.reads(value)
    return None if reads is None else sorted(name for _, name, _ in invariance.params)


@pytest.mark.parametrize("source, settled, expected", [
    ("def _f(self, x):\n    self.g.assign(x * self.k)", True, ["x"]),  # what calls pass
    ("def _f(self, x):\n    self.g.assign(x * self.k)", False, None),  # each replica's own
    ("def _f(self, x, training):\n    self.g.assign(x if training else 0.)", True, ["x"]),
    ("def _f(x):\n    y = x + 1\n    v.assign(y + tf.random.normal([]))", True, None),
    ("def outer(x):\n    def inner(y):\n        v.assign(x + y)\n    inner(1.)", True,
     ["x", "y"]),
])
def test_parameters_of_functions_whose_calls_are_seen(source, settled, expected):
    assert _parameters(source, settled) == expected

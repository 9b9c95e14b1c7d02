"""Which calls the linked model sees as variable creations, and as which API: method
calls on instances, not only on `self`; every Keras and TensorFlow creation API; Keras
base classes reached through a module of the project that re-exports Keras."""
from __future__ import annotations

import textwrap
from typing import Dict, List

import pytest

from syncadvisor.api import linked_files
from syncadvisor.model import tfapi
from syncadvisor.model.project import Project
from syncadvisor.model.reach import followed_names, index_of, modules_reached


def _link(tmp_path, files: Dict[str, str]):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return {lf.model.path.rsplit("/", 1)[-1]: lf for lf in linked_files([str(tmp_path)])}


def _sites(tmp_path, text: str) -> List:
    return _link(tmp_path, {"m.py": text})["m.py"].sites


def _titles(tmp_path, text: str) -> List[str]:
    return [s.api.title for s in _sites(tmp_path, text)]


@pytest.mark.parametrize("construct, expected", [
    ("tf_keras.layers.Dense(3)", tfapi.KERAS2_LAYER_ADD_WEIGHT),
    ("tf_keras.Sequential()", tfapi.KERAS2_LAYER_ADD_WEIGHT),
    ("tf_keras.metrics.Mean()", tfapi.KERAS2_METRIC_ADD_WEIGHT),
    ("tf_keras.optimizers.legacy.Adam()", tfapi.KERAS2_OPTIMIZER_ADD_WEIGHT),
    ("keras.layers.Dense(3)", tfapi.KERAS3_LAYER_ADD_WEIGHT),
    ("keras.metrics.Mean()", tfapi.KERAS3_METRIC_ADD_WEIGHT),
])
def test_add_weight_on_an_instance_is_the_api_of_its_class(tmp_path, construct, expected):
    sites = _sites(tmp_path, f"""
        import keras, tf_keras
        obj = {construct}
        w = obj.add_weight(name="w", shape=())
    """)
    assert [s.api for s in sites] == [expected]


def test_an_instance_of_a_project_subclass_and_self_in_it(tmp_path):
    sites = _sites(tmp_path, """
        import tf_keras
        class Acc(tf_keras.metrics.Metric):
            def __init__(self):
                super().__init__()
                self.total = super().add_weight("total", ())
        acc = Acc()
        extra = acc.add_weight("extra", ())
    """)
    assert [s.api for s in sites] == [tfapi.KERAS2_METRIC_ADD_WEIGHT] * 2
    assert all((s.sync.member, s.agg.member) == ("ON_READ", "SUM") for s in sites)


@pytest.mark.parametrize("receiver", [
    "def f(layer):\n    return layer.add_weight('w', ())",  # a parameter: any class at all
    "obj = make()\nw = obj.add_weight('w', ())",  # what `make` returns is out of sight
    "obj = tf_keras.initializers.Zeros()\nw = obj.add_weight('w', ())",  # not a layer
    # a layer or a metric: their add_weight make different variables
    "obj = tf_keras.layers.Dense(3) if c else tf_keras.metrics.Mean()\n"
    "w = obj.add_weight('w', ())",
    # a project class with its own add_weight, whatever its base
    "class Mine(tf_keras.layers.Layer):\n    def add_weight(self, *a):\n        return 1\n"
    "w = Mine().add_weight('w', ())",
])
def test_an_unknown_or_ambiguous_receiver_creates_nothing(tmp_path, receiver):
    assert _sites(tmp_path, "import tf_keras\n" + receiver + "\n") == []


def test_keras3_layer_add_variable_has_no_aggregation(tmp_path):
    (site,) = _sites(tmp_path, """
        import keras
        class L(keras.layers.Layer):
            def build(self, shape):
                self.w = self.add_variable((3,), "zeros", "float32", False, aggregation="sum")
    """)
    assert site.api is tfapi.KERAS3_LAYER_ADD_VARIABLE
    assert site.trainable is False and site.dtype == "float32"
    assert (site.sync.member, site.agg.member) == ("AUTO", "NONE")
    assert set(site.unexpected) == {"aggregation"}  # a TypeError: Keras 3 has no such parameter


@pytest.mark.parametrize("base, call, expected", [
    ("keras.optimizers.Optimizer", "self.add_variable_from_reference(var, 'm')",
     tfapi.KERAS3_OPTIMIZER_ADD_VARIABLE_FROM_REFERENCE),
    ("keras.optimizers.Optimizer", "self.add_variable((), aggregation='mean')",
     tfapi.KERAS3_OPTIMIZER_ADD_VARIABLE),
    ("tf_keras.optimizers.Optimizer", "self.add_variable_from_reference(var, 'm')",
     tfapi.KERAS2_OPTIMIZER_ADD_VARIABLE_FROM_REFERENCE),
    ("tf_keras.optimizers.Optimizer", "self.add_variable((), 'float32')",
     tfapi.KERAS2_OPTIMIZER_ADD_VARIABLE),
    ("tf_keras.optimizers.legacy.Optimizer", "self.add_slot(var, 'm')",
     tfapi.KERAS2_OPTIMIZER_ADD_SLOT),
])
def test_optimizer_slot_apis(tmp_path, base, call, expected):
    (site,) = _sites(tmp_path, f"""
        import keras, tf_keras
        class Opt({base}):
            def build(self, var_list):
                for var in var_list:
                    self.slot = {call}
    """)
    assert site.api is expected
    assert site.trainable is False
    mean = "add_variable((), aggregation" in call
    assert (site.sync.member, site.agg.member) == ("AUTO", "MEAN" if mean else "NONE")


@pytest.mark.parametrize("spelling", [
    "keras.Variable", "keras.src.backend.Variable", "keras.src.backend.common.KerasVariable",
    "keras.src.backend.common.variables.Variable",
])
def test_keras3_variable_spellings(tmp_path, spelling):
    module, _, name = spelling.rpartition(".")
    (site,) = _sites(tmp_path, f"""
        from {module} import {name}
        v = {name}(0.0, aggregation="sum")
    """)
    assert site.api is tfapi.KERAS3_VARIABLE and site.agg.member == "SUM"


@pytest.mark.parametrize("spelling, expected", [
    ("tensorflow.python.ops.variables.Variable", tfapi.TF_VARIABLE),
    ("tensorflow.python.ops.variable_v1.VariableV1", tfapi.TF_V1_VARIABLE),
    ("tensorflow.python.ops.resource_variable_ops.ResourceVariable", tfapi.TF_RESOURCE_VARIABLE),
])
def test_tensorflow_internal_paths(tmp_path, spelling, expected):
    module, _, name = spelling.rpartition(".")
    package, _, leaf = module.rpartition(".")
    assert _titles(tmp_path, f"""
        from {package} import {leaf} as lib
        v = lib.{name}(0.0)
    """) == [expected.title]


SHIM = """
    import tensorflow.compat.v2 as tf
    if tf.keras.version().startswith("3."):
        from tf_keras import *
        import tf_keras.api._v1.keras as v1
    else:
        from tensorflow.compat.v2.keras import *
"""


def test_a_base_class_through_a_star_import_shim(tmp_path):
    linked = _link(tmp_path, {"pkg/__init__.py": "", "pkg/tfk.py": SHIM, "pkg/layer.py": """
        import tensorflow as tf
        from pkg import tfk
        class Counter(tfk.layers.Layer):
            def build(self, shape):
                self.n = self.add_weight("n", (), trainable=False,
                                         synchronization=tf.VariableSynchronization.ON_READ)
            def call(self, x):
                self.n.assign_add(1.0)
                return x
        class Old(tfk.v1.layers.Layer):
            pass
        class Model(tfk.Model):
            pass
    """})
    layer = linked["layer.py"]
    project = layer.project
    assert [s.api for s in layer.sites] == [tfapi.KERAS2_LAYER_ADD_WEIGHT]
    for name in ("Counter", "Old", "Model"):
        assert project.keras_kind(f"pkg.layer.{name}") == (tfapi.KERAS2, tfapi.LAYER)
    assert "Keras runs `Counter.call` once per replica" in {
        w.via for w in project.replica.where_at("pkg.layer.Counter.call")}


def test_an_alias_module_and_a_project_class_re_exported(tmp_path):
    linked = _link(tmp_path, {
        "pkg/__init__.py": "from pkg.base import *\n",
        "pkg/compat.py": "import tensorflow as tf\nimport tf_keras as keras\n"
                         "strategy = tf.distribute.MirroredStrategy()\n",
        "pkg/base.py": "from pkg import compat\nclass Base(compat.keras.metrics.Metric):\n"
                       "    def __init__(self):\n        self.n = self.add_weight('n', ())\n",
        "pkg/use.py": "import pkg\nclass Acc(pkg.Base):\n"
                      "    def __init__(self):\n        self.t = self.add_weight('t', ())\n",
    })
    assert [s.api for s in linked["base.py"].sites + linked["use.py"].sites] == [
        tfapi.KERAS2_METRIC_ADD_WEIGHT] * 2


def test_star_imports_and_exports_are_modelled():
    import ast

    from syncadvisor.model.builder import build_model

    text = textwrap.dedent(SHIM)
    model = build_model(ast.parse(text), "pkg/tfk.py", "pkg.tfk", tfapi.prefix_rewrites(True),
                        text)
    assert model.star_imports == ("tf_keras", "keras")
    assert model.exports["v1"] == "tf_keras.api._v1.keras"
    assert model.exports["tf"] == "tensorflow"


def test_a_package_init_exports_what_it_imports_from_its_submodules():
    """`from .layers import Dense` in `pkg/__init__.py` re-exports `pkg.layers.Dense`; a
    class the `__init__` defines itself is its own, not an export."""
    import ast

    from syncadvisor.model.builder import build_model

    text = "from .layers import Dense\nfrom . import layers as L\nclass Own:\n    pass\n"
    model = build_model(ast.parse(text), "pkg/__init__.py", "pkg", tfapi.prefix_rewrites(True),
                        text)
    assert model.exports == {"Dense": "pkg.layers.Dense", "L": "pkg.layers"}


def test_a_base_reached_through_a_package_reexport_is_the_class_it_reexports(tmp_path):
    linked = _link(tmp_path, {
        "pkg/__init__.py": "from .base import Base\n",
        "pkg/base.py": "import tf_keras\nclass Base(tf_keras.layers.Layer):\n    pass\n",
        "pkg/use.py": "import pkg\nclass Acc(pkg.Base):\n"
                      "    def build(self, s):\n        self.t = self.add_weight('t', ())\n",
    })
    assert [s.api for s in linked["use.py"].sites] == [tfapi.KERAS2_LAYER_ADD_WEIGHT]


def test_the_rules_see_layers_derived_through_a_shim(tmp_path):
    """End to end: the whole run follows the shim (flake8, one file at a time, cannot: a
    file importing only the shim has no Keras base it can see)."""
    from syncadvisor.config import Settings
    from syncadvisor.engine import Run

    _link(tmp_path, {"pkg/__init__.py": "", "pkg/tfk.py": SHIM, "pkg/layers.py": """
        import tensorflow as tf
        from pkg import tfk
        class Normalised(tfk.layers.Layer):
            def build(self, input_shape):
                self.g = self.add_weight("g", (input_shape[-1],), initializer="ones")
                self.seen = self.add_weight("seen", (), trainable=True,
                                            synchronization=tf.VariableSynchronization.ON_READ,
                                            aggregation=tf.VariableAggregation.SUM)
            def call(self, inputs):
                self.g.assign(tf.reduce_mean(inputs, axis=0))
                return inputs * self.g
    """})
    run = Run(Settings(root=str(tmp_path)))
    for path in sorted(tmp_path.rglob("*.py")):
        run.add_file(str(path))
    found = {(f.line, f.code, f.severity) for f in run.check().findings}
    assert found == {(6, "TFS201", "warning"), (7, "TFS102", "error")}


def _models(modules: Dict[str, str]):
    import ast

    from syncadvisor.engine.analyze import rewrites_for
    from syncadvisor.config import Settings
    from syncadvisor.model.builder import build_model

    return [build_model(ast.parse(textwrap.dedent(text)), f"{name}.py", name,
                        rewrites_for(Settings()), textwrap.dedent(text))
            for name, text in modules.items()]


LAYER_VIA = """
    import tensorflow as tf
    from pkg.compat import tfk
    from pkg import base, helpers
    class Counted(tfk.layers.Layer):
        def call(self, x):
            return x
    class Plain(base.Thing):  # neither runs per replica nor makes a variable
        def describe(self):
            return helpers.Name()
    class Child(Parent):
        def build(self, shape):
            self.v = tf.Variable(0.0)
    class Parent(base.Layer):
        pass
"""


def test_modules_reached_are_those_names_of_keras_classes_lead_into():
    models = _models({"pkg.layers": LAYER_VIA})
    unmodelled = {"pkg.compat", "pkg.base", "pkg.helpers", "pkg.other"}
    # compat.tfk: Counted's base (it has `call`); base.Layer: the base of Child's
    # ancestor (Child makes a variable). Not base.Thing's: Plain is nothing Keras runs,
    # nor helpers.Name: no method-style creation in the file needs what it makes.
    index = index_of(models)
    assert modules_reached(index, unmodelled, followed_names(index, models)) == {
        "pkg.compat", "pkg.base"}
    assert modules_reached(index, set(), followed_names(index, models)) == set()


def test_modules_reached_through_modelled_alias_modules():
    models = _models({"pkg.layers": LAYER_VIA, "pkg.compat": "from pkg.keras2 import tfk\n",
                      "pkg.base": "from tf_keras.layers import Layer\n"})
    index = index_of(models)
    assert modules_reached(index, {"pkg.keras2", "pkg.helpers"},
                           followed_names(index, models)) == {"pkg.keras2"}
    assert Project(models).index.external_name("pkg.base.Layer") == "tf_keras.layers.Layer"


def test_a_project_class_in_a_module_the_prefilter_drops(tmp_path):
    """Its base is Keras's; nothing in its module is a prefilter word. The whole run
    models it on the second pass, so the subclass's `call` runs per replica."""
    from syncadvisor.config import Settings
    from syncadvisor.engine import Run

    _link(tmp_path, {"pkg/__init__.py": "", "pkg/base.py": """
        import tf_keras
        class Base(tf_keras.layers.Layer):
            pass
    """, "pkg/layer.py": """
        import tensorflow as tf
        from pkg.base import Base
        class Last(Base):
            def build(self, shape):
                self.last = tf.Variable(tf.zeros(shape[-1:]), trainable=False)
            def call(self, x):
                self.last.assign(tf.reduce_mean(x, axis=0))
                return x
    """})
    run = Run(Settings(root=str(tmp_path)))
    for path in sorted(tmp_path.rglob("*.py")):
        run.add_file(str(path))
    assert [(f.line, f.code) for f in run.check().findings] == [(6, "TFS201")]

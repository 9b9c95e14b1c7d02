"""TF_USE_LEGACY_KERAS set in the project's own code, before `tf.keras` is loaded, makes
`tf.keras` tf_keras (Keras 2) in that project whatever TensorFlow it targets: the run
models its files so, and claims about Keras 2 there rest on no guess. Set too late, in a
function nothing calls at import, or to "0", it changes nothing."""
from __future__ import annotations

import textwrap

import pytest

from syncadvisor.config import Settings
from syncadvisor.engine import Run
from syncadvisor.engine.legacy import sets_legacy_keras

SETS = {
    "before the import": """\
        import os
        os.environ["TF_USE_LEGACY_KERAS"] = "1"
        import tensorflow as tf
        """,
    "in a module-level if and try": """\
        import os
        try:
            if os.environ.get("KERAS_BACKEND", "tensorflow") == "tensorflow":
                os.environ["TF_USE_LEGACY_KERAS"] = "1"
        except Exception:
            pass
        """,
    "setdefault": """\
        import os
        os.environ.setdefault("TF_USE_LEGACY_KERAS", "True")
        """,
    "update with a dict, environ imported by name": """\
        from os import environ
        environ.update({"TF_USE_LEGACY_KERAS": "1"})
        """,
    "update with a keyword": """\
        import os
        os.environ.update(TF_USE_LEGACY_KERAS="1")
        """,
    "after import tensorflow, in a function called at import": """\
        import os
        import tensorflow as tf
        def _keras():
            os.environ["TF_USE_LEGACY_KERAS"] = "1"
            return tf.keras
        keras = _keras()
        """,
}

SETS.update({
    "after naming tf.keras, which loads nothing": """\
        import os
        import tensorflow as tf
        keras = tf.keras
        os.environ["TF_USE_LEGACY_KERAS"] = "1"
        """,
    "after from tensorflow import keras": """\
        import os
        from tensorflow import keras
        os.environ["TF_USE_LEGACY_KERAS"] = "1"
        """,
})

DOES_NOT = {
    "after tf.keras is loaded": """\
        import os
        import tensorflow as tf
        Model = tf.keras.Model
        os.environ["TF_USE_LEGACY_KERAS"] = "1"
        """,
    "after import tensorflow.keras": """\
        import os
        import tensorflow.keras
        os.environ["TF_USE_LEGACY_KERAS"] = "1"
        """,
    "after an attribute of a name bound to tf.keras": """\
        import os
        import tensorflow as tf
        keras = tf.keras
        Model = keras.Model
        os.environ["TF_USE_LEGACY_KERAS"] = "1"
        """,
    "after from tensorflow.keras import": """\
        import os
        from tensorflow.keras import layers
        os.environ["TF_USE_LEGACY_KERAS"] = "1"
        """,
    "to 0": """\
        import os
        os.environ["TF_USE_LEGACY_KERAS"] = "0"
        """,
    "in a function nothing calls": """\
        import os
        def legacy():
            os.environ["TF_USE_LEGACY_KERAS"] = "1"
        """,
    "in a function that loads tf.keras first": """\
        import os
        import tensorflow as tf
        def _keras():
            keras = tf.keras.layers
            os.environ["TF_USE_LEGACY_KERAS"] = "1"
            return keras
        keras = _keras()
        """,
    "only read": """\
        import os
        legacy = os.environ.get("TF_USE_LEGACY_KERAS") == "1"
        """,
}


@pytest.mark.parametrize("name", sorted(SETS))
def test_a_setting_before_tf_keras_loads_is_found(name):
    text = textwrap.dedent(SETS[name])
    line = sets_legacy_keras(text)
    assert line is not None and "TF_USE_LEGACY_KERAS" in text.splitlines()[line - 1]


@pytest.mark.parametrize("name", sorted(DOES_NOT))
def test_a_setting_that_cannot_change_tf_keras_is_not(name):
    assert sets_legacy_keras(textwrap.dedent(DOES_NOT[name])) is None


METRIC_OUTSIDE = textwrap.dedent("""\
    import tensorflow as tf
    strategy = tf.distribute.MirroredStrategy()
    metric = tf.keras.metrics.Mean()
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss="mse", metrics=[metric])
""")

BACKEND = 'import os\nos.environ["TF_USE_LEGACY_KERAS"] = "1"\n'


def run(tmp_path, requirements, files):
    project = tmp_path / "p"
    project.mkdir()
    if requirements is not None:
        (project / "requirements.txt").write_text(requirements)
    for name, text in files.items():
        (project / name).write_text(text)
    settings = Settings(root=str(tmp_path))
    checked = Run(settings)
    for name in files:
        checked.add_file(str(project / name))
    return checked


def codes(checked):
    return [(f.code, f.severity, f.line) for f in checked.check().findings]


@pytest.mark.parametrize("requirements", ["tensorflow>=2.16\n", "tensorflow\n", None])
def test_tf_keras_is_keras_2_in_the_project_that_sets_it(tmp_path, requirements):
    """A tf_keras metric made outside the scope raises in `compile`; under Keras 3 it
    runs. Whatever TensorFlow the project allows, its own setting makes it tf_keras."""
    checked = run(tmp_path, requirements, {"backend.py": BACKEND, "train.py": METRIC_OUTSIDE})
    assert codes(checked) == [("TFS108", "error", 3)]
    model = next(r.model for r in checked.analyze() if r.path.endswith("train.py"))
    assert model.legacy_keras is not None and model.legacy_keras.endswith("backend.py:2")


def test_without_the_setting_tf_keras_stays_keras_3(tmp_path):
    checked = run(tmp_path, "tensorflow>=2.16\n", {"train.py": METRIC_OUTSIDE})
    assert codes(checked) == []


def test_a_project_already_on_keras_2_is_marked_not_modelled_again(tmp_path):
    checked = run(tmp_path, "tensorflow<2.16\n", {"backend.py": BACKEND,
                                                  "train.py": METRIC_OUTSIDE})
    assert codes(checked) == [("TFS108", "error", 3)]
    model = next(r.model for r in checked.analyze() if r.path.endswith("train.py"))
    assert model.legacy_keras is not None


def test_a_config_that_sets_keras_wins(tmp_path):
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "pyproject.toml").write_text(
        '[project]\nname = "p"\ndependencies = ["tensorflow>=2.16"]\n'
        '[tool.syncadvisor]\nkeras = "3"\n')
    project = tmp_path / "p"
    (project / "backend.py").write_text(BACKEND)
    (project / "train.py").write_text(METRIC_OUTSIDE)
    from syncadvisor.config import load_settings
    settings = load_settings(start=str(project))
    checked = Run(settings)
    checked.add_file(str(project / "backend.py"))
    checked.add_file(str(project / "train.py"))
    assert codes(checked) == []


def test_a_run_of_one_file_sees_the_setting_in_its_package_on_disk(tmp_path):
    """flake8 and a pre-commit hook check some files of a project: the setting in another
    module of the same top-level package counts as it does in a run of the whole."""
    package = tmp_path / "pkg"
    (package / "models").mkdir(parents=True)
    (tmp_path / "requirements.txt").write_text("tensorflow>=2.16\n")
    (package / "__init__.py").write_text("from . import backend\n")
    (package / "backend.py").write_text(BACKEND)
    (package / "models" / "__init__.py").write_text("")
    (package / "models" / "train.py").write_text(METRIC_OUTSIDE)
    checked = Run(Settings(root=str(tmp_path)))
    checked.add_file(str(package / "models" / "train.py"))
    assert codes(checked) == [("TFS108", "error", 3)]
    whole = Run(Settings(root=str(tmp_path)))
    for path in (package / "backend.py", package / "models" / "train.py"):
        whole.add_file(str(path))
    assert codes(whole) == [("TFS108", "error", 3)]


def test_a_module_in_no_package_sees_only_its_siblings(tmp_path):
    (tmp_path / "scripts").mkdir()
    (tmp_path / "tools").mkdir()
    (tmp_path / "requirements.txt").write_text("tensorflow>=2.16\n")
    (tmp_path / "tools" / "backend.py").write_text(BACKEND)
    (tmp_path / "scripts" / "train.py").write_text(METRIC_OUTSIDE)
    checked = Run(Settings(root=str(tmp_path)))
    checked.add_file(str(tmp_path / "scripts" / "train.py"))
    checked.add_file(str(tmp_path / "tools" / "backend.py"))
    assert codes(checked) == []

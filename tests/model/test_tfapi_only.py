"""TensorFlow and Keras knowledge lives in `model/tfapi/` alone.

Rule, model and profiler code name enum members and TensorFlow/Keras modules through
tfapi's constants and tables, never as bare strings: a string constant that is exactly
an enum member's name, a TensorFlow/Keras module, or starts with one's prefix fails this
test. Messages (f-strings), docstrings and the rules' VALID/INVALID example code may
spell them as users write them.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator, List, Set, Tuple

import pytest

from tests.paths import REPO

PACKAGE = REPO / "syncadvisor"
SCANNED = ("rules", "model", "profile")
# The one place for TensorFlow/Keras names: every module of this folder.
TFAPI = "model/tfapi/"
EXCLUDED = {
    # It asks whether the module `tensorflow` can be imported before it imports the
    # profiler's measurement, and writes TensorFlow's version as the report's
    # "tensorflow" field (JSON that report.py and plot.py read).
    "profile/cli.py": "imports TensorFlow by name and writes the report's `tensorflow` field",
    "profile/program_cli.py": "writes the `--run` report's `tensorflow` field",
}

MEMBER_NAMES = frozenset({"AUTO", "NONE", "ON_WRITE", "ON_READ", "SUM", "MEAN",
                          "ONLY_FIRST_REPLICA", "ONLY_FIRST_TOWER"})
MODULES = frozenset({"tensorflow", "keras", "tf_keras"})
PREFIXES = ("tensorflow.", "keras.", "tf_keras.", "tf.")
EXAMPLE_NAMES = frozenset({"VALID", "INVALID"})


def forbidden(text: str) -> bool:
    return text in MEMBER_NAMES or text in MODULES or text.startswith(PREFIXES)


def _docstring(node: ast.AST) -> List[ast.AST]:
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and \
            isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        return [body[0].value]
    return []


def _exempt_roots(tree: ast.Module) -> List[ast.AST]:
    """Subtrees whose strings may spell TensorFlow names: docstrings, f-strings (messages)
    and the value of a `VALID = ...`/`INVALID = ...` assignment (example code)."""
    roots: List[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            roots.extend(_docstring(node))
        elif isinstance(node, ast.JoinedStr):
            roots.append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is not None and any(
                    isinstance(t, ast.Name) and t.id in EXAMPLE_NAMES for t in targets):
                roots.append(node.value)
    return roots


def violations(source: str) -> List[Tuple[int, str]]:
    """(line, string) of every forbidden string constant outside the exempt places."""
    tree = ast.parse(source)
    exempt: Set[int] = set()
    for root in _exempt_roots(tree):
        exempt.update(id(n) for n in ast.walk(root))
    return sorted((node.lineno, node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and id(node) not in exempt and forbidden(node.value))


def _modules() -> Iterator[Path]:
    for folder in SCANNED:
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            relative = path.relative_to(PACKAGE).as_posix()
            if relative not in EXCLUDED and not relative.startswith(TFAPI):
                yield path


def test_the_scan_covers_the_packages():
    scanned = {p.relative_to(PACKAGE).as_posix() for p in _modules()}
    assert "rules/base.py" in scanned and "model/builder/walk.py" in scanned
    assert "profile/plan.py" in scanned and "profile/advice.py" in scanned
    for excluded in EXCLUDED:
        # An exclusion that is no longer needed goes: the file is scanned like the rest.
        assert violations((PACKAGE / excluded).read_text(encoding="utf-8")), \
            f"{excluded} is clean: take it out of EXCLUDED"


@pytest.mark.parametrize("path", list(_modules()),
                         ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_tensorflow_names_outside_tfapi(path):
    found = violations(path.read_text(encoding="utf-8"))
    assert not found, (f"{path.relative_to(PACKAGE)}: name these through model/tfapi/: "
                       + ", ".join(f"line {line}: {text!r}" for line, text in found))


# --- the scanner itself ------------------------------------------------------------------

PLANTED = '''\
"""A docstring may say "ON_READ" and tensorflow.Variable."""
FACTORIES = {"tensorflow.zeros", "numpy.zeros"}


class Rule:
    """So may a class's: "keras."."""

    VALID = ["import tensorflow as tf\\ntf.Variable(0)\\n", "ON_READ"]
    INVALID = [("tf_keras.metrics.Mean", "SUM")]

    def check(self, site):
        """And a function's: "NONE"."""
        message = f"use tf.VariableSynchronization.ON_READ, not {site} in keras."
        if site.sync.member != "ON_READ" and site.api.family.startswith("keras."):
            return message + "tf.Variable is plain text here"
        return site.module == "tf_keras" or site.agg.member in ("SUM", "MEAN")
'''


def test_the_scanner_finds_planted_names():
    assert violations(PLANTED) == [
        (2, "tensorflow.zeros"),
        (14, "ON_READ"),
        (14, "keras."),
        (15, "tf.Variable is plain text here"),
        (16, "MEAN"),
        (16, "SUM"),
        (16, "tf_keras"),
    ]


def test_the_scanner_spares_messages_docstrings_and_examples():
    clean = PLANTED.replace('"tensorflow.zeros", ', "").split("    def check")[0]
    assert violations(clean) == []
    assert violations('x = f"{a} ON_READ"\ny = "on_read"\nz = "AUTOGRAPH"\n') == []


@pytest.mark.parametrize("text", ["AUTO", "NONE", "ON_WRITE", "ON_READ", "SUM", "MEAN",
                                  "ONLY_FIRST_REPLICA", "tensorflow", "keras", "tf_keras",
                                  "tensorflow.constant", "keras.ops.zeros", "tf_keras.metrics.",
                                  "tf.Variable"])
def test_each_kind_of_name_is_caught(text):
    assert forbidden(text)
    assert violations(f"x = {text!r}\n") == [(1, text)]


@pytest.mark.parametrize("text", ["auto", "on_read", "tfa.x", "kerasy", "numpy.zeros",
                                  "Keras 3", "tf", "float32", "AUTOS"])
def test_other_strings_pass(text):
    assert not forbidden(text)

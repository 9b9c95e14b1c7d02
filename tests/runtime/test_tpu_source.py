"""TFS108's TPU exemption, checked against TensorFlow's source (there is no TPU here).

TFS108 makes no "Mixing different tf.distribute.Strategy objects" claim for a
replica-context assign of a TPU variable (ON_READ, or aggregation NONE) inside another
TPUStrategy's `run`. The reason, as the rule's docstring states it: in
tensorflow/python/distribute/tpu_values.py, `TPUMirroredVariable.assign*` inside a TPU
context with aggregation NONE, and `TPUSyncOnReadVariable.assign*` inside a TPU context,
call `tpu_util.make_raw_assign_fn(...)` on the handle and never `var._update`, the path
that runs `distribute_lib.enter_or_assert_strategy` (which raises the "Mixing" error).
These tests read that source with `ast`, without importing TensorFlow, and fail if the
code path is not as stated. Skipped without TensorFlow unless SYNCADVISOR_REQUIRE_TF=1.
"""

from __future__ import annotations

import ast
import importlib.util
import os
from pathlib import Path

import pytest

from syncadvisor.rules.tfs108_created_outside_strategy_scope import CreatedOutsideStrategyScope

ASSIGNS = ("assign", "assign_add", "assign_sub")


def _distribute_dir() -> Path:
    spec = importlib.util.find_spec("tensorflow")  # locates the package; imports nothing
    if spec is None or not spec.submodule_search_locations:
        if os.environ.get("SYNCADVISOR_REQUIRE_TF") == "1":
            pytest.fail("SYNCADVISOR_REQUIRE_TF=1 but tensorflow is not installed", pytrace=False)
        pytest.skip("tensorflow is not installed")
    return Path(list(spec.submodule_search_locations)[0]) / "python" / "distribute"


def _module(name: str) -> ast.Module:
    return ast.parse((_distribute_dir() / name).read_text(encoding="utf-8"))


def _methods(module: ast.Module, cls: str) -> dict:
    for node in module.body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            return {f.name: f for f in node.body if isinstance(f, ast.FunctionDef)}
    raise AssertionError(f"no class {cls}")


def _function(module: ast.Module, name: str) -> ast.FunctionDef:
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise AssertionError(f"no function {name}")


def _calls(node: ast.AST) -> set:
    """Dotted names of everything called under `node`."""
    return {ast.unparse(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}


def _raw_branch(method: ast.FunctionDef) -> ast.If:
    """The `if` whose body returns `tpu_util.make_raw_assign_fn(...)(self, ...)` (or its else)."""
    for node in ast.walk(method):
        if isinstance(node, ast.If):
            for branch in (node.body, node.orelse):
                if branch and isinstance(branch[0], ast.Return) and \
                        "tpu_util.make_raw_assign_fn" in _calls(branch[0]):
                    return node
    raise AssertionError(f"{method.name}: no branch that returns a raw assign")


@pytest.mark.parametrize("method", ASSIGNS)
def test_tpu_mirrored_assign_is_raw_in_tpu_context_with_aggregation_none(method):
    fn = _methods(_module("tpu_values.py"), "TPUMirroredVariable")[method]
    branch = _raw_branch(fn)
    test = ast.unparse(branch.test)
    # `tpu_context = tpu_util.enclosing_tpu_context()` first, or the call in the test
    in_tpu = {ast.unparse(t) for n in ast.walk(fn) if isinstance(n, ast.Assign)
              and ast.unparse(n.value) == "tpu_util.enclosing_tpu_context()" for t in n.targets}
    assert any(name in test for name in in_tpu | {"enclosing_tpu_context()"}), test
    assert "self.aggregation == variable_scope.VariableAggregation.NONE" in test, test
    taken = ast.Module(body=branch.body, type_ignores=[])
    assert not {c for c in _calls(taken) if c.endswith("_update")}, ast.unparse(taken)


@pytest.mark.parametrize("method", ASSIGNS)
def test_tpu_sync_on_read_assign_is_raw_in_tpu_context(method):
    fn = _methods(_module("tpu_values.py"), "TPUSyncOnReadVariable")[method]
    branch = _raw_branch(fn)
    assert ast.unparse(branch.test) == "tpu_util.enclosing_tpu_context() is None"
    assert "tpu_util.make_raw_assign_fn" in _calls(ast.Module(body=branch.orelse, type_ignores=[]))


def test_raw_assign_never_checks_the_strategy():
    fn = _function(_module("tpu_util.py"), "make_raw_assign_fn")
    calls = _calls(fn)
    assert "raw_assign_fn" in calls
    assert not {c for c in calls if "strategy" in c or c.endswith("_update")}, calls


def test_the_skipped_path_is_the_one_that_raises_mixing():
    update = _methods(_module("values.py"), "DistributedVariable")["_update"]
    assert "distribute_lib.enter_or_assert_strategy" in _calls(update)
    assert_strategy = _function(_module("distribute_lib.py"), "_assert_strategy")
    assert "Mixing different tf.distribute.Strategy objects" in ast.unparse(assert_strategy)


def test_the_rule_names_the_file_and_functions():
    doc = CreatedOutsideStrategyScope.documentation()
    for name in ("tpu_values.py", "TPUMirroredVariable.assign", "TPUSyncOnReadVariable.assign",
                 "make_raw_assign_fn", "enter_or_assert_strategy"):
        assert name in doc, name

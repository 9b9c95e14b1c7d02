"""`TF_USE_LEGACY_KERAS`: where a project sets it in `os.environ` before `tf.keras` is
loaded, `tf.keras` is Keras 2 (tf_keras) in that project whatever TensorFlow it targets
(tfapi.LEGACY_KERAS_VARIABLE). No declaration says so; the code does.

`sets_legacy_keras(text)` finds such a statement in a module: one that runs when the
module is imported (at module level, in its `if`, `try` and `with` blocks, or in the body
of a module-level function a module-level statement calls: tfmot's
`keras = _get_keras_instance()`), setting the variable to one of
tfapi.LEGACY_KERAS_VALUES, before the module loads `tf.keras`. `tf.keras` is a lazy
loader (TF 2.21, observed): `import tensorflow`, `tf.keras` itself, `k = tf.keras` and
`from tensorflow import keras` load nothing; the first attribute read on it
(`tf.keras.layers`, `k.Model`), `import tensorflow.keras` and
`from tensorflow.keras import ...` load it, and a later setting changes nothing.

A setting counts for the modules of its scope (`scope_of`): the whole top-level package
of a module in a package (importing any of its modules runs the package's `__init__`
files, which import the rest as they please: which runs first is not known, so one
module that sets it counts for all of them), or, for a module in no package, the modules
beside it. The scope is read from disk, the same whether a run checks a whole project or
one file of it (flake8, a pre-commit hook given the changed files): `Run._legacy_keras`
then models the run's files of that scope with `tf.keras` as Keras 2.
"""
from __future__ import annotations

import ast
import os
import stat
from typing import Dict, Iterator, List, Optional, Set, Tuple

from ..model import tfapi

WORD = tfapi.LEGACY_KERAS_VARIABLE.encode("ascii")


def scope_of(path: str) -> Tuple[str, bool]:
    """(folder, whether below it too): the modules whose setting counts for `path` -- its
    top-level package's folder, all of it; for a module in no package, its own folder's
    modules only (a script's siblings, never a whole home directory)."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isfile(os.path.join(folder, "__init__.py")):
        return folder, False
    while os.path.isfile(os.path.join(os.path.dirname(folder), "__init__.py")):
        folder = os.path.dirname(folder)
    return folder, True


def scope_files(folder: str, below: bool) -> Iterator[str]:
    """The Python modules of a scope, in a stable order (hidden folders and caches left
    out; folder links not followed, so a link loop ends): regular files only, since
    reading a FIFO named `x.py` would block for ever."""
    if not below:
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            return
        yield from (path for path in (os.path.join(folder, n) for n in names
                                      if n.endswith(".py")) if _regular(path))
        return
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        yield from (path for path in (os.path.join(root, n) for n in sorted(files)
                                      if n.endswith(".py")) if _regular(path))


def _regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):  # dangling, a link to itself, a name the OS refuses
        return False


class _Names:
    """What names stand for, as the statements run: `os`, `os.environ`, `tensorflow`, and
    the not yet loaded `tf.keras` loader."""

    def __init__(self, other: Optional["_Names"] = None):
        self.modules: Set[str] = set(other.modules) if other else set()
        self.environs: Set[str] = set(other.environs) if other else set()
        self.tensorflow: Set[str] = set(other.tensorflow) if other else set()
        self.loaders: Set[str] = set(other.loaders) if other else set()


def sets_legacy_keras(text: str) -> Optional[int]:
    """The line of the first statement run at import that sets the variable to a value
    that makes `tf.keras` Keras 2, before anything in the module loads `tf.keras`; None
    where there is none."""
    if tfapi.LEGACY_KERAS_VARIABLE not in text:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names = _Names()
    functions: Dict[str, ast.FunctionDef] = {}  # module-level functions, by name
    for statement in _module_level(tree.body, functions):
        for called in _called(statement, functions):
            verdict = _runs(called.body, _Names(names))  # its imports are its own
            if verdict is not None:
                return verdict or None
        verdict = _runs([statement], names)
        if verdict is not None:
            return verdict or None
    return None


def _runs(statements: List[ast.stmt], names: _Names) -> Optional[int]:
    """The line of the statement that sets the variable where `statements`, run in order
    (what they bind noted in `names`), set it before they load `tf.keras`; 0 where they
    load it first; None: neither."""
    for statement in _module_level(statements, {}):
        loaded = _imports(statement, names)
        if loaded is False:
            return 0
        if loaded:
            continue
        if _sets(statement, names):
            return statement.lineno
        if _loads_tf_keras(statement, names):
            return 0
        _binds_loader(statement, names)
    return None


def _imports(statement: ast.stmt, names: _Names) -> Optional[bool]:
    """For an import: the names it binds noted, and True; False where it loads
    `tf.keras` itself. None for any other statement."""
    prefix = tfapi.TENSORFLOW_MODULE + ".keras"
    if isinstance(statement, ast.Import):
        for alias in statement.names:
            local = alias.asname or alias.name.split(".")[0]
            if alias.name == tfapi.ENVIRON_MODULE:
                names.modules.add(local)
            elif alias.name == prefix or alias.name.startswith(prefix + "."):
                return False
            elif alias.name.split(".")[0] == tfapi.TENSORFLOW_MODULE:
                names.tensorflow.add(local)
        return True
    if isinstance(statement, ast.ImportFrom):
        module = statement.module or ""
        if statement.level:
            return True
        if module == tfapi.ENVIRON_MODULE:
            names.environs.update(a.asname or a.name for a in statement.names
                                  if a.name == tfapi.ENVIRON_NAME)
        elif module == prefix or module.startswith(prefix + "."):
            return False
        elif module == tfapi.TENSORFLOW_MODULE:
            names.loaders.update(a.asname or a.name for a in statement.names
                                 if a.name == "keras")
        return True
    return None


def _called(statement: ast.stmt, functions: Dict[str, ast.FunctionDef]
            ) -> List[ast.FunctionDef]:
    """The module-level functions a statement calls by name, in source order."""
    calls = [node for node in ast.walk(statement) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Name) and node.func.id in functions]
    calls.sort(key=lambda node: (node.lineno, node.col_offset))
    return [functions[node.func.id] for node in calls]  # type: ignore[attr-defined]


def _module_level(body: List[ast.stmt], functions: Dict[str, ast.FunctionDef]
                  ) -> Iterator[ast.stmt]:
    """The statements that run when the module is imported, in order: blocks of `if`,
    `try` and `with` included; a function is noted in `functions` (it runs where it is
    called), a class's body is not read."""
    for statement in body:
        if isinstance(statement, (ast.If, ast.Try, ast.With)):
            yield from _module_level(statement.body, functions)
            for handler in getattr(statement, "handlers", ()):
                yield from _module_level(handler.body, functions)
            yield from _module_level(getattr(statement, "orelse", []), functions)
            yield from _module_level(getattr(statement, "finalbody", []), functions)
        elif isinstance(statement, ast.FunctionDef):
            functions[statement.name] = statement
        elif not isinstance(statement, (ast.AsyncFunctionDef, ast.ClassDef)):
            yield statement


def _is_environ(node: ast.AST, names: _Names) -> bool:
    if isinstance(node, ast.Name):
        return node.id in names.environs
    return isinstance(node, ast.Attribute) and node.attr == tfapi.ENVIRON_NAME and \
        isinstance(node.value, ast.Name) and node.value.id in names.modules


def _legacy(key: ast.AST, value: ast.AST) -> bool:
    return isinstance(key, ast.Constant) and key.value == tfapi.LEGACY_KERAS_VARIABLE and \
        isinstance(value, ast.Constant) and value.value in tfapi.LEGACY_KERAS_VALUES


def _sets(statement: ast.stmt, names: _Names) -> bool:
    """`os.environ["TF_USE_LEGACY_KERAS"] = "1"`, `os.environ.setdefault(...)` or
    `os.environ.update(...)` with such a value."""
    if isinstance(statement, ast.Assign):
        return any(isinstance(t, ast.Subscript) and _is_environ(t.value, names)
                   and _legacy(t.slice, statement.value) for t in statement.targets)
    if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
        return False
    call = statement.value
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in tfapi.ENVIRON_SETTERS or \
            not _is_environ(func.value, names):
        return False
    if func.attr == "setdefault":
        return len(call.args) == 2 and _legacy(call.args[0], call.args[1])
    pairs: List[Tuple[ast.expr, ast.expr]] = [
        (ast.Constant(k.arg), k.value) for k in call.keywords if k.arg is not None]
    for argument in call.args:
        if isinstance(argument, ast.Dict):
            pairs += [(k, v) for k, v in zip(argument.keys, argument.values) if k is not None]
    return any(_legacy(k, v) for k, v in pairs)


def _is_loader(node: ast.AST, names: _Names) -> bool:
    """`tf.keras`, or a name bound to it: the lazy loader, not loaded by being named."""
    if isinstance(node, ast.Name):
        return node.id in names.loaders
    return isinstance(node, ast.Attribute) and node.attr == "keras" and \
        isinstance(node.value, ast.Name) and node.value.id in names.tensorflow


def _loads_tf_keras(statement: ast.stmt, names: _Names) -> bool:
    """Whether a statement reads an attribute of the `tf.keras` loader, which loads it."""
    return any(isinstance(node, ast.Attribute) and _is_loader(node.value, names)
               for node in ast.walk(statement))


def _binds_loader(statement: ast.stmt, names: _Names) -> None:
    """`keras = tf.keras`: the name is the loader too."""
    if isinstance(statement, ast.Assign) and _is_loader(statement.value, names):
        names.loaders.update(t.id for t in statement.targets if isinstance(t, ast.Name))

"""The profiler's modules import one another without a circle (no TensorFlow).

Every import counts, at the top of a module or inside a function: a lazy import that
closes a circle still ties the modules together, and makes the order they load in matter.
"""
from __future__ import annotations

import ast
from typing import Dict, List, Set

from tests.paths import REPO

PACKAGE = REPO / "syncadvisor" / "profile"


def imports_of(source: str) -> Set[str]:
    """The profile modules a module's source imports, by their names in the package."""
    found: Set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 1:
                if module:
                    found.add(module.split(".")[0])
                else:  # from . import a, b
                    found.update(alias.name for alias in node.names)
            elif node.level == 0 and module.startswith("syncadvisor.profile."):
                found.add(module.split(".")[2])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("syncadvisor.profile."):
                    found.add(alias.name.split(".")[2])
    return found


def graph() -> Dict[str, Set[str]]:
    modules = {p.stem: p for p in PACKAGE.glob("*.py")}
    return {name: imports_of(path.read_text(encoding="utf-8")) & set(modules)
            for name, path in modules.items()}


def circles(edges: Dict[str, Set[str]]) -> List[List[str]]:
    """Every circle found by a depth-first walk, each as the path that closes it."""
    found: List[List[str]] = []
    state: Dict[str, int] = {}  # 1: on the walk's path, 2: finished

    def walk(node: str, path: List[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                found.append(path[path.index(nxt):] + [node, nxt] if nxt in path
                             else [node, nxt])
            elif nxt not in state:
                walk(nxt, path + [node])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            walk(node, [])
    return found


def test_the_reader_sees_lazy_and_package_imports():
    source = ("from . import runs\nfrom .plan import x\n"
              "def f():\n    from .report import y\n    import syncadvisor.profile.plot\n")
    assert imports_of(source) == {"runs", "plan", "report", "plot"}
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_in_profile():
    edges = graph()
    assert "cli" in edges and "program_cli" in edges
    assert circles(edges) == []

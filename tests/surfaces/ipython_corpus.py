"""Make the corpus of notebook cells that the IPython differential test reads.

    python -m tests.surfaces.ipython_corpus            # downloads sdists from PyPI, writes
                                                       # tests/fixtures/notebooks/ipython_cells.json

The cells come from the sdists in `SDISTS` (fetched with `pip download --no-deps
--no-binary NAME`): every code cell of every `.ipynb` they ship, and every string
(and list of strings, joined) written in IPython's own tests of its input transformers
(`test_inputtransformer2*.py`: their inputs, and their expected outputs, which are
cells too). The file records each package's version and where each cell came from, so
the test runs offline and a failure names its source. Cells are kept once each, and
only those up to `MAX_CELL` characters, to keep the file small.
"""
from __future__ import annotations

import argparse
import ast
import io
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

from tests import paths

CORPUS = paths.FIXTURES / "notebooks" / "ipython_cells.json"
SDISTS = ["ipython==9.19.1", "ipython==8.12.3", "jupytext==1.19.7", "nbformat==5.11.1",
          "nbconvert==7.17.2", "nbclient==0.11.0", "papermill==2.7.0", "nbval==0.11.0",
          "nbqa==1.9.1", "nbmake==1.5.5", "nbsphinx==0.9.8", "nbstripout==0.9.1",
          "ipywidgets==8.1.9"]
MAX_CELL = 4000
_TRANSFORMER_TESTS = re.compile(r"(^|/)test_inputtransformer2\w*\.py$")


def _download(spec: str, folder: Path) -> Path:
    name = spec.split("==")[0]
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                    "--no-binary", name, "--dest", str(folder), spec], check=True)
    version = spec.split("==")[1]
    found = [p for p in folder.iterdir()
             if p.name.lower().replace("_", "-").startswith(f"{name}-{version}".lower())
             and p.name.endswith(".tar.gz")]
    if not found:
        raise SystemExit(f"no sdist of {spec} in {folder}")
    return found[0]


def _strings(tree: ast.AST) -> Iterator[str]:
    """Each string written in a test module, and each list/tuple of strings joined."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value
        elif isinstance(node, (ast.List, ast.Tuple)) and node.elts and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
            yield "".join(e.value for e in node.elts)  # type: ignore[attr-defined]


def _notebook_cells(data: bytes) -> Iterator[str]:
    try:
        notebook = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):  # nbformat 3 kept them in worksheets
        cells = [c for w in notebook.get("worksheets", []) if isinstance(w, dict)
                 for c in w.get("cells", [])] if isinstance(notebook, dict) else []
    for cell in cells:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", cell.get("input", ""))
            if isinstance(source, list):
                source = "".join(s for s in source if isinstance(s, str))
            if isinstance(source, str):
                yield source


def harvest(sdist: Path) -> Iterator[Tuple[str, str]]:
    """(where, cell) for each cell of one sdist."""
    with tarfile.open(sdist) as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            handle = tar.extractfile(member)
            if handle is None:
                continue
            if member.name.endswith(".ipynb"):
                for cell in _notebook_cells(handle.read()):
                    yield member.name, cell
            elif _TRANSFORMER_TESTS.search(member.name):
                text = io.TextIOWrapper(handle, encoding="utf-8").read()
                for cell in _strings(ast.parse(text)):
                    yield member.name, cell


def build(folder: Path) -> Dict[str, object]:
    seen: Dict[str, str] = {}
    packages = []
    for spec in SDISTS:
        sdist = _download(spec, folder)
        count = 0
        for where, cell in harvest(sdist):
            if len(cell) <= MAX_CELL and cell not in seen:
                seen[cell] = where
                count += 1
        packages.append({"sdist": sdist.name, "cells": count})
    cells: List[Dict[str, str]] = [{"from": where, "cell": cell} for cell, where in seen.items()]
    return {
        "about": "Code cells for tests/surfaces/test_ipython_oracle.py, made by "
                 "`python -m tests.surfaces.ipython_corpus` from the PyPI sdists listed: "
                 "every code cell of their .ipynb files and every string of IPython's "
                 "test_inputtransformer2*.py, each kept once.",
        "packages": packages,
        "cells": cells,
    }


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--out", type=Path, default=CORPUS)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        corpus = build(Path(folder))
    args.out.write_text(json.dumps(corpus, indent=0, ensure_ascii=False) + "\n",
                        encoding="utf-8")
    print(f"{len(corpus['cells'])} cells -> {args.out}")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

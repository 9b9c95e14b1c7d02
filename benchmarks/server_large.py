"""The language server's edits on a large workspace: a copy of the benchmark corpus
(keras+tf_keras, about 1,500 files) as the workspace folder, one module opened and edited
as a user would, one didChange at a time, each timed from sending it to receiving the
publishDiagnostics of that version. Three kinds of edit, `--large-edits` each:

- **comment**: a comment line changed in `batch_normalization.py` (586 lines): nothing
  but positions moves;
- **finding**: `aggregation="mean"` added to, then taken from, the `moving_mean` weight
  of `batch_normalization.py`: a body edit that removes a TFS201 finding, then brings it
  back;
- **signature**: a keyword parameter added to, then taken from, `Layer.add_weight` in
  `layer.py` (2,070 lines), which every Keras layer of the workspace calls.

After each kind, the edited file's published diagnostics are compared with what `check`
reports for the same text (its findings, at the same lines and columns, with the same
codes and messages): an edit is only fast if it is also right.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable, Dict, List, Optional

from benchmarks.lsp_client import (LATENCY_TARGET_MS, Client, _env, _percentile,
                                   _progress_end, _published, _uri, corpus_workspace,
                                   server_argv)

BATCHNORM = "keras/keras/src/layers/normalization/batch_normalization.py"
LAYER = "keras/keras/src/layers/layer.py"


def _comment(text: str, n: int) -> str:
    lines = text.split("\n")
    return "\n".join(lines[:40] + [f"# an edit, number {n}"] + lines[40:])


def _finding(text: str, n: int) -> str:
    if n % 2 == 0:
        return text
    return text.replace('            name="moving_mean",\n',
                        '            name="moving_mean",\n            aggregation="mean",\n', 1)


def _signature(text: str, n: int) -> str:
    if n % 2 == 0:
        return text
    return text.replace("        overwrite_with_gradient=False,\n        name=None,",
                        "        overwrite_with_gradient=False,\n        name=None,\n"
                        "        extra=None,", 1)


KINDS: Dict[str, tuple] = {"comment": (BATCHNORM, _comment), "finding": (BATCHNORM, _finding),
                           "signature": (LAYER, _signature)}


def _cli_findings(folder: Path, rel: str, text: str, timeout: float) -> List[tuple]:
    """What `check` of the whole workspace reports in the file at `rel` with `text` (put
    there for the check, by a new file: the copy's files are hard links to the corpus)."""
    path = folder / rel
    original = path.read_text(encoding="utf-8")
    _write(path, text)
    try:
        top_dirs = sorted(p.name for p in folder.iterdir() if p.is_dir())
        argv = [sys.executable, "-m", "syncadvisor", "check", "--no-cache", "--format", "json",
                "--exit-zero", *top_dirs]
        done = subprocess.run(argv, cwd=folder, env=_env(), timeout=timeout, check=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    finally:
        _write(path, original)
    return sorted((f["line"], f["column"], f["code"], f["message"])
                  for f in json.loads(done.stdout) if f["path"] == rel)


def _write(path: Path, text: str) -> None:
    temp = path.with_name(path.name + ".new")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, path)


def _published_findings(params: dict) -> List[tuple]:
    return sorted((d["range"]["start"]["line"] + 1, d["range"]["start"]["character"] + 1,
                   d.get("code"), d["message"].split("\n")[0])
                  for d in params.get("diagnostics", []))


async def _kind(client: Client, folder: Path, name: str, edits: int, version: List[int],
                timeout: float, log) -> dict:
    rel, edit = KINDS[name]
    path = folder / rel
    uri = _uri(path)
    text = path.read_text(encoding="utf-8")
    await client.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "python", "version": version[0], "text": text}})
    i, _, _ = await client.wait(_published(uri, version[0]), 0, timeout)
    latencies: List[float] = []
    counts = set()
    params: dict = {}
    new = text
    for n in range(1, edits + 2):  # (the first, untimed: the open file's first edit)
        version[0] += 1
        new = edit(text, n)
        sent = await client.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version[0]},
            "contentChanges": [{"text": new}]})
        i, got, params = await client.wait(_published(uri, version[0]), i, timeout)
        counts.add(len(params.get("diagnostics", [])))
        if n > 1:
            latencies.append((got - sent) * 1000)
    served = _published_findings(params)
    checked = [(line, column, code, message.split("\n")[0])
               for line, column, code, message in _cli_findings(folder, rel, new, timeout)]
    await client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    log(f"  server: {name} edits of {rel}: p50 {statistics.median(latencies):.1f} ms")
    return {"file": rel, "lines": text.count("\n"), "edits": edits,
            "latencies_ms": latencies, "p50_ms": statistics.median(latencies),
            "p90_ms": _percentile(latencies, 0.9), "max_ms": max(latencies),
            "diagnostics": sorted(counts), "same_as_check": served == sorted(checked),
            "verdict": "PASS" if statistics.median(latencies) <= LATENCY_TARGET_MS and
            served == sorted(checked) else "FAIL"}


async def _large_edits(folder: Path, edits: int, jobs: Optional[int], timeout: float,
                       log) -> dict:
    client = Client(server_argv(jobs), folder)
    await client.start()
    try:
        await client.initialize(folder, timeout)
        await client.notify("initialized", {})
        await client.wait(_progress_end, 0, timeout)
        version = [0]
        kinds = {name: await _kind(client, folder, name, edits, version, timeout, log)
                 for name in KINDS}
    finally:
        await client.close()
    return {"status": "ok", "kinds": kinds}


def run_large_edits(corpus, edits: int, jobs: Optional[int], timeout: float,
                    log: Callable[[str], None]) -> dict:
    top_dirs = sorted({Path(f).parts[0] for f in corpus.files})
    with tempfile.TemporaryDirectory(prefix="syncadvisor-server-edits-") as scratch:
        folder = corpus_workspace(corpus.root, top_dirs, Path(scratch))
        try:
            result = asyncio.run(_large_edits(folder, edits, jobs, timeout, log))
        except Exception as exc:  # noqa: BLE001 - reported as the row's status
            return {"status": "error", "reason": str(exc)}
    result.update(label=corpus.label, files=len(corpus.files))
    return result


def format_large_edits(res: dict) -> List[str]:
    if res.get("status") != "ok":
        return [f"   edits on the corpus: {res.get('status')} ({res.get('reason')})"]
    lines = [f"   edit latency on {res['label']} ({res['files']:,} files) as one workspace, "
             f"didChange -> publishDiagnostics, {next(iter(res['kinds'].values()))['edits']} "
             f"edits of each kind one at a time (one before, untimed)"]
    for name, kind in res["kinds"].items():
        lines.append(f"      {name:<10} {kind['file'].rsplit('/', 1)[-1]} ({kind['lines']} lines): "
                     f"p50 {kind['p50_ms']:.1f} ms   p90 {kind['p90_ms']:.1f} ms   max "
                     f"{kind['max_ms']:.1f} ms   diagnostics {kind['diagnostics']}; the same "
                     f"as `check`: {'yes' if kind['same_as_check'] else 'NO'}")
    for name, kind in res["kinds"].items():
        lines.append(f"  [{kind['verdict']:<6}] {name} edit latency p50 <= "
                     f"{LATENCY_TARGET_MS:g} ms and findings as `check`'s: "
                     f"{kind['p50_ms']:.1f} ms")
    return lines

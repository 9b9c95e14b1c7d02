"""The tools the harness times, how each is invoked, and whether it can run here.

Every tool is run as a subprocess with ``cwd`` = the corpus root and the same
list of relative file paths appended to its command line.
"""

from __future__ import annotations

import importlib.metadata as md
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import HERE, VENVS_DIR, WORK_DIR

# The warm rows' cache lives here, not in whatever project root syncadvisor would pick.
CACHE_ENV = {"SYNCADVISOR_CACHE_DIR": str(WORK_DIR / "syncadvisor_cache")}

TORCHFIX_PIN = "torchfix==0.7.0"
FLAKE8_RUNNER = HERE / "flake8_runner.py"
PLUGIN_SHARE = HERE / "plugin_share.py"

ALL_TOOLS = ["syncadvisor-cold", "syncadvisor-warm", "ruff", "flake8", "flake8-tfs", "flake8-tfs-cold",
             "torchfix"]
TOOL_ALIASES = {
    "syncadvisor": ["syncadvisor-cold", "syncadvisor-warm"],
    "flake8-all": ["flake8", "flake8-tfs", "flake8-tfs-cold"],
}


@dataclass
class Tool:
    key: str
    label: str
    argv: list[str] = field(default_factory=list)  # the files are appended
    ok_returncodes: tuple[int, ...] = (0,)
    available: bool = True
    na_reason: str = ""
    prime: bool = False       # one untimed run before round 1 (fills the warm cache)
    expensive: bool = False   # no warm-up run; after a timeout, no further runs
    version: str = ""
    note: str = ""
    bad_stderr: tuple[str, ...] = ()  # a run whose stderr holds one of these is an error
    env: dict = field(default_factory=dict)  # extra environment variables for the run

    def display(self) -> str:
        env = "".join(f"{k}={v} " for k, v in self.env.items())
        return env + " ".join(_short(a) for a in self.argv) + " <files>"


def _short(arg: str) -> str:
    p = Path(arg)
    if p.is_absolute():
        try:
            return str(p.relative_to(Path.cwd()))
        except ValueError:
            return p.name if p.parent == Path(sys.executable).parent else arg
    return arg


def _which(name: str) -> str | None:
    """Prefer the executable next to this interpreter (the venv), then PATH."""
    return shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)


def _run(cmd: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    last = lines[-1] if lines else ""
    if "failed to load plugin" in last and " due to " in last:
        last = last.split(" due to ", 1)[1]
    return last[:200]


def source_fingerprint(package: str = "syncadvisor") -> str | None:
    """A short hash of the package's .py sources (an editable install changes under a running benchmark)."""
    import hashlib
    import importlib.util

    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    h = hashlib.sha1()
    for loc in spec.submodule_search_locations:
        base = Path(loc)
        for p in sorted(base.rglob("*.py")):
            try:
                st = p.stat()
                # size and mtime too: syncadvisor's cache key uses them, so a touched file counts as a change
                h.update(f"{p.relative_to(base)}:{st.st_size}:{st.st_mtime_ns}:".encode())
                h.update(p.read_bytes())
            except OSError:
                pass
    return h.hexdigest()[:12]


def syncadvisor_tools() -> list[Tool]:
    exe = _which("syncadvisor")
    if not exe:
        na = "syncadvisor is not installed"
        return [Tool("syncadvisor-cold", "syncadvisor cold", available=False, na_reason=na),
                Tool("syncadvisor-warm", "syncadvisor warm", available=False, na_reason=na)]
    version = _run([exe, "--version"]).stdout.strip()
    help_text = _run([exe, "check", "--help"]).stdout
    has_cache = "--no-cache" in help_text
    bad = ("no Python files found", "Traceback (most recent call last)")
    cold = Tool("syncadvisor-cold", "syncadvisor cold",
                [exe, "check", "--exit-zero"] + (["--no-cache"] if has_cache else []),
                version=version, bad_stderr=bad,
                note="" if has_cache else "no --no-cache flag yet: the engine has no cache, every run is cold")
    warm = Tool("syncadvisor-warm", "syncadvisor warm", [exe, "check", "--exit-zero"],
                prime=True, version=version, bad_stderr=bad, env=dict(CACHE_ENV))
    if not has_cache:
        warm.available = False
        warm.na_reason = "no cache yet (`syncadvisor check --help` has no --no-cache)"
    return [cold, warm]


def ruff_tool() -> Tool:
    exe = _which("ruff")
    if not exe:
        return Tool("ruff", "ruff --no-cache", available=False, na_reason="ruff is not installed")
    argv = [exe, "check", "--no-cache", "--isolated", "--no-respect-gitignore", "--exit-zero"]
    return Tool("ruff", "ruff --no-cache", argv,
                version=_run([exe, "--version"]).stdout.strip())


def _syncadvisor_flake8_entry_points() -> list[str]:
    try:
        dist = md.distribution("syncadvisor")
    except md.PackageNotFoundError:
        return []
    return [f"{ep.name} = {ep.value}" for ep in dist.entry_points if ep.group == "flake8.extension"]


def _plugin_has_no_cache_switch() -> bool:
    import importlib.util

    try:
        spec = importlib.util.find_spec("syncadvisor.flake8_plugin")
        return bool(spec and spec.origin and "SYNCADVISOR_NO_CACHE" in Path(spec.origin).read_text())
    except (ImportError, OSError, ValueError):
        return False


def flake8_tools(jobs: int = 2) -> list[Tool]:
    base = [sys.executable, str(FLAKE8_RUNNER)]
    opts = ["--", "--isolated", "-j", str(jobs), "--exit-zero"]
    plain = Tool("flake8", f"flake8 -j{jobs}", base + ["--without", "syncadvisor"] + opts)
    # The plugin shares syncadvisor's model cache: prime it like the warm CLI row.
    plugged = Tool("flake8-tfs", f"flake8 -j{jobs} + TFS", base + opts, prime=True,
                   bad_stderr=("Traceback (most recent call last)",), env=dict(CACHE_ENV))
    cold = Tool("flake8-tfs-cold", "flake8+TFS no-cache", base + opts,
                env={"SYNCADVISOR_NO_CACHE": "1"}, bad_stderr=plugged.bad_stderr,
                note="the TFS plugin with its model cache off (SYNCADVISOR_NO_CACHE=1)")
    r = _run(base + ["--without", "syncadvisor", "--", "--version"])
    if r.returncode != 0:
        reason = "flake8 does not run: " + (_last_line(r.stderr) or f"rc={r.returncode}")
        for t in (plain, plugged, cold):
            t.available, t.na_reason = False, reason
        return [plain, plugged, cold]
    plain.version = r.stdout.strip().replace("\n", " ")
    plain.note = "run through benchmarks/flake8_runner.py with the syncadvisor plugin left out"
    eps = _syncadvisor_flake8_entry_points()
    reason = ""
    if not eps:
        reason = "no TFS plugin registered (syncadvisor has no flake8.extension entry point)"
    else:
        r = _run(base + ["--", "--version"])
        out = r.stdout + r.stderr
        if r.returncode != 0:
            reason = f"TFS plugin ({eps[0]}) fails to load: {_last_line(r.stderr)}"
        elif "syncadvisor" not in out and "TFS" not in out:
            reason = "flake8 --version does not list the syncadvisor/TFS plugin"
        else:
            plugged.version = cold.version = r.stdout.strip().replace("\n", " ")
    if reason:
        for t in (plugged, cold):
            t.available, t.na_reason = False, reason
    elif not _plugin_has_no_cache_switch():
        plugged.prime = False
        plugged.note = "the plugin has no model cache (no SYNCADVISOR_NO_CACHE switch)"
        cold.available, cold.na_reason = False, "the plugin has no cache to turn off"
    return [plain, plugged, cold]


def _venv_bin(venv: Path, name: str) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin") / name


def ensure_torchfix(log=print) -> tuple[Path | None, str]:
    """TorchFix in its own venv (it pins libcst<1.6, so it cannot share ours). Returns (exe, reason)."""
    venv = VENVS_DIR / "torchfix"
    exe = _venv_bin(venv, "torchfix")
    stamp = venv / ".benchmarks-installed"
    if exe.exists() and stamp.is_file() and stamp.read_text() == TORCHFIX_PIN:
        return exe, ""
    log(f"[torchfix] creating {venv} and installing {TORCHFIX_PIN} (deps: flake8, PyYAML, libcst<1.6)")
    if venv.exists():
        shutil.rmtree(venv)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        py = str(_venv_bin(venv, "python"))
        subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", TORCHFIX_PIN],
                       check=True)
    except (subprocess.CalledProcessError, OSError) as e:
        return None, f"could not install {TORCHFIX_PIN}: {e}"
    r = _run([str(_venv_bin(venv, "python")), "-c", "import importlib.util as u; print(u.find_spec('torch') is None)"])
    if r.stdout.strip() != "True":
        log("[torchfix] warning: torch got installed into the TorchFix venv (not needed by the CLI)")
    stamp.write_text(TORCHFIX_PIN)
    return exe, ""


def torchfix_tool(install: bool = True, log=print) -> Tool:
    t = Tool("torchfix", "torchfix --select ALL", ok_returncodes=(0, 1), expensive=True,
             note="prefilters to files containing 'torch'; rc 1 = some files failed to transform")
    exe, reason = ensure_torchfix(log) if install else (None, "not installed")
    if exe is None:
        t.available, t.na_reason = False, reason
        return t
    t.argv = [str(exe), "--select", "ALL"]
    t.version = "torchfix " + _run([str(exe), "--version"]).stdout.strip()
    return t


def resolve_tool_keys(spec: str | None) -> list[str]:
    if not spec:
        return list(ALL_TOOLS)
    keys: list[str] = []
    for raw in spec.split(","):
        k = raw.strip().lower()
        if not k:
            continue
        expanded = TOOL_ALIASES.get(k, [k])
        for e in expanded:
            if e not in ALL_TOOLS:
                raise ValueError(f"unknown tool {raw!r}; choose from {', '.join(ALL_TOOLS + list(TOOL_ALIASES))}")
            if e not in keys:
                keys.append(e)
    return keys


def build_tools(keys: list[str], flake8_jobs: int = 2, log=print) -> list[Tool]:
    tools: dict[str, Tool] = {}
    if {"syncadvisor-cold", "syncadvisor-warm"} & set(keys):
        for t in syncadvisor_tools():
            tools[t.key] = t
    if "ruff" in keys:
        tools["ruff"] = ruff_tool()
    if {"flake8", "flake8-tfs", "flake8-tfs-cold"} & set(keys):
        for t in flake8_tools(flake8_jobs):
            tools[t.key] = t
    if "torchfix" in keys:
        tools["torchfix"] = torchfix_tool(log=log)
    return [tools[k] for k in ALL_TOOLS if k in keys]


def tool_info(tools: list[Tool]) -> dict:
    return {t.key: {"label": t.label, "command": t.display(), "argv": t.argv, "env": t.env,
                    "version": t.version,
                    "available": t.available, "na_reason": t.na_reason, "note": t.note}
            for t in tools}

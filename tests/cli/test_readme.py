"""README.md's sample outputs are this version's real output. Each sample is a marker
and a console block:

    <!-- sample: syncadvisor check --select TFS201 examples/train_mirrored.py -->
    ```console
    $ syncadvisor check --select TFS201 examples/train_mirrored.py
    ...the output...
    ```

The test runs each command from the repository's root, as a user would (no colour: not a
terminal), and compares. `SYNCADVISOR_REGENERATE=1` rewrites the blocks from what the
commands print (then read the diff before committing it), as for the golden files."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from typing import List, Tuple

from tests import paths

README = paths.REPO / "README.md"
SAMPLE = re.compile(r"^<!-- sample: (?P<command>.+?) -->\n```console\n(?P<block>.*?)^```$",
                    re.M | re.S)


def samples(text: str) -> List[Tuple[str, str]]:
    """(command, the block as README.md shows it) for each sample."""
    return [(m.group("command"), m.group("block")) for m in SAMPLE.finditer(text)]


def produce(command: str, cache: str) -> str:
    """The block `command` makes now: `$ command`, then what it prints."""
    words = shlex.split(command)
    assert words[0] == "syncadvisor", command
    env = dict(os.environ, PYTHONPATH=str(paths.REPO), NO_COLOR="1",
               SYNCADVISOR_CACHE_DIR=cache)
    env.pop("FORCE_COLOR", None)
    result = subprocess.run([sys.executable, "-m", "syncadvisor", *words[1:]], cwd=paths.REPO,
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode in (0, 1), (command, result.returncode, result.stderr[-2000:])
    return f"$ {command}\n{result.stdout}"


def test_readme_samples_are_real_output(tmp_path):
    text = README.read_text(encoding="utf-8")
    found = samples(text)
    assert len(found) >= 2
    produced = {command: produce(command, str(tmp_path)) for command, _ in found}
    if os.environ.get("SYNCADVISOR_REGENERATE") == "1":
        text = SAMPLE.sub(lambda m: f"<!-- sample: {m.group('command')} -->\n```console\n"
                                    f"{produced[m.group('command')]}```", text)
        README.write_text(text, encoding="utf-8")
        found = samples(text)
    for command, block in found:
        assert block == produced[command], (
            f"README.md's sample of `{command}` is not what it prints now: rerun with "
            "SYNCADVISOR_REGENERATE=1 and review the diff")
    assert any(" TFS201 warning: " in block for _, block in found)  # the full-format sample


def test_the_first_lines_are_the_two_newcomer_commands():
    lines = README.read_text(encoding="utf-8").splitlines()
    start = lines.index("```sh")
    assert lines[start + 1:start + 3] == [
        "pip install . && syncadvisor check examples/",
        "pip install '.[test]' && SYNCADVISOR_REQUIRE_TF=1 python -m pytest"]
    assert start < 10


def test_the_pre_commit_example_uses_one_hook():
    """With both hooks, every finding is printed twice."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## pre-commit"):text.index("\n## ", text.index("## pre-commit"))]
    example = section[section.index("```yaml"):section.index("```\n", section.index("```yaml") + 1)]
    assert len(re.findall(r"^\s+- id: ", example, re.M)) == 1, example

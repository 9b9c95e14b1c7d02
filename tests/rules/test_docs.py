"""The rule documentation is generated from the rules, never kept by hand.

docs/rules/ and README.md's rule table must be exactly what
`python -m syncadvisor.rules.docs --write` writes now; every failure says so.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from syncadvisor.rules import all_rules, docs
from tests import paths

RULES = all_rules()
PAGES = paths.REPO / docs.PAGES
REGENERATE = f"run `{docs.COMMAND}` and commit the result"


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.code)
def test_every_rule_page_is_what_the_generator_renders(rule):
    page = PAGES / f"{rule.code}.md"
    assert page.is_file(), f"{docs.PAGES / page.name} is missing: {REGENERATE}"
    assert page.read_text(encoding="utf-8") == docs.rule_page(rule), \
        f"{docs.PAGES / page.name} is out of date: {REGENERATE}"


def test_the_index_is_what_the_generator_renders():
    index = paths.REPO / docs.INDEX
    assert index.is_file() and index.read_text(encoding="utf-8") == docs.index_page(RULES), \
        f"{docs.INDEX} is out of date: {REGENERATE}"


def test_no_page_for_a_rule_that_does_not_exist():
    expected = {f"{rule.code}.md" for rule in RULES} | {docs.INDEX.name}
    extra = sorted(p.name for p in PAGES.iterdir() if p.name not in expected)
    assert not extra, (f"{docs.PAGES}/ holds {extra}, which no rule generates: {REGENERATE} "
                       f"(it removes the pages of codes no rule has; remove anything else)")


def test_readme_rule_table_is_what_syncadvisor_rules_prints():
    # `python -m` from the checkout's root runs this checkout's syncadvisor.
    result = subprocess.run([sys.executable, "-m", "syncadvisor", "rules", "--format", "markdown"],
                            cwd=paths.REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout == docs.rules_table(RULES)
    readme = (paths.REPO / docs.README).read_text(encoding="utf-8")
    assert docs.readme_table(readme) == result.stdout, \
        f"README.md's rule table is not `syncadvisor rules --format markdown`: {REGENERATE}"


def test_the_check_command_finds_every_generated_file_current():
    result = subprocess.run([sys.executable, "-m", "syncadvisor.rules.docs", "--check"],
                            cwd=paths.REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_write_brings_a_stale_checkout_up_to_date(tmp_path):
    readme = (paths.REPO / docs.README).read_text(encoding="utf-8")
    first = RULES[0]
    row = next(line for line in readme.splitlines() if line.startswith(f"| {first.code} |"))
    hand_kept = readme.replace(row, "| TFS000 | hand-written | x | x | x |")
    (tmp_path / docs.README).write_text(hand_kept, encoding="utf-8")
    pages = tmp_path / docs.PAGES
    pages.mkdir(parents=True)
    (pages / "TFS999.md").write_text("# TFS999 a rule that was removed\n")
    (pages / f"{first.code}.md").write_text("# edited by hand\n")
    (pages / "notes.txt").write_text("not a page: left alone\n")

    stale = docs.stale(tmp_path)
    assert "README.md: out of date" in stale
    assert f"{docs.PAGES / first.code}.md: out of date" in stale
    assert f"{docs.PAGES / 'TFS999.md'}: a page for a rule that does not exist" in stale
    assert docs.main(["--check", "--root", str(tmp_path)]) == 1

    changed = docs.write(tmp_path)
    assert f"{docs.PAGES / 'TFS999.md'}: removed" in changed
    assert not (pages / "TFS999.md").exists() and (pages / "notes.txt").exists()
    assert docs.stale(tmp_path) == []
    assert docs.write(tmp_path) == [], "writing twice must change nothing"
    written = (tmp_path / docs.README).read_text(encoding="utf-8")
    assert written == docs.readme_with_table(readme, docs.rules_table(RULES))
    # Only the block between the markers is the generator's.
    outside = readme.split(docs.README_BEGIN)[0], readme.split(docs.README_END)[1]
    assert written.startswith(outside[0]) and written.endswith(outside[1])


def test_a_readme_without_the_markers_is_an_error(tmp_path, capsys):
    (tmp_path / docs.README).write_text("# a README with a hand-kept table\n", encoding="utf-8")
    assert docs.main(["--write", "--root", str(tmp_path)]) == 2
    assert docs.README_BEGIN in capsys.readouterr().err
    assert not (tmp_path / docs.PAGES).exists()


def test_the_generator_needs_neither_tensorflow_nor_libcst():
    code = (
        "import sys\n"
        "class Refuse:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('tensorflow', 'keras', 'tf_keras', 'libcst'):\n"
        "            raise ImportError('refused: ' + name)\n"
        "sys.meta_path.insert(0, Refuse())\n"
        "from pathlib import Path\n"
        "from syncadvisor.rules import docs\n"
        "files = docs.rendered(Path('.'))\n"
        "print(len(files))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=paths.REPO, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    # the pages and the index, in docs/rules/ and in the package; README.md
    assert int(result.stdout) == 2 * (len(RULES) + 1) + 1


def test_the_package_ships_the_same_pages():
    """SARIF's helpUri points at the installed copy of a rule's page (there is no website):
    the copy is generated with docs/rules/, identical, and listed as package data."""
    import fnmatch

    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]

    packaged = paths.REPO / docs.PACKAGED
    assert sorted(p.name for p in packaged.iterdir()) == sorted(p.name for p in PAGES.iterdir())
    for page in PAGES.iterdir():
        assert (packaged / page.name).read_bytes() == page.read_bytes(), \
            f"{docs.PACKAGED / page.name} differs from {docs.PAGES / page.name}: {REGENERATE}"
    config = tomllib.loads((paths.REPO / "pyproject.toml").read_text(encoding="utf-8"))
    globs = config["tool"]["setuptools"]["package-data"]["syncadvisor.rules"]
    for page in packaged.iterdir():
        assert any(fnmatch.fnmatch(f"pages/{page.name}", g) for g in globs), page.name
    for rule in RULES:
        assert docs.installed_page(rule.code) == (packaged / f"{rule.code}.md").resolve()
    assert docs.installed_page("TFS999") is None

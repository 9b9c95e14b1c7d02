"""The machine formats: json-lines, junit, gitlab, pylint (json, sarif and github are
tested in tests/cli and tests/surfaces)."""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from syncadvisor.cli import main
from tests import paths

CHECK = paths.FIXTURES / "check"
NOTEBOOK = paths.FIXTURES / "notebooks" / "train.ipynb"


def _check(*args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["check", "--no-cache", "--jobs", "1", *args])
    return code, out.getvalue()


def test_json_lines_are_the_json_objects_one_a_line():
    code, as_json = _check("--format", "json", str(CHECK), str(NOTEBOOK))
    code_lines, lines = _check("--format", "json-lines", str(CHECK), str(NOTEBOOK))
    assert code == code_lines == 1
    assert lines.endswith("\n") and "\n\n" not in lines
    assert [json.loads(line) for line in lines.splitlines()] == json.loads(as_json)


def test_json_lines_of_nothing_is_nothing(tmp_path):
    (tmp_path / "good.py").write_text("import tensorflow as tf\nv = tf.Variable(1.)\n")
    assert _check("--format", "json-lines", str(tmp_path)) == (0, "")


def test_json_lines_statistics():
    _, rows = _check("--format", "json", "--statistics", "--exit-zero", str(CHECK))
    _, lines = _check("--format", "json-lines", "--statistics", "--exit-zero", str(CHECK))
    assert [json.loads(line) for line in lines.splitlines()] == json.loads(rows)


def test_pylint_is_path_line_code_message():
    _, as_json = _check("--format", "json", str(CHECK / "tutorial_mistakes.py"), str(NOTEBOOK))
    code, out = _check("--format", "pylint", str(CHECK / "tutorial_mistakes.py"), str(NOTEBOOK))
    expected = [f"{d['path']}:{'cell %d:' % d['cell'] if 'cell' in d else ''}{d['line']}: "
                f"[{d['code']}] {d['message']}" for d in json.loads(as_json)]
    assert code == 1 and out.splitlines() == expected
    assert out.splitlines()[0].startswith(f"{CHECK / 'tutorial_mistakes.py'}:8: [TFS001] ")
    assert f"{NOTEBOOK}:cell 5:2: [TFS001] " in out


def _junit(*args):
    import xml.etree.ElementTree as ET

    code, out = _check("--format", "junit", *args)
    assert out.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    return code, ET.fromstring(out.encode("utf-8"))


def test_junit_is_a_testsuite_per_file_and_a_failing_testcase_per_finding():
    _, as_json = _check("--format", "json", str(CHECK), str(NOTEBOOK))
    findings = json.loads(as_json)
    code, root = _junit(str(CHECK), str(NOTEBOOK))
    assert code == 1 and root.tag == "testsuites"
    assert root.get("tests") == root.get("failures") == str(len(findings))
    assert root.get("errors") == "0"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == sorted({d["path"] for d in findings})
    cases = []
    for suite in suites:
        found = suite.findall("testcase")
        assert suite.get("tests") == suite.get("failures") == str(len(found))
        cases += [(suite.get("name"), case) for case in found]
    assert len(cases) == len(findings)
    for (path, case), d in zip(cases, findings):
        assert path == d["path"]
        assert case.get("name") == f"syncadvisor.{d['code']}"
        assert (case.get("line"), case.get("column")) == (str(d["line"]), str(d["column"]))
        failure = case.find("failure")
        assert failure is not None and failure.get("message") == d["message"]
        assert failure.text.endswith(d["message"])
        properties = {p.get("name"): p.get("value") for p in case.iter("property")}
        assert properties["severity"] == d["severity"]
        assert properties.get("cell") == (str(d["cell"]) if "cell" in d else None)


def test_junit_of_an_empty_run_is_a_valid_passing_report(tmp_path):
    (tmp_path / "good.py").write_text("import tensorflow as tf\nv = tf.Variable(1.)\n")
    code, root = _junit(str(tmp_path))
    assert code == 0 and root.get("failures") == "0" and root.get("tests") == "1"
    case = root.find("testsuite/testcase")
    assert case is not None and case.find("failure") is None


def test_junit_escapes_markup_and_replaces_what_xml_cannot_hold():
    import xml.etree.ElementTree as ET

    from syncadvisor.findings import Finding
    from syncadvisor.report import junit

    message = 'a <b> & "c" \x01\x1b[31m \ud800 end'
    f = Finding("x<&>.py", 1, 1, 1, 2, "TFS002", "non-enum-value", "error", message)
    out = io.StringIO()
    junit.write([f], out)
    failure = ET.fromstring(out.getvalue().encode("utf-8", "surrogatepass")).find(
        "testsuite/testcase/failure")
    assert failure is not None
    assert failure.get("message") == 'a <b> & "c" \ufffd\ufffd[31m \ufffd end'


# GitLab's documented Code Quality fields
# (https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format)
GITLAB_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "pattern": "^TFS[0-9]{3}$"},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object",
                "required": ["path", "lines"],
                "properties": {
                    "path": {"type": "string", "pattern": "^[^/]"},
                    "lines": {
                        "type": "object",
                        "required": ["begin"],
                        "properties": {"begin": {"type": "integer", "minimum": 1},
                                       "end": {"type": "integer", "minimum": 1}},
                    },
                },
            },
        },
    },
}


def _gitlab(*args, cwd=None):
    import os

    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        code, out = _check("--format", "gitlab", *args)
    finally:
        os.chdir(old)
    return code, json.loads(out)


def test_gitlab_has_the_documented_fields():
    import jsonschema

    code, issues = _gitlab(str(CHECK), str(NOTEBOOK), cwd=paths.REPO)
    _, as_json = _check("--format", "json", str(CHECK), str(NOTEBOOK))
    findings = json.loads(as_json)
    jsonschema.validate(issues, GITLAB_SCHEMA)
    assert code == 1 and len(issues) == len(findings)
    severities = {"error": "major", "warning": "minor", "info": "info"}
    for issue, d in zip(issues, findings):
        assert issue["check_name"] == d["code"] and d["message"] in issue["description"]
        assert issue["severity"] == severities[d["severity"]]
        assert issue["location"]["lines"] == {"begin": d["line"], "end": d["end_line"]}
        # relative to the working directory, with forward slashes
        assert issue["location"]["path"] == \
            Path(d["path"]).resolve().relative_to(paths.REPO).as_posix()
    assert len({i["fingerprint"] for i in issues}) == len(issues)  # GitLab keeps one per print


def test_gitlab_paths_are_relative_to_the_working_directory(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "bad.py").write_text(
        "import tensorflow as tf\n"
        "v = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)\n")
    _, issues = _gitlab(str(tmp_path / "src"), cwd=tmp_path)
    assert [i["location"]["path"] for i in issues] == ["src/bad.py"]


def test_gitlab_fingerprints_are_stable_across_runs_and_edits_elsewhere(tmp_path):
    source = (CHECK / "strategies.py").read_text()
    (tmp_path / "strategies.py").write_text(source)
    _, first = _gitlab("strategies.py", cwd=tmp_path)
    _, again = _gitlab("strategies.py", cwd=tmp_path)
    assert first == again
    (tmp_path / "strategies.py").write_text("# a new first line\n\n" + source)
    _, shifted = _gitlab("strategies.py", cwd=tmp_path)
    assert [i["location"]["lines"]["begin"] for i in shifted] == \
        [i["location"]["lines"]["begin"] + 2 for i in first]
    assert [i["fingerprint"] for i in shifted] == [i["fingerprint"] for i in first]
    (tmp_path / "strategies.py").rename(tmp_path / "moved.py")
    _, moved = _gitlab("moved.py", cwd=tmp_path)
    assert not {i["fingerprint"] for i in moved} & {i["fingerprint"] for i in first}


def test_gitlab_of_nothing_is_an_empty_array(tmp_path):
    (tmp_path / "good.py").write_text("import tensorflow as tf\nv = tf.Variable(1.)\n")
    assert _gitlab(str(tmp_path)) == (0, [])


def test_sarif_rules_link_their_installed_page():
    from urllib.parse import unquote, urlparse

    _, out = _check("--format", "sarif", str(CHECK / "tutorial_mistakes.py"))
    rules = json.loads(out)["runs"][0]["tool"]["driver"]["rules"]
    assert rules
    for rule in rules:
        uri = urlparse(rule["helpUri"])
        assert uri.scheme == "file"
        page = Path(unquote(uri.path))
        assert page.is_file()
        assert page.read_text(encoding="utf-8") == \
            (paths.REPO / "docs" / "rules" / f"{rule['id']}.md").read_text(encoding="utf-8")
        assert rule["help"]["markdown"] and rule["fullDescription"]["text"]


def test_readme_names_every_format_and_option():
    from syncadvisor.report import FORMATTERS

    readme = (paths.REPO / "README.md").read_text(encoding="utf-8")
    usage = readme[readme.index("## Usage"):readme.index("\n## ", readme.index("## Usage") + 1)]
    for name in FORMATTERS:
        assert f"`{name}`" in usage, name
    for option in ("--show-fixes", "--statistics", "-q", "-o", "-V", "--unsafe-fixes"):
        assert option in usage, option

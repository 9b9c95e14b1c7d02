"""The target TensorFlow and Keras come from the project's declared dependencies, unless a
config file or --config sets them (syncadvisor/targets.py)."""
from __future__ import annotations

import ast
import os

import pytest

from syncadvisor import api
from syncadvisor.cli import main
from syncadvisor.config import Configuration, Settings, settings_from_table
from syncadvisor.flake8_plugin import SyncAdvisorChecker
from syncadvisor.model import tfapi
from syncadvisor.targets import (NO_PROJECT, Projects, newest, parse_requirement,
                                 parse_specifier, poetry_range, pyproject_requirements,
                                 setup_py_requirements)
from tests import paths
from tests.cli.test_configuration import findings, write

TARGETS = paths.FIXTURES / "targets"


def resolved(spec: str):
    clauses = parse_specifier(spec)
    assert clauses is not None, spec
    found = newest([clauses], tfapi.TENSORFLOW_RELEASES)
    return None if found is None else found[:2]


@pytest.mark.parametrize("spec, expected", [
    ("", (2, 21)),
    ("<2.16", (2, 15)),
    ("(<2.16.0,>=2.13.0)", (2, 15)),
    ("~=2.15.0", (2, 15)),
    ("~=2.15", (2, 21)),
    (">=2.13", (2, 21)),
    ("==2.12.*", (2, 12)),
    ("==2.15.1", (2, 15)),
    ("===2.15.1", (2, 15)),
    ("==2.15.0+cpu", (2, 15)),
    ("<=2.15", (2, 15)),  # 2.15.0 only
    (">2.20", (2, 21)),  # 2.20.0 is not above 2.20
    ("!=2.21.*,>=2.19", (2, 20)),
    ("!=2.21.0", (2, 20)),  # 2.21.0 is 2.21's only release
    ("!=2.15.0,<2.16", (2, 15)),  # 2.15.1 remains
    (">=2.16.0rc0", (2, 21)),
    ("<2.16.0rc0", (2, 15)),
    (">=2.6.0, <2.14.0", (2, 13)),
    (">2.21", None),  # newer than every known release
    ("<2", None),  # TensorFlow 1
])
def test_a_range_resolves_to_the_newest_release_it_allows(spec, expected):
    assert resolved(spec) == expected


@pytest.mark.parametrize("spec", [">=", "latest", ">=2.*", "~=2", "2.15", ">=2.15;", "@ x"])
def test_an_unreadable_range_is_none(spec):
    assert parse_specifier(spec) is None


def test_ranges_of_one_project_meet_and_contradicting_ones_do_not_crash():
    both = [parse_specifier(">=2.13"), parse_specifier("<2.16")]
    assert newest(both, tfapi.TENSORFLOW_RELEASES)[:2] == (2, 15)
    apart = [parse_specifier("<2.10"), parse_specifier(">=2.16")]  # alternative files
    assert newest(apart, tfapi.TENSORFLOW_RELEASES)[:2] == (2, 21)


@pytest.mark.parametrize("line, name, readable", [
    ("tensorflow (<2.16.0,>=2.13.0) ; extra == 'tensorflow'", "tensorflow", True),
    ("TensorFlow_CPU[and-cuda]>=2.15; python_version < '3.12'", "tensorflow-cpu", True),
    ("tf_keras==2.21.0", "tf-keras", True),
    ("tensorflow-addons>=0.16", "tensorflow-addons", True),  # not TensorFlow
    ("tensorflow @ https://example.org/tensorflow-2.15.0-py3-none-any.whl", "tensorflow", False),
])
def test_requirements_are_read_as_pep_508_says(line, name, readable):
    parsed = parse_requirement(line)
    assert parsed is not None and parsed[0] == name and (parsed[1] is not None) == readable


@pytest.mark.parametrize("constraint, pep440", [
    ("^2.13", ">=2.13,<3"), ("^0.2.3", ">=0.2.3,<0.3"), ("~2.13", ">=2.13,<2.14"),
    ("~2", ">=2,<3"), ("2.15.0", "==2.15.0"), (">=2.13,<2.16", ">=2.13,<2.16"),
    (">=2.13 <2.16", ">=2.13,<2.16"), ("*", ""), ("^2.13 || ^3", None),
])
def test_poetry_constraints_become_pep_440_ranges(constraint, pep440):
    assert poetry_range(constraint) == pep440


def target_of(tmp_path, files, where="pkg"):
    write(tmp_path, files)
    return Projects().target(os.path.realpath(tmp_path / where))


@pytest.mark.parametrize("files, tensorflow, keras", [
    ({"pyproject.toml": '[project]\nname = "p"\ndependencies = ["tensorflow>=2.13,<2.16"]\n'},
     (2, 15), None),
    ({"pyproject.toml": '[project]\nname = "p"\n[project.optional-dependencies]\n'
                        'gpu = ["tensorflow[and-cuda]~=2.17.0; sys_platform == \'linux\'"]\n'},
     (2, 17), None),
    ({"pyproject.toml": '[tool.poetry.dependencies]\npython = "^3.10"\n'
                        'tensorflow = {version = "^2.14", optional = true}\nkeras = "~2.14"\n'},
     (2, 15), "2"),
    ({"setup.py": 'import setuptools\nBASE = ["numpy"]\nTF = ["tensorflow-cpu<2.12"]\n'
                  'setuptools.setup(install_requires=BASE + TF,\n'
                  '                 extras_require={"k": ["keras>=3"]})\n'},
     (2, 11), "3"),
    ({"setup.cfg": "[metadata]\nname = p\n[options]\ninstall_requires =\n"
                   "    numpy\n    tensorflow-macos ==2.13.*\n"
                   "[options.extras_require]\nk =\n    keras<3\n"},
     (2, 13), "2"),
    ({"requirements-dev.txt": "-r requirements.txt\n--index-url https://x\n"
                              "tensorflow-intel>=2.10,<2.12  # pinned\nkeras>=2.10,<2.12 \\\n"
                              "    --hash=sha256:00\n"},
     (2, 11), "2"),
    ({"PKG-INFO": "Metadata-Version: 2.1\nName: p\nRequires-Dist: tensorflow~=2.14.0\n\n"
                  "Requires-Dist: tensorflow>=2.20 (the description, not a field)\n"},
     (2, 14), None),
    # keras 2 without a TensorFlow pin: TensorFlow from 2.16 requires keras 3
    ({"requirements.txt": "keras==2.15.0\n"}, (2, 15), "2"),
    ({"requirements.txt": "keras>=3.0\ntf-keras>=2.16\n"}, None, "3"),
])
def test_each_declaration_source_is_read(tmp_path, files, tensorflow, keras):
    target = target_of(tmp_path, {**files, "pkg/m.py": ""})
    assert (target.tensorflow, target.keras) == (tensorflow, keras)
    assert target.files == tuple(str(tmp_path / name) for name in sorted(files))


@pytest.mark.parametrize("requirements, settled", [
    ("tensorflow\n", False),  # pip may install any TensorFlow: the newest is a guess
    ("tensorflow>=2.10\n", False),
    ("tensorflow>=2.10,<2.17\n", False),
    ("tensorflow>=2.16\n", True),  # tf.keras is Keras 3 whatever pip picks
    ("tensorflow<2.16\n", True),
    ("tensorflow==2.15.*\n", True),
    ("tensorflow\nkeras>=3\n", True),  # TensorFlow before 2.16 requires keras 2
    ("tensorflow\nkeras<3\n", True),
    ("tensorflow\nkeras>=2.10\n", False),  # a keras range open across majors settles nothing
    ("tensorflow<2.10\ntensorflow>=2.16\n", False),  # contradicting files: no release meets both
    ("numpy\n", False),  # nothing declared about TensorFlow or Keras
])
def test_the_declarations_settle_the_keras_major_only_where_every_release_agrees(
        tmp_path, requirements, settled):
    target = target_of(tmp_path, {"requirements.txt": requirements, "pkg/m.py": ""})
    assert target.keras_settled is settled
    settings = Configuration().for_path(str(tmp_path / "pkg" / "m.py"))
    assumption = settings.keras_assumption(tfapi.KERAS3)
    assert (assumption is None) is settled
    if not settled:
        declared = "does not pin it" if "tensorflow" in requirements else \
            "declares no TensorFlow version"
        assert assumption == f"if this runs on Keras 3 (TensorFlow >= 2.16; the project {declared})"


def test_a_config_that_names_the_target_settles_the_keras_major(tmp_path):
    write(tmp_path, {"requirements.txt": "tensorflow\n", "pkg/m.py": ""})
    for table in ({"target-tensorflow": "2.21"}, {"keras": "3"}):
        settings = settings_from_table(table, str(tmp_path), "test")
        assert settings.for_path(str(tmp_path / "pkg" / "m.py")).keras_assumption(
            tfapi.KERAS3) is None


@pytest.mark.parametrize("files", [
    {"setup.py": "from setuptools import setup\nsetup(install_requires=requirements())\n"
                 "# tensorflow\n"},  # not a literal: nothing runs
    {"setup.py": "setup(install_requires=['tensorflow<2.1'\n"},  # not Python
    {"pyproject.toml": "[project]\ndependencies = ['tensorflow<2.16'\n"},  # not TOML
    {"setup.cfg": "[options]\ninstall_requires = tensorflow @ git+https://x/tf.git\n"},
    {"requirements.txt": "tensorflow>=latest\nkeras=3\n"},
])
def test_an_unreadable_declaration_is_ignored_and_its_folder_is_still_the_project(tmp_path,
                                                                                  files):
    write(tmp_path, {"requirements.txt": "tensorflow<2.16\n"})  # above: not reached
    target = target_of(tmp_path / "inner", {**files, "pkg/m.py": ""})
    assert target.tensorflow is None and target.keras is None and target.files


def test_tools_own_tables_are_not_a_project_declaration(tmp_path):
    write(tmp_path, {"requirements.txt": "tensorflow<2.16\n",
                     "sub/setup.cfg": "[flake8]\nmax-line-length = 99\n",
                     "sub/pyproject.toml": '[tool.syncadvisor]\nignore = ["TFS3"]\n'})
    target = target_of(tmp_path, {"sub/pkg/m.py": ""}, "sub/pkg")
    assert target.tensorflow == (2, 15) and target.files == (str(tmp_path / "requirements.txt"),)


def dist_info(folder, name, requires, top_level=None, record=()):
    files = {f"{folder}/{name}.dist-info/METADATA":
             "Metadata-Version: 2.1\nName: x\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)}
    if top_level is not None:
        files[f"{folder}/{name}.dist-info/top_level.txt"] = "".join(f"{t}\n" for t in top_level)
    files[f"{folder}/{name}.dist-info/RECORD"] = "".join(f"{row},sha256=x,1\n" for row in record)
    return files


def test_in_site_packages_the_dist_info_that_installed_the_file_decides(tmp_path, capsys):
    site = "venv/lib/site-packages"
    write(tmp_path, {
        **dist_info(site, "alpha-1.0", ["tensorflow<2.16"], top_level=["alpha"]),
        **dist_info(site, "beta-2.0", ["tensorflow>=2.16"],
                    record=["beta/__init__.py", "beta/x.py", "beta-2.0.dist-info/RECORD"]),
        **dist_info(site, "gamma-1", ["keras<3"], record=["gamma.py"]),
        **dist_info(site, "ns_one-1", ["tensorflow==2.12.*"], top_level=["ns"],
                    record=["ns/one/__init__.py"]),
        **dist_info(site, "ns_two-1", ["tensorflow==2.14.*"], top_level=["ns"],
                    record=["ns/two/__init__.py"]),
        f"{site}/alpha/layers/a.py": "", f"{site}/beta/x.py": "", f"{site}/gamma.py": "",
        f"{site}/ns/one/o.py": "", f"{site}/ns/two/t.py": "", f"{site}/orphan/o.py": "",
        f"{site}/delta.py": "",
        "requirements.txt": "tensorflow==2.10.1\n",  # the project around the environment
    })
    configuration = Configuration()
    for rel, tensorflow, keras_package in [
            ("alpha/layers/a.py", (2, 15), "auto"), ("beta/x.py", (2, 21), "auto"),
            ("gamma.py", (2, 15), "2"), ("ns/one/o.py", (2, 12), "auto"),
            ("ns/two/t.py", (2, 14), "auto"),
            # claimed by no dist-info: the declaration further up, never a neighbour's
            ("orphan/o.py", (2, 10), "auto"), ("delta.py", (2, 10), "auto")]:
        for settings in (configuration.for_path(str(tmp_path / site / rel)),
                         Settings().for_path(str(tmp_path / site / rel))):
            assert (settings.target_tensorflow, settings.keras_package) == \
                (tensorflow, keras_package), rel


def test_a_file_outside_any_project_gets_the_defaults(tmp_path):
    assert Projects().target(os.path.realpath(tmp_path)) == NO_PROJECT
    assert Configuration().for_path(str(tmp_path / "x.py")).target_tensorflow == (2, 21)


# --- what the rules see ----------------------------------------------------------------

TF216 = sorted([("tf216/layer.py", "TFS003")] * 2 + [("tf216/layer.py", "TFS004")] * 2)


def test_keras_3_errors_only_where_the_project_targets_keras_3(capsys):
    assert findings(capsys, "--no-cache", "tf215", "tf216", "keras2", cwd=TARGETS) == TF216


def test_a_config_or_command_line_target_wins_over_the_declaration(tmp_path, capsys):
    write(tmp_path, {"tf215/requirements.txt": "tensorflow<2.16\n",
                     "tf215/layer.py": (TARGETS / "tf215" / "layer.py").read_text(),
                     "keras2/setup.py": (TARGETS / "keras2" / "setup.py").read_text(),
                     "keras2/layer.py": (TARGETS / "keras2" / "layer.py").read_text()})
    assert findings(capsys, "--no-cache", ".", cwd=tmp_path) == []
    every = sorted([("tf215/layer.py", "TFS003")] * 2 + [("tf215/layer.py", "TFS004")] * 2)
    assert findings(capsys, "--no-cache", "--config", "target-tensorflow = '2.16'", ".",
                    cwd=tmp_path) == every  # keras2/: `import keras` stays Keras 2 (its pin)
    assert findings(capsys, "--no-cache", "--config", "keras = '3'", "tf215",
                    cwd=tmp_path) == every
    (tmp_path / "tf215" / "syncadvisor.toml").write_text('target-tensorflow = "2.21"\n')
    assert findings(capsys, "--no-cache", ".", cwd=tmp_path) == every
    (tmp_path / "tf215" / "syncadvisor.toml").write_text('keras = "auto"\n')  # not the target
    assert findings(capsys, "--no-cache", ".", cwd=tmp_path) == []


def test_the_cache_follows_a_changed_declaration(tmp_path, capsys):
    write(tmp_path, {"requirements.txt": "tensorflow<2.16\n",
                     "layer.py": (TARGETS / "tf215" / "layer.py").read_text()})
    assert findings(capsys, ".", cwd=tmp_path) == []
    assert findings(capsys, ".", cwd=tmp_path) == []  # from the cache
    (tmp_path / "requirements.txt").write_text("tensorflow>=2.16\n")
    assert len(findings(capsys, ".", cwd=tmp_path)) == 4


def test_the_api_and_the_flake8_plugin_resolve_a_path_as_the_command_does(capsys):
    for folder, expected in (("tf215", 0), ("tf216", 4), ("keras2", 0)):
        path = TARGETS / folder / "layer.py"
        text = path.read_text()
        assert len(api.check_source(text, filename=str(path))) == expected, folder
        checker = SyncAdvisorChecker(ast.parse(text), text.splitlines(True), str(path))
        assert len(list(checker.run())) == expected, folder
    # a name outside any declared project: the defaults (this repository's own target)
    assert len(api.check_source((TARGETS / "tf215" / "layer.py").read_text())) == 4


# --- saying what was inferred ------------------------------------------------------------

def run_cli(capsys, *args):
    old = os.getcwd()
    os.chdir(TARGETS)
    try:
        code = main(["check", *args])
    finally:
        os.chdir(old)
    return code, capsys.readouterr()


def test_show_settings_says_the_target_and_its_declaration(capsys):
    code, out = run_cli(capsys, "--show-settings", "tf215/layer.py")
    lines = out.out.splitlines()
    assert code == 0 and lines[2] == (
        f"Target: TensorFlow 2.15, tf.keras Keras 2, keras Keras 2 (from "
        f"{os.path.join('tf215', 'requirements.txt')}: tensorflow>=2.13.0,<2.16.0)")
    assert 'target-tensorflow = "2.15"' in lines
    code, out = run_cli(capsys, "--show-settings", "--config", "target-tensorflow = '2.18'",
                        "keras2")
    assert out.out.splitlines()[2] == (
        f"Target: TensorFlow 2.18, tf.keras Keras 3, keras Keras 2 (target-tensorflow set by "
        f"--config; from {os.path.join('keras2', 'setup.py')}: keras>=2.13,<3)")


def test_verbose_says_each_projects_target_once_on_standard_error(capsys):
    code, out = run_cli(capsys, "--no-cache", "-v", "--exit-zero", "-q", "tf216", "tf215",
                        "keras2")
    assert code == 0
    assert out.err.splitlines() == [  # in the order given
        f"syncadvisor: target TensorFlow 2.21, tf.keras Keras 3, keras Keras 3 (from "
        f"{os.path.join('tf216', 'pyproject.toml')}: tensorflow>=2.16)",
        f"syncadvisor: target TensorFlow 2.15, tf.keras Keras 2, keras Keras 2 (from "
        f"{os.path.join('tf215', 'requirements.txt')}: tensorflow>=2.13.0,<2.16.0)",
        f"syncadvisor: target TensorFlow 2.15, tf.keras Keras 2, keras Keras 2 (from "
        f"{os.path.join('keras2', 'setup.py')}: keras>=2.13,<3)"]
    code, out = run_cli(capsys, "--no-cache", "--exit-zero", "-q", "tf216")
    assert out.err == ""  # not without -v


@pytest.mark.parametrize("text, expected", [
    # a key that is no extra's name (unhashable once read) is left out, not a crash
    ('setup(install_requires=["tensorflow>=2.10"], '
     'extras_require={("gpu", "cuda"): ["tensorflow[and-cuda]"], "k": ["keras<3"]})',
     ["tensorflow>=2.10", "keras<3"]),
    # a list made of itself costs a bounded read, not an exponential one
    ('x = ["tensorflow<2.14"]\nx = [x, x, x, x, x, x, x]\nsetup(install_requires=x)', []),
])
def test_odd_setup_py_literals(text, expected):
    data = ("from setuptools import setup  # tensorflow\n" + text + "\n").encode()
    assert setup_py_requirements(data) == expected


def test_a_pyproject_nested_too_deeply_declares_nothing():
    data = ('[project]\nname = "x"\ndependencies = ["tensorflow<2.16"]\nz = '
            + "[" * 3000 + "]" * 3000 + "\n").encode()
    assert pyproject_requirements(data) == []

"""`--format full` (the default) and `--format concise` (the one-line text format)."""
from __future__ import annotations

import io
import re
import shutil

from syncadvisor.cli import main
from syncadvisor.config import Settings
from syncadvisor.engine import Run
from syncadvisor.report import FORMATTERS, Options, full, text
from syncadvisor.report.source import Sources
from tests import paths
from tests.samples import BAD

EXAMPLE = paths.REPO / "examples" / "train_mirrored.py"
NOTEBOOK = paths.FIXTURES / "notebooks" / "train.ipynb"


def _cli(args, capsys):
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def _run(texts):
    run = Run(Settings())
    for path, source in texts.items():
        run.add_text(path, source)
    return run, run.check().findings


def _full(texts, **options):
    run, findings = _run(texts)
    out = io.StringIO()
    full.write(findings, out, Options(sources=Sources(run.inputs.get), **options))
    return findings, out.getvalue()


def _blocks(output):
    """The output's blocks, one per finding (each ends with a blank line)."""
    return [b for b in output.split("\n\n") if b]


def test_full_is_the_default_and_concise_is_the_old_text_format(tmp_path, capsys):
    (tmp_path / "bad.py").write_text(BAD)
    target = str(tmp_path / "bad.py")
    code, default, _ = _cli(["check", "--no-cache", target], capsys)
    _, as_full, _ = _cli(["check", "--no-cache", "--format", "full", target], capsys)
    _, concise, _ = _cli(["check", "--no-cache", "--format", "concise", target], capsys)
    _, as_text, _ = _cli(["check", "--no-cache", "--format", "text", target], capsys)
    assert code == 1 and default == as_full and concise == as_text
    assert concise == (
        f"{target}:4:25: TFS101 error: `synchronization=tf.VariableSynchronization.NONE` "
        "raises ValueError (\"`NONE` variable synchronization mode is not supported with "
        "tf.distribute strategy\") under `strategy` (MirroredStrategy created at line 2)\n"
        f"{target}:5:41: TFS001 [*] error: `tf.VariableSynchronization.DEFAULT` does not "
        "exist (AttributeError when this line runs); the default is AUTO\n"
        "2 findings (2 errors), 1 fixable with --fix, 1 more with --unsafe-fixes.\n")
    # full: the same header lines and summary, with each finding's source between them
    headers = [line for line in default.splitlines() if line.startswith(target)]
    assert headers == concise.splitlines()[:2]
    assert default.splitlines()[-1] == concise.splitlines()[-1]
    assert "\x1b[" not in default  # not a terminal: no colour


def test_a_finding_shows_its_lines_its_span_the_places_it_names_and_its_fix():
    findings, out = _full({"bad.py": BAD})
    first, second = _blocks(out)
    assert first == (
        f"{text.line(findings[0])}\n"
        "  |\n"
        "2 | strategy = tf.distribute.MirroredStrategy()\n"
        "3 | with strategy.scope():\n"
        "4 |     v = tf.Variable(1., synchronization=tf.VariableSynchronization.NONE)\n"
        "  |                         ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "5 |     w = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)\n"
        "  |\n"
        " ::: bad.py:2\n"
        "2 | strategy = tf.distribute.MirroredStrategy()\n"
        "  | ------------------------------------------- `strategy` (MirroredStrategy) created\n"
        "  |\n"
        "help: Remove `synchronization` (AUTO: mirrored under this strategy) "
        "(unsafe: needs --unsafe-fixes)")
    assert second.splitlines()[-1] == "help: Replace with `tf.VariableSynchronization.AUTO` (safe)"
    _, with_unsafe = _full({"bad.py": BAD}, unsafe_fixes=True)
    assert _blocks(with_unsafe)[0].endswith("(AUTO: mirrored under this strategy) (unsafe)")


def test_the_caret_underlines_exactly_the_span(tmp_path):
    _, findings = _run({"bad.py": BAD})
    _, out = _full({"bad.py": BAD})
    for f, block in zip(findings, _blocks(out)):
        lines = block.splitlines()
        row = next(i for i, line in enumerate(lines) if line.startswith(f"{f.line} | "))
        carets = lines[row + 1]
        start = carets.index("^") - len(f"{f.line} | ")
        assert start == f.column - 1
        assert carets.count("^") == f.end_column - f.column


def test_related_lines_in_other_files_and_every_named_line_is_shown():
    run = Run(Settings())
    run.add_file(str(paths.FIXTURES / "check" / "crossmodule" / "model.py"))
    run.add_file(str(paths.FIXTURES / "check" / "crossmodule" / "train.py"))
    findings = run.check().findings
    out = io.StringIO()
    full.write(findings, out, Options(sources=Sources(run.inputs.get)))
    for f, block in zip(findings, _blocks(out.getvalue())):
        for place in f.related:
            assert f" ::: {place.path}:{place.line}" in block
            assert re.search(rf"^ *{place.line} \| ", block, re.M)
            assert place.label in block


def test_a_notebook_finding_shows_its_cells_lines(capsys):
    code, out, _ = _cli(["check", "--no-cache", str(NOTEBOOK)], capsys)
    first = _blocks(out)[0].splitlines()
    assert first[0].startswith(f"{NOTEBOOK}:cell 5:2:46: TFS001")
    assert first[1:5] == [
        "  |",
        "1 | with strategy.scope():",
        "2 |     flag = tf.Variable(True, synchronization=tf.VariableSynchronization.DEFAULT)",
        "  |                                              " + "^" * 34,
    ]
    second = _blocks(out)[1]
    assert f" ::: {NOTEBOOK}:cell 3:1\n1 | strategy = tf.distribute.MirroredStrategy()\n" in second


def test_tabs_are_expanded_and_the_caret_follows_display_columns():
    source = ("import tensorflow as tf\nstrategy = tf.distribute.MirroredStrategy()\n"
              "with strategy.scope():\n\tw = tf.Variable(1., name='漢字', "
              "synchronization=tf.VariableSynchronization.DEFAULT)\n")
    _, out = _full({"tabs.py": source})
    block = _blocks(out)[0].splitlines()
    row = next(i for i, line in enumerate(block) if line.startswith("4 | "))
    assert "\t" not in out
    assert block[row] == ("4 |     w = tf.Variable(1., name='漢字', "
                          "synchronization=tf.VariableSynchronization.DEFAULT)")
    # two wide characters before the span: each one character, two columns on screen
    assert block[row + 1].index("^") == block[row].index("tf.VariableSynchronization.DEFAULT") + 2
    assert block[row + 1].count("^") == len("tf.VariableSynchronization.DEFAULT")


def test_control_characters_cannot_reach_the_terminal():
    source = BAD.replace("DEFAULT)\n", "DEFAULT)  # \x1b[31m red \u202e evil\n")
    _, out = _full({"ctl.py": source})
    assert "\x1b" not in out and "\u202e" not in out
    assert "\u241b[31m red \ufffd evil" in out


def test_a_long_span_shows_its_ends(tmp_path):
    args = "".join(f"        {i},\n" for i in range(20))
    source = ("import tensorflow as tf\nstrategy = tf.distribute.MirroredStrategy()\n"
              "with strategy.scope():\n    v = tf.Variable(\n" + args +
              "        synchronization=tf.VariableSynchronization.NONE)\n")
    run, findings = _run({"long.py": source})
    block = full.block(findings[0], Options(sources=Sources(run.inputs.get)))
    assert "\n...\n" not in block  # the finding is on the argument: one line
    # a span of many lines: its first and last lines, and `...` between
    from syncadvisor.records import replace
    spread = replace(findings[0], line=4, column=9, end_line=25, end_column=57)
    block = full.block(spread, Options(sources=Sources(run.inputs.get)))
    numbers = [int(m) for m in re.findall(r"^ *(\d+) \|", block, re.M)]
    assert numbers[:full.HEAD + 2] == [2, 3, 4, 5, 6, 7]
    assert "\n...\n" in block and 25 in numbers and 15 not in numbers


def test_a_file_that_cannot_be_shown_is_its_header_and_help(tmp_path, capsys):
    (tmp_path / "binary.py").write_bytes(b"\x00\x01")
    code, out, _ = _cli(["check", "--no-cache", str(tmp_path / "binary.py")], capsys)
    assert code == 1 and out.splitlines()[0].startswith(f"{tmp_path / 'binary.py'}:1:1: TFS900")
    assert out.splitlines()[1] == ""


def test_after_fix_the_remaining_findings_show_the_fixed_text(tmp_path, capsys):
    target = tmp_path / "bad.py"
    target.write_text(BAD)
    code, out, _ = _cli(["check", "--no-cache", "--fix", str(target)], capsys)
    assert code == 1
    assert "5 |     w = tf.Variable(1., synchronization=tf.VariableSynchronization.AUTO)" in out
    assert "DEFAULT" not in out


def test_each_file_is_split_once_however_many_findings():
    loads = []
    run, findings = _run({"bad.py": BAD * 1})
    many = findings * 500
    sources = Sources(lambda path: loads.append(path) or run.inputs.get(path))
    out = io.StringIO()
    full.write(many, out, Options(sources=sources))
    assert loads == ["bad.py"]


def test_every_text_format_writes_the_same_findings_in_the_same_order():
    run, findings = _run({"a.py": BAD, "b.py": BAD})
    concise, as_full = io.StringIO(), io.StringIO()
    FORMATTERS["concise"](findings, concise, Options())
    FORMATTERS["full"](findings, as_full, Options(sources=Sources(run.inputs.get)))
    assert [b.splitlines()[0] for b in _blocks(as_full.getvalue())] == \
        concise.getvalue().splitlines()


def test_copying_the_example_keeps_its_output(tmp_path, capsys):
    shutil.copy(EXAMPLE, tmp_path / "train_mirrored.py")
    _, out, _ = _cli(["check", "--no-cache", str(tmp_path / "train_mirrored.py")], capsys)
    assert "48 |     loss_ema.assign(0.9 * loss_ema + 0.1 * loss)" in out
    assert "`.assign(...)`" in out


def test_the_summary_counts_what_fix_would_apply_with_the_flags_given(tmp_path, capsys):
    (tmp_path / "bad.py").write_text(BAD)
    target = str(tmp_path / "bad.py")
    _, out, _ = _cli(["check", "--no-cache", "--format", "concise", target], capsys)
    assert out.splitlines()[-1] == \
        "2 findings (2 errors), 1 fixable with --fix, 1 more with --unsafe-fixes."
    _, out, _ = _cli(["check", "--no-cache", "--format", "concise", "--unsafe-fixes", target],
                     capsys)
    assert out.splitlines()[-1] == "2 findings (2 errors), 2 fixable with --fix."
    only_unsafe = BAD.replace("DEFAULT", "AUTO")
    (tmp_path / "bad.py").write_text(only_unsafe)
    _, out, _ = _cli(["check", "--no-cache", "--unsafe-fixes", target], capsys)
    assert out.splitlines()[-1] == "1 finding (1 error), 1 fixable with --fix."
    _, out, _ = _cli(["check", "--no-cache", target], capsys)
    assert out.splitlines()[-1] == "1 finding (1 error), 1 more with --unsafe-fixes."

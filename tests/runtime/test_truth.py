"""Runtime truth: every rule that says "TensorFlow raises here" is checked against real TensorFlow.

Two halves, selectable with ``-k``:

- the TF half (``-k "not static"``; test names start with ``test_tf_``): all snippets under
  ``tests/runtime/snippets/`` and their variants run ONCE per session in one subprocess
  (``tests/runtime/harness.py``: MirroredStrategy over 2 logical CPU devices). An original raises
  the declared exception with the declared message fragment; its ``.fixed.py`` runs clean; the
  without-strategy variants behave as declared; ``result-assert`` lines hold; TFS201 copies
  diverge and TFS301's ON_READ step has fewer reductions. Skipped when TensorFlow cannot be
  imported, unless ``SYNCADVISOR_REQUIRE_TF=1`` (then those tests fail loudly).
- the static half (``-k static``): ``syncadvisor.api.check_source`` reports every
  ``# syncadvisor-expect:`` finding (code, severity, line), and nothing of the rule's code on the
  ``.fixed.py``. It never imports TensorFlow.

``test_meta_*`` check the snippet metadata itself (no TensorFlow, no syncadvisor).
The snippet format is described in ``tests/runtime/cases.py``.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
import warnings

import pytest

from tests.runtime import (
    TensorFlowUnavailable,
    describe_record,
    fixed_of,
    load_snippets,
    matches,
    originals,
    run_snippets,
    runtime_requests,
)

SNIPPETS = load_snippets()
ORIGINALS = originals(SNIPPETS)


def _autofixed():
    """The tool's own --fix --unsafe-fixes output for every snippet whose errors it can fix.

    Only snippets where an error finding carries a fix, and where no error is left
    after fixing (TFS105/106/108 have no automatic fix), are run."""
    from syncadvisor.api import check_source, fix_source

    fixed = {}
    for snippet in ORIGINALS:
        before = check_source(snippet.source, "snippet.py")
        if not any(f.severity == "error" and f.fix is not None for f in before) and \
                snippet.code != "TFS201":
            continue
        source = fix_source(snippet.source, "snippet.py", unsafe=True)
        after = check_source(source, "snippet.py")
        if source != snippet.source and not any(f.severity == "error" for f in after):
            fixed[snippet.name] = source
    return fixed


AUTOFIXED = _autofixed()
FIXED = [s for s in SNIPPETS if s.is_fixed]
BY_NAME = {s.name: s for s in SNIPPETS}
REQUIRE_TF = os.environ.get("SYNCADVISOR_REQUIRE_TF") == "1"
TF_WALL_BUDGET_S = 60.0


def _ids(snippet):
    return snippet.name


def _variant_cases():
    cases = []
    for snippet in SNIPPETS:
        if snippet.without_strategy is not None:
            for label in snippet.strategy_free_variants():
                cases.append(pytest.param(snippet, label, id=f"{snippet.name}@{label}"))
    return cases


def _unavailable(reason: str):
    if REQUIRE_TF:
        pytest.fail(f"SYNCADVISOR_REQUIRE_TF=1 but {reason}", pytrace=False)
    pytest.skip(reason)


# --------------------------------------------------------------------------------------------
# TF half
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def tf_results():
    """Run every snippet and variant under TensorFlow once; ``{request name: record}``."""
    if importlib.util.find_spec("tensorflow") is None:
        _unavailable("tensorflow is not installed")
    info: dict = {}
    started = time.perf_counter()
    requests = runtime_requests(SNIPPETS)
    requests.update({f"{name}.autofixed": source for name, source in AUTOFIXED.items()})
    try:
        results = run_snippets(requests, info=info)
    except TensorFlowUnavailable as exc:
        first = (str(exc).splitlines() or [""])[0]
        if REQUIRE_TF:
            pytest.fail(f"SYNCADVISOR_REQUIRE_TF=1 but import tensorflow failed in the harness: {exc}", pytrace=False)
        pytest.skip(f"import tensorflow failed in the harness: {first}")
    wall = time.perf_counter() - started
    sys.stderr.write(
        f"\n[runtime truth] {len(results)} snippet runs in {wall:.1f} s "
        f"({info.get('processes')} harness process(es); {info.get('ready')})\n"
    )
    if wall > TF_WALL_BUDGET_S:
        warnings.warn(f"runtime truth harness took {wall:.1f} s (budget {TF_WALL_BUDGET_S:.0f} s)")
    return results


def _record(results: dict, name: str) -> dict:
    assert name in results, f"the harness returned no record for {name}"
    return results[name]


@pytest.mark.parametrize("snippet", [s for s in ORIGINALS if s.raises], ids=_ids)
def test_tf_original_raises(tf_results, snippet):
    record = _record(tf_results, snippet.name)
    assert matches(record, snippet.raises), (
        f"{snippet.path.name}: expected {snippet.raises.exc_type} containing "
        f"{snippet.raises.fragment!r}, but it {describe_record(record)}"
    )


@pytest.mark.parametrize("snippet", [s for s in ORIGINALS if not s.raises], ids=_ids)
def test_tf_original_runs_clean(tf_results, snippet):
    """Silent-wrong-result snippets (and negative cases): TensorFlow raises nothing."""
    record = _record(tf_results, snippet.name)
    assert record["ok"], f"{snippet.path.name} should run clean, but it {describe_record(record)}"


@pytest.mark.parametrize("snippet", FIXED, ids=_ids)
def test_tf_fixed_runs_clean(tf_results, snippet):
    record = _record(tf_results, snippet.name)
    assert record["ok"], f"{snippet.path.name} should run clean, but it {describe_record(record)}"


@pytest.mark.parametrize(("snippet", "label"), _variant_cases())
def test_tf_without_strategy(tf_results, snippet, label):
    record = _record(tf_results, f"{snippet.name}@{label}")
    what = f"{snippet.path.name} with the strategy replaced ({label})"
    if snippet.without_strategy == "clean":
        assert record["ok"], f"{what} should run clean, but it {describe_record(record)}"
    else:
        raises = snippet.without_strategy
        assert matches(record, raises), (
            f"{what}: expected {raises.exc_type} containing {raises.fragment!r}, "
            f"but it {describe_record(record)}"
        )


@pytest.mark.parametrize("snippet", [s for s in SNIPPETS if s.result_asserts], ids=_ids)
def test_tf_result_asserts(tf_results, snippet):
    record = _record(tf_results, snippet.name)
    assert record["ok"], f"{snippet.path.name} should run clean, but it {describe_record(record)}"
    for expression in snippet.result_asserts:
        value = eval(expression, {"__builtins__": __builtins__}, {"RESULT": record["result"]})  # noqa: S307
        assert value, f"{snippet.path.name}: result-assert {expression!r} is false for RESULT={record['result']!r}"


@pytest.mark.parametrize("name", sorted(AUTOFIXED))
def test_tf_autofixed_runs_clean(tf_results, name):
    """The original raises (or diverges); what `--fix --unsafe-fixes` makes of it runs clean."""
    record = _record(tf_results, f"{name}.autofixed")
    assert record["ok"], f"{name} after syncadvisor's fixes should run clean, but it {describe_record(record)}"
    if name.startswith("TFS201") and isinstance(record.get("result"), dict) and "copies" in record["result"]:
        copies = record["result"]["copies"]
        assert copies[0] == copies[1], f"the fixed variable should stay in sync: {record['result']}"


def test_autofix_covers_every_fixable_error_rule():
    from syncadvisor.rules import all_rules

    fixable = {r.code for r in all_rules() if r.severity == "error" and r.fix_availability}
    covered = {name.split("_", 1)[0] for name in AUTOFIXED}
    assert fixable <= covered, sorted(fixable - covered)


def test_tf_TFS201_copies_diverge_without_aggregation(tf_results):
    """MirroredStrategy, aggregation NONE: no error, the copies differ, a read gives replica 0's."""
    bug = _record(tf_results, "TFS201_on_write_none_diverges")
    fixed = _record(tf_results, "TFS201_on_write_none_diverges.fixed")
    assert bug["ok"], describe_record(bug)
    assert fixed["ok"], describe_record(fixed)
    copies = bug["result"]["copies"]
    assert len(copies) == 2 and copies[0] != copies[1], f"copies should diverge: {bug['result']}"
    assert bug["result"]["read"] == copies[0], f"a cross-replica read should give replica 0's copy: {bug['result']}"
    assert bug["result"]["saved"] == copies[0], f"the checkpoint should keep replica 0's copy: {bug['result']}"
    fixed_copies = fixed["result"]["copies"]
    assert len(fixed_copies) == 2 and fixed_copies[0] == fixed_copies[1], f"copies should agree: {fixed['result']}"
    # The mean of the two diverged copies is what MEAN aggregation keeps on both.
    assert fixed_copies[0] == pytest.approx(sum(copies) / 2)


def test_tf_TFS301_on_read_has_fewer_reductions(tf_results):
    """ON_WRITE+SUM: a cross-device reduction per write; ON_READ+SUM: none per step, same value."""
    on_write = _record(tf_results, "TFS301_on_write_sum_accumulator")
    on_read = _record(tf_results, "TFS301_on_write_sum_accumulator.fixed")
    assert on_write["ok"], describe_record(on_write)
    assert on_read["ok"], describe_record(on_read)
    w, r = on_write["result"], on_read["result"]
    n_accumulators = 2
    assert w["reductions_per_step"] >= n_accumulators, f"expected a reduction per accumulator write: {w}"
    assert r["reductions_per_step"] == 0, f"ON_READ writes should be local: {r}"
    assert r["reductions_per_step"] < w["reductions_per_step"]
    assert r["total_ops"] < w["total_ops"], f"ON_READ step graph should be smaller: {r['total_ops']} vs {w['total_ops']}"
    assert r["mean_loss"] == pytest.approx(w["mean_loss"]), "both must compute the same metric"


# --------------------------------------------------------------------------------------------
# Static half (needs syncadvisor.api.check_source; never TensorFlow)
# --------------------------------------------------------------------------------------------


def _check(snippet):
    from syncadvisor.api import check_source

    had_tf = "tensorflow" in sys.modules
    findings = list(check_source(snippet.source, "snippet.py"))
    if not had_tf:
        assert "tensorflow" not in sys.modules, "the static checker imported TensorFlow"
    return findings


def _show(findings) -> str:
    return "\n".join(
        f"  {f.line}:{f.column} {f.code} {f.severity} {f.message}"
        for f in sorted(findings, key=lambda f: (f.line, f.column, f.code))
    ) or "  (none)"


@pytest.mark.parametrize("snippet", [s for s in SNIPPETS if s.expects], ids=_ids)
def test_static_expected_findings(snippet):
    findings = _check(snippet)
    reported = {(f.code, f.severity, f.line) for f in findings}
    missing = [e for e in snippet.expects if (e.code, e.severity, e.line) not in reported]
    assert not missing, (
        f"{snippet.path.name}: missing "
        + ", ".join(f"{e.code} {e.severity} at line {e.line}" for e in missing)
        + f"\nreported:\n{_show(findings)}"
    )


@pytest.mark.parametrize("snippet", FIXED, ids=_ids)
def test_static_fixed_has_no_finding_of_its_code(snippet):
    findings = _check(snippet)
    same = [f for f in findings if f.code == snippet.code]
    assert not same, f"{snippet.path.name} applies the {snippet.code} fix but still gets:\n{_show(same)}"


@pytest.mark.parametrize("snippet", [s for s in SNIPPETS if s.expect_none], ids=_ids)
def test_static_negative_cases(snippet):
    findings = _check(snippet)
    wrong = [f for f in findings if f.code in snippet.expect_none]
    assert not wrong, f"{snippet.path.name} must not get {snippet.expect_none}:\n{_show(wrong)}"


# --------------------------------------------------------------------------------------------
# The snippet metadata itself
# --------------------------------------------------------------------------------------------


def test_meta_snippets_exist():
    assert len(ORIGINALS) >= 20 and FIXED


@pytest.mark.parametrize("snippet", ORIGINALS, ids=_ids)
def test_meta_original_is_well_formed(snippet):
    assert snippet.claim, f"{snippet.path.name}: no '# claim:' line"
    if snippet.expects:
        assert any(e.code == snippet.code for e in snippet.expects), (
            f"{snippet.path.name}: no syncadvisor-expect line for its own code {snippet.code}"
        )
        assert fixed_of(snippet, SNIPPETS) is not None, f"{snippet.path.name}: no {snippet.name}.fixed.py"
    else:
        assert snippet.expect_none, f"{snippet.path.name}: neither syncadvisor-expect nor syncadvisor-expect-none"
    if snippet.without_strategy is not None:
        variants = snippet.strategy_free_variants()
        for source in variants.values():
            assert source.count("\n") == snippet.source.count("\n"), "a variant must keep line numbers"
    if not snippet.raises:
        assert snippet.result_asserts, f"{snippet.path.name}: runs clean, so it must assert on RESULT"


@pytest.mark.parametrize("snippet", FIXED, ids=_ids)
def test_meta_fixed_is_well_formed(snippet):
    assert snippet.base_name in BY_NAME, f"{snippet.path.name}: no original {snippet.base_name}.py"
    assert snippet.raises is None, f"{snippet.path.name}: a fixed snippet must run clean"
    assert not any(e.code == snippet.code for e in snippet.expects), (
        f"{snippet.path.name}: lists a finding of the code it fixes"
    )


@pytest.mark.parametrize("snippet", [s for s in SNIPPETS if s.expects], ids=_ids)
def test_meta_expected_lines_point_at_code(snippet):
    lines = snippet.source.splitlines()
    for e in snippet.expects:
        assert 1 <= e.line <= len(lines), f"{snippet.path.name}: line {e.line} is outside the file"
        text = lines[e.line - 1].strip()
        assert text and not text.startswith("#"), f"{snippet.path.name}: line {e.line} is not code: {text!r}"

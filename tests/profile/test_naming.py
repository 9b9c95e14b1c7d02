"""Each run has one name everywhere: progress, verdicts, tables and plot; and text is cut
between words, never inside one (no TensorFlow)."""
from __future__ import annotations

import re

from syncadvisor.profile import plan, plot, report, runs, verdict
from syncadvisor.profile.plan import Pattern, SiteSpec, Update


def _spec(current=("AUTO", "NONE")):
    updates = (Update("assign_add", plan.PER_REPLICA, True),)
    pattern = Pattern(kind="site", title="t", shape=(), dtype="float32", trainable=False,
                      updates=updates, reference=plan.reference_choice(updates, "float32"))
    return SiteSpec(path="train.py", line=3, name="total", pattern=pattern, current=current,
                    key="s0")


class _Runner:
    def __init__(self):
        self.asked = []

    def run(self, run):
        self.asked.append(run)
        return {"id": run["id"], "steps": 2, "costs": {"reductions": 2, "bytes": 8},
                "step_times_ms": [1.0, 1.2]}


def test_progress_tables_and_plot_name_a_run_alike():
    spec, said = _spec(), []
    counter = runs._Counter(1, said.append)
    runner = _Runner()
    result = counter.run(runner, spec, ("ON_WRITE", "SUM"), [])
    assert said == ["1/1: train.py:3 total as AUTO + SUM"]
    assert runner.asked[0]["overrides"] == [{"site": "s0", "synchronization": "ON_WRITE",
                                             "aggregation": "SUM"}]
    m = runs.measurement(("ON_WRITE", "SUM"), result, spec, None)
    assert m["choice"] == "AUTO + SUM"
    decided = verdict.decide(spec, [dict(m, as_written=True, copies_agree=True,
                                         values_agree=True)])
    assert decided["verdict"]["text"].startswith("keep AUTO + SUM: ")
    site = dict(report.site_json(spec, [dict(m, as_written=True)], decided["recommendation"]),
                verdict=decided["verdict"])
    table = report._site_text(site, {})
    assert table[2].split()[:4] == ["AUTO", "+", "SUM", "code"]
    # where the code writes ON_WRITE, every part says ON_WRITE
    written = _spec(current=("ON_WRITE", "SUM"))
    assert runs.measurement(("ON_WRITE", "SUM"), result, written, None)["choice"] == \
        "ON_WRITE + SUM"
    # a BatchNormalization line's setting is its own name
    assert plan.choice_name((plan.SETTING, plan.SYNCHRONIZED), ("ON_WRITE", "NONE")) == \
        "synchronized=True"


LONG = ("ValueError: Could not convert from `tf.VariableAggregation` "
        "VariableAggregationV2.NONE to`tf.distribute.ReduceOp` type while reading the value "
        "of the variable accumulated_gradients_for_the_second_dense_layer_kernel in "
        "cross-replica context")


def _cut_between_words(shown: str, full: str) -> bool:
    """Whether `shown` is `full`, or a start of it that ends at a word's end plus " ..."."""
    full = " ".join(full.split())
    if shown == full:
        return True
    if not shown.endswith(" ..."):
        return False
    kept = shown[:-len(" ...")]
    return full.startswith(kept) and full[len(kept)] == " "


def test_the_plot_cuts_an_error_between_words():
    m = {"error": LONG, "error_stage": "read", "choice": "ON_READ + NONE"}
    note = plot.row_note(m, recommended=False)
    assert len(note) <= plot.NOTE_WIDTH and note.endswith(" when read")
    shown = note[:-len(" when read")]
    assert _cut_between_words(shown, "raises " + LONG), note
    # short texts stay whole
    assert plot.row_note({"error": "ValueError: no", "error_stage": "step"}, True) == \
        "recommended: raises ValueError: no in a step"


def test_tables_and_verdicts_cut_between_words():
    for width in (20, 57, 80, 110):
        shown = verdict.clip(LONG, width)
        assert len(shown) <= width and _cut_between_words(shown, LONG), (width, shown)
    cell = report.error_cell({"error": LONG, "error_stage": "step"}, width=60)
    assert _cut_between_words(cell, re.sub(r"^ValueError:", "ValueError in a step:", LONG))
    assert verdict.short_error(LONG, 50).endswith(" ...")

"""README.md's profiler section shows real output of this version (`readme_sample.py`)."""
from __future__ import annotations

from tests.profile import readme_sample
from tests.profile.test_profile import tensorflow_required  # noqa: F401


def test_the_comparison_ignores_only_what_is_timed():
    a = ("x.py:3: t: switch to ON_READ + SUM: 1 all-reduce (4 B) fewer per step, values agree; "
         "step time within noise\n  AUTO + SUM  code  1  4 B  0.465 [0.435, 0.568]  agree")
    b = ("x.py:3: t: switch to ON_READ + SUM: 1 all-reduce (4 B) fewer per step, values agree; "
         "median step 0.50 ms against 0.71 ms\n  AUTO + SUM    code  1  4 B  1.5 [1.2, 2.0]  agree")
    assert readme_sample.comparable(a) == readme_sample.comparable(b)
    assert readme_sample.comparable(a) != readme_sample.comparable(a.replace("4 B", "8 B"))
    assert readme_sample.comparable(a) != readme_sample.comparable(a.replace("agree", "DIFFER"))


def test_tf_readme_profile_sample_is_current(tensorflow_required):  # noqa: F811
    text = readme_sample.README.read_text(encoding="utf-8")
    shown = readme_sample.current(text)
    assert shown.startswith("```text\n$ syncadvisor profile --run examples/train_accumulate.py")
    produced = readme_sample.block(readme_sample.produce())
    assert readme_sample.comparable(shown) == readme_sample.comparable(produced), (
        "README.md's profile sample has drifted from this version's output: run "
        "python -m tests.profile.readme_sample --write and review the diff")

"""``python -m benchmarks blind``: precision on public projects the tool never saw (issue 37).

The field benchmark's machinery (``benchmarks/field.py``: pinned wheels from PyPI, each unpacked
and checked as its own project, findings matched to hand labels by site) on another list of
projects, ``BLIND_PINS``, chosen before any finding was seen (``benchmarks/blind_choice.md``) and
split into two parts:

- ``dev``: run and triaged while the rules are worked on;
- ``held-out``: not run until the end of the round, then run once and reported on its own.

The labels live in ``benchmarks/blind_labels.toml`` (the field format). Beside the field report
(counts by code, precision, unlabelled findings, stale labels) it prints, per project and per
part, errors and warnings with their TRUE/FALSE counts, precision, and the share of warnings
that are true and that a maintainer would act on, against the issue's goals: errors 100% true,
warnings >= 90% true, at least half of the warnings actionable.

``--part`` defaults to ``dev`` so that the held-out part is only ever run on purpose.

Exit status: 0 when every finding is labelled and every goal is met in every part run; 1 when a
finding is unlabelled or a goal is missed; 2 when the benchmark could not run.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass

from benchmarks import HERE, WORK_DIR
from benchmarks import field as fieldmod
from benchmarks.field import FieldError, Finding, Package, norm_dist

# (distribution on PyPI, pinned version, part). Chosen and split before the tool was run on any
# of them: the first draw in benchmarks/blind_choice.md, the second in benchmarks/BLIND.md ("Second
# draw"), each saying why each project is here and how the split was drawn.
BLIND_PINS: list[tuple[str, str, str]] = [
    # first draw
    ("tf-models-official", "2.20.0", "dev"),
    ("tensorflow-privacy", "0.9.0", "dev"),
    ("transformers", "4.26.1", "dev"),
    ("tensorflow-gnn", "1.0.3", "dev"),
    ("lingvo", "0.14.2", "dev"),
    ("tfx", "1.21.0", "dev"),
    ("larq", "0.14.0", "dev"),
    ("keras-tuner", "1.4.8", "dev"),
    ("tensorflow-recommenders", "0.7.7", "held-out"),
    ("tensorflow-ranking", "0.5.5", "held-out"),
    ("tensorflow-cloud", "0.1.16", "held-out"),
    ("neural-structured-learning", "1.4.0", "held-out"),
    ("tensorflow-similarity", "0.17.1", "held-out"),
    # second draw
    ("tflite-model-maker", "0.4.3", "dev"),
    ("uncertainty-baselines", "0.0.7", "dev"),
    ("keras-cv-attention-models", "1.4.3", "dev"),
    ("tf-slim", "1.1.0", "dev"),
    ("mediapipe-model-maker", "0.2.1.4", "dev"),
    ("d2l", "1.0.3", "dev"),
    ("gradient-accumulator", "0.5.2", "dev"),
    ("tensorflow-gan", "2.1.0", "held-out"),
    ("ray", "2.60.0", "held-out"),
    ("spark-tensorflow-distributor", "1.0.0", "held-out"),
    ("determined", "0.38.1", "held-out"),
    ("larq-zoo", "2.4.0", "held-out"),
]
PARTS = ("dev", "held-out")

LABELS_FILE = HERE / "blind_labels.toml"
BLIND_DIR = WORK_DIR / "blind"

# The goals: precision of errors and of warnings (the field targets), and the share of
# labelled warnings that are TRUE and actionable.
PRECISION_GOALS = fieldmod.TARGETS
ACTIONABLE_WARNINGS_GOAL = 0.5


def part_of(dist: str) -> str:
    for d, _, part in BLIND_PINS:
        if norm_dist(d) == norm_dist(dist):
            return part
    raise KeyError(dist)


def pins_for(part: str) -> list[tuple[str, str]]:
    """The (dist, version) pins of a part: ``dev``, ``held-out`` or ``all``."""
    if part not in PARTS + ("all",):
        raise FieldError(f"unknown part {part!r}: choose dev, held-out or all")
    return [(d, v) for d, v, p in BLIND_PINS if part in ("all", p)]


# --- the arithmetic -------------------------------------------------------------------------

@dataclass
class Tally:
    """Errors and warnings of a set of findings, by verdict; ``warnings_actionable`` counts the
    warnings labelled TRUE and actionable."""
    errors: int = 0
    errors_true: int = 0
    errors_false: int = 0
    warnings: int = 0
    warnings_true: int = 0
    warnings_false: int = 0
    warnings_actionable: int = 0
    infos: int = 0
    unlabelled: int = 0

    @property
    def errors_labelled(self) -> int:
        return self.errors_true + self.errors_false

    @property
    def warnings_labelled(self) -> int:
        return self.warnings_true + self.warnings_false

    def goals(self) -> list[tuple[str, bool]]:
        """Each goal with whether it is met; a severity with nothing labelled meets its goal."""
        out = []
        for sev, num, den in (("error", self.errors_true, self.errors_labelled),
                              ("warning", self.warnings_true, self.warnings_labelled)):
            goal = PRECISION_GOALS[sev]
            out.append((f"{sev}s true >= {goal:.0%}", not den or num / den >= goal))
        den = self.warnings_labelled
        out.append((f"warnings actionable >= {ACTIONABLE_WARNINGS_GOAL:.0%}",
                    not den or self.warnings_actionable / den >= ACTIONABLE_WARNINGS_GOAL))
        return out


def tally(findings: list[Finding]) -> Tally:
    t = Tally()
    for f in findings:
        lab = f.label
        if lab is None:
            t.unlabelled += 1
        if f.severity == "error":
            t.errors += 1
            if lab is not None:
                t.errors_true += lab.verdict
                t.errors_false += not lab.verdict
        elif f.severity == "warning":
            t.warnings += 1
            if lab is not None:
                t.warnings_true += lab.verdict
                t.warnings_false += not lab.verdict
                t.warnings_actionable += lab.verdict and lab.actionable
        else:
            t.infos += 1
    return t


def _ratio(num: int, den: int) -> str:
    return f"{100.0 * num / den:.0f}%" if den else "n/a"


def _row(name: str, t: Tally) -> str:
    return (f"{name:36s} {t.errors:4d} {t.errors_true:4d} {t.errors_false:4d} "
            f"{_ratio(t.errors_true, t.errors_labelled):>6s}  "
            f"{t.warnings:4d} {t.warnings_true:4d} {t.warnings_false:4d} "
            f"{_ratio(t.warnings_true, t.warnings_labelled):>6s} "
            f"{_ratio(t.warnings_actionable, t.warnings_labelled):>6s}  "
            f"{t.infos:4d} {t.unlabelled:5d}")


def blind_table(packages: list[Package]) -> tuple[str, bool]:
    """Per project and per part: errors and warnings, TRUE/FALSE, precision, actionable share of
    warnings, and the goals; whether every part run meets every goal."""
    out: list[str] = []
    w = out.append
    w("Blind benchmark: per project and per part (precision = TRUE / labelled; act. = TRUE and "
      "actionable / labelled warnings)")
    w(f"{'project':36s} {'err':>4s} {'TRUE':>4s} {'FALS':>4s} {'prec':>6s}  "
      f"{'warn':>4s} {'TRUE':>4s} {'FALS':>4s} {'prec':>6s} {'act.':>6s}  "
      f"{'info':>4s} {'unlab':>5s}")
    met = True
    by_part: dict[str, list[Package]] = {}
    for p in packages:
        by_part.setdefault(part_of(p.dist), []).append(p)
    parts = [part for part in PARTS if part in by_part]
    for part in parts:
        w(f"-- {part} part")
        for p in by_part[part]:
            w(_row(f"{p.dist} {p.version}", tally(p.findings)))
        t = tally([f for p in by_part[part] for f in p.findings])
        w(_row(f"{part} total", t))
    if len(parts) > 1:
        w(_row("all parts", tally([f for p in packages for f in p.findings])))
    w("")
    w("Goals (issue 37), each part on its own")
    for part in parts:
        t = tally([f for p in by_part[part] for f in p.findings])
        goals = t.goals()
        met = met and all(ok for _, ok in goals)
        w(f"  {part:9s} " + "; ".join(f"{name}: {'PASS' if ok else 'FAIL'}" for name, ok in goals)
          + (f"  ({t.unlabelled} unlabelled)" if t.unlabelled else ""))
    false = Counter((f.code, f.severity) for p in packages for f in p.findings
                    if f.label is not None and not f.label.verdict
                    and f.severity in ("error", "warning"))
    if any(f.label is not None for p in packages for f in p.findings):
        w("")
        w("FALSE findings by code: " + (", ".join(
            f"{code} ({sev}) {n}" for (code, sev), n in sorted(false.items())) or "none"))
    return "\n".join(out), met


# --- command --------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks blind", allow_abbrev=False,
        description="The blind benchmark of issue 37: the field benchmark's check and labels on "
                    "public projects chosen before any finding was seen, split into a dev part "
                    "(triaged while the rules change) and a held-out part (run only at the end of "
                    "a round). Prints the field report, then per project and per part the "
                    "precision of errors and warnings and the actionable share of warnings "
                    "against the goals. Exit 0: all labelled, goals met; 1: an unlabelled finding "
                    "or a missed goal; 2: could not run.")
    p.add_argument("--part", choices=("dev", "held-out", "all"), default="dev",
                   help="which projects to check (default: dev; the held-out part only on purpose)")
    fieldmod.add_common_arguments(p, [d for d, _, _ in BLIND_PINS], LABELS_FILE, BLIND_DIR)
    return p


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        pins = fieldmod.select_pins(pins_for(args.part), args.packages)
        labels = fieldmod.load_labels(args.labels)
        pinned = {norm_dist(d) for d, _, _ in BLIND_PINS}
        unknown = sorted({lab.package for lab in labels if norm_dist(lab.package) not in pinned})
        if unknown:
            raise FieldError(f"{args.labels.name}: labels for packages not in BLIND_PINS: "
                             f"{', '.join(unknown)}")
        _log(f"[blind] part {args.part}: {', '.join(f'{d}=={v}' for d, v in pins)}")
        packages = fieldmod.check_pins(pins, args.wheels_dir, args.work_dir, args.offline,
                                       tag="blind")
    except FieldError as e:
        _log(f"[blind] {e}")
        return 2
    rc = fieldmod.report(packages, labels, args, tag="blind")
    text, met = blind_table(packages)
    print("\n" + text, flush=True)
    return max(rc, 0 if met else 1)

"""`records.record` behaves as `dataclasses.dataclass` does, for what the tool uses."""
from __future__ import annotations

import dataclasses
import pickle
from typing import ClassVar, List, Optional

import pytest

from syncadvisor.records import FrozenInstanceError, field, fields, record, replace


def _pair(decorate, **options):
    """The same class made by `decorate` (record or dataclass)."""
    field_ = field if decorate is record else dataclasses.field

    @decorate(**options)
    class Point:
        x: int
        y: int = 0
        tags: List[str] = field_(default_factory=list)
        note: Optional[str] = field_(default=None, compare=False)
        kind: ClassVar[str] = "point"

        def norm(self) -> int:
            return abs(self.x) + abs(self.y)

    return Point


@pytest.mark.parametrize("options", [{}, {"frozen": True}, {"slots": True}],
                         ids=["plain", "frozen", "slots"])
def test_a_record_behaves_as_the_dataclass(options):
    mine, theirs = _pair(record, **options), _pair(dataclasses.dataclass, **options)
    for make in (lambda c: c(1), lambda c: c(1, 2, ["a"], "n"), lambda c: c(x=3, note="z")):
        a, b = make(mine), make(theirs)
        assert repr(a) == repr(b)
        assert (a.x, a.y, a.tags, a.note, a.norm(), a.kind) == (b.x, b.y, b.tags, b.note,
                                                                b.norm(), b.kind)
    assert mine(1) == mine(1, note="other") and mine(1) != mine(2) and mine(1) != theirs(1)
    assert mine(1).tags is not mine(1).tags  # a new list each time
    assert fields(mine) == tuple(f.name for f in dataclasses.fields(theirs))
    with pytest.raises(TypeError):
        mine()  # x has no default
    assert replace(mine(1, 2), y=7) == mine(1, 7)


@record
class Plain:
    x: int
    tags: List[str] = field(default_factory=list)


@record(frozen=True)
class Frozen:
    x: int
    note: str = field(default="", compare=False)


@record(slots=True)
class Slotted:
    x: int
    y: int = 2


@pytest.mark.parametrize("value", [Plain(1, ["a"]), Frozen(2, "n"), Slotted(3)], ids=repr)
def test_records_pickle_back_to_themselves(value):
    back = pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == value and repr(back) == repr(value)


def test_frozen_records_hash_and_refuse_assignment_and_mutable_ones_do_not_hash():
    frozen, mutable = _pair(record, frozen=True), _pair(record)

    @record(frozen=True)
    class Key:
        name: str
        where: int = field(default=0, compare=False)

    assert hash(Key("a", 1)) == hash(Key("a", 2)) and Key("a", 1) == Key("a", 2)
    assert len({Key("a"), Key("a"), Key("b")}) == 2
    with pytest.raises(TypeError):  # a list field, as with dataclass
        hash(frozen(1))
    with pytest.raises(FrozenInstanceError):
        frozen(1).x = 2
    with pytest.raises(AttributeError):
        del frozen(1).x
    with pytest.raises(TypeError):
        hash(mutable(1))
    point = mutable(1)
    point.x = 5
    assert point.x == 5


def test_slots_records_have_no_dict():
    point = _pair(record, slots=True)(1)
    assert not hasattr(point, "__dict__")
    with pytest.raises(AttributeError):
        point.other = 1

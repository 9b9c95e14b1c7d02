"""Records: classes of named fields, as `dataclasses.dataclass` makes them, made cheaply.

Every flake8 call from an editor imports the tool anew, and `dataclass` compiles four to
six functions for each class it makes (`__init__`, `__repr__`, `__eq__`, and for a frozen
class `__setattr__`, `__delattr__`, `__hash__`): for the forty-odd classes of a check,
more time than the rest of importing the tool. `record` compiles one function per class
(its `__init__`); equality, hashing, `repr` and freezing are shared methods that read the
class's field names. A record with `slots=True` also pickles compactly: as its class and a
tuple of its field values, not a dict per object (a run's models travel from worker
processes to the parent, and to and from the cache). The object exists before its fields
are read back, so cycles between records still pickle; the fields are read in one C call
(`attrgetter`) and written back in one unpacking assignment compiled with `__init__`.

The semantics are dataclass's for what the tool uses: fields are the class's own
annotations, in order, with defaults or `field(default_factory=...)`; `compare=False`
leaves a field out of equality and hashing; `__eq__` compares records of the same class
field by field; a frozen record is hashable and refuses assignment; a mutable one is not
hashable; `slots=True` makes a class with `__slots__`. Type checkers see `dataclass`
itself (below, under TYPE_CHECKING), so they check construction as they would for it.
"""
from __future__ import annotations

import copyreg
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Tuple, TypeVar

T = TypeVar("T")

_MISSING: Any = object()


class FrozenInstanceError(AttributeError):
    """Assignment to a field of a frozen record."""


class Field:
    __slots__ = ("default", "factory", "compare")

    def __init__(self, default: Any, factory: Any, compare: bool):
        self.default = default
        self.factory = factory
        self.compare = compare


def _field(*, default: Any = _MISSING, default_factory: Any = _MISSING, compare: bool = True,
           hash: Any = None) -> Any:
    """A field's default (or a factory of defaults), and whether it takes part in equality
    and hashing (`hash` follows `compare`, as in every use here)."""
    return Field(default, default_factory, compare)


def fields(cls_or_record: Any) -> Tuple[str, ...]:
    """The field names of a record class (or of a record), in order."""
    return cls_or_record.__record_fields__


def _replace(record: T, **changes: Any) -> T:
    """A copy of `record` with some fields changed."""
    values = {name: getattr(record, name) for name in fields(record)}
    values.update(changes)
    return type(record)(**values)


# --- the methods every record shares ---------------------------------------------------

def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        return self.__record_key__(self) == other.__record_key__(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(self.__record_key__(self))


def _repr(self: Any) -> str:
    inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__record_fields__)
    return f"{type(self).__qualname__}({inner})"


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _key_of(names: List[str]) -> Callable[[Any], tuple]:
    if not names:
        return lambda record: ()
    if len(names) == 1:  # (attrgetter of one name gives the value, not a 1-tuple)
        only = attrgetter(names[0])
        return lambda record: (only(record),)
    return attrgetter(*names)


def _make(cls: type, frozen: bool, slots: bool) -> type:
    own = cls.__dict__.get("__annotations__", {})
    names = [name for name, kind in own.items() if not str(kind).startswith("ClassVar")]
    specs: List[Tuple[str, Field]] = []
    for name in names:
        value = cls.__dict__.get(name, _MISSING)
        specs.append((name, value if isinstance(value, Field) else Field(value, _MISSING, True)))
    namespace: Dict[str, Any] = {"_setattr": object.__setattr__, "_FACTORY": _MISSING}
    parameters, lines = [], []
    for name, spec in specs:
        if spec.factory is not _MISSING:
            namespace[f"_factory_{name}"] = spec.factory
            parameters.append(f"{name}=_FACTORY")
            value = f"_factory_{name}() if {name} is _FACTORY else {name}"
        else:
            if spec.default is not _MISSING:
                namespace[f"_default_{name}"] = spec.default
                parameters.append(f"{name}=_default_{name}")
            else:
                parameters.append(name)
            value = name
        lines.append(f"    _setattr(self, {name!r}, {value})" if frozen else
                     f"    self.{name} = {value}")
    source = f"def __init__(self, {', '.join(parameters)}):\n" + ("\n".join(lines) or "    pass")
    if slots and names:
        source += (f"\ndef __setstate__(self, state):\n"
                   f"    {', '.join('self.' + name for name in names)}, = state\n")
    exec(source, namespace)  # the one compiled source of the class
    body = {key: value for key, value in cls.__dict__.items()
            if key not in ("__dict__", "__weakref__")}
    for name, spec in specs:  # defaults live in __init__; a class attribute clashes with a slot
        if slots or spec.factory is not _MISSING or spec.default is _MISSING:
            body.pop(name, None)
        else:
            body[name] = spec.default
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    body.update(__init__=init, __qualname__=cls.__qualname__, __record_fields__=tuple(names),
                __repr__=_repr, __eq__=_eq,
                __record_key__=staticmethod(_key_of([n for n, s in specs if s.compare])))
    body["__hash__"] = _hash if frozen else None
    if frozen:
        body.update(__setattr__=_frozen_setattr, __delattr__=_frozen_delattr)
    if slots:
        body["__slots__"] = tuple(names)
        if names:
            body["__setstate__"] = namespace["__setstate__"]
    made = type(cls)(cls.__name__, cls.__bases__, body)
    if slots and names:
        state_of, new = _key_of(names), copyreg.__newobj__  # type: ignore[attr-defined]

        def __reduce__(self: Any) -> tuple:
            return new, (made,), state_of(self)
        made.__reduce__ = __reduce__  # type: ignore[assignment,method-assign]
    return made


def _record(cls: Any = None, /, *, frozen: bool = False, slots: bool = False) -> Any:
    """Make `cls` a record (see the module's docstring); as `@record` or `@record(...)`."""
    def wrap(cls: type) -> type:
        return _make(cls, frozen, slots)
    return wrap if cls is None else wrap(cls)


if TYPE_CHECKING:
    from dataclasses import dataclass as record, field, replace
else:
    record, field, replace = _record, _field, _replace

__all__ = ["record", "field", "fields", "replace", "FrozenInstanceError"]

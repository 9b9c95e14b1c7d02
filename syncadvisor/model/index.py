"""The files of a run by what they define: modules, functions and classes by qualified
name, and tables of what each file's own model says (its calls by the name they call),
kept up to date as one file at a time is replaced.

Every lookup says what it read (`Db.depend`), so that a replaced file forgets only the
answers that read it: its own content (`("file", path)`), or a name it defines or stops
defining (`("fn", id)`, `("class", id)`, `("module", name)`) for the answers that looked
the name up anywhere, found or not. A file whose functions, classes and module names
keep their interface (an edit inside a body) changes only `("file", path)`.
"""
from __future__ import annotations

from collections import deque
from typing import (Any, Callable, Dict, Hashable, Iterable, Iterator, List, Optional, Set,
                    Tuple)

from .db import Db
from .facts import ClassInfo, FileModel

_MAX_DEPTH = 8


class Table:
    """A project-wide table, key -> items, made of each file's own part: what its model
    says alone, in no other file's light. Items of one key are in file order, then in
    the order the file gives them, and keys rank by where they first appear; so a table
    kept up to date file by file is the table made at once. Made when first read; reading
    a key depends on it (`(name, key)`). Each file's part is kept only where files may be
    replaced (a tracked run)."""

    def __init__(self, db: Db, name: str,
                 part: Callable[[FileModel], Iterable[Tuple[Hashable, object]]],
                 files: Callable[[], Iterable[FileModel]], order: Dict[str, int]):
        self._db = db
        self.name = name
        self.plain = getattr(part, "plain", False)  # items of plain values (`plain_items`)
        self._part = part
        self._files = files
        self._order = order
        self._table: Optional[Dict[Hashable, List[object]]] = None
        self._parts: Dict[str, Dict[Hashable, List[object]]] = {}
        self._holders: Dict[Hashable, Set[str]] = {}  # key -> the paths whose part has it
        # Whether the table's keys are still in the order they first appeared in (none
        # replaced since it was made), and each key's rank where they are not.
        self._in_order = True
        self._ranks: Dict[Hashable, Tuple[int, int]] = {}

    def _made(self) -> Dict[Hashable, List[object]]:
        table = self._table
        if table is None:
            table = self._table = {}
            keep = self._db.track
            for fm in self._files():
                if keep:
                    part = self._parts[fm.path] = self._split(fm)
                    for key, items in part.items():
                        self._holders.setdefault(key, set()).add(fm.path)
                        found = table.get(key)
                        if found is None:
                            table[key] = list(items)
                        else:
                            found.extend(items)
                    continue
                for key, item in self._part(fm):
                    found = table.get(key)
                    if found is None:
                        table[key] = [item]
                    else:
                        found.append(item)
        return table

    def get(self, key: Hashable) -> List[Any]:
        db = self._db
        if db.track:
            db.depend((self.name, key))
        return self._made().get(key, _EMPTY)

    def keys(self) -> List[Hashable]:
        """Every key, by rank (an answer that reads them depends on which there are)."""
        db = self._db
        if db.track:
            db.depend((self.name, _KEYS))
        table = self._made()
        return list(table) if self._in_order else sorted(table, key=self.rank)

    def rank(self, key: Hashable) -> Tuple[int, int]:
        """Where `key` first appears: (the order of the first file whose part has it,
        where it is in that part), or its place in a table made at once."""
        rank = self._ranks.get(key)
        if rank is None:
            if self._in_order:
                self._ranks = {k: (0, i) for i, k in enumerate(self._made())}
                return self._ranks[key]
            path = min(self._holders[key], key=self._order.__getitem__)
            rank = self._ranks[key] = (self._order[path],
                                       list(self._parts[path]).index(key))
        return rank

    def _split(self, fm: FileModel) -> Dict[Hashable, List[object]]:
        part: Dict[Hashable, List[object]] = {}
        for key, item in self._part(fm):
            found = part.get(key)
            if found is None:
                part[key] = [item]
            else:
                found.append(item)
        return part

    def replace(self, path: str, fm: Optional[FileModel]) -> Set[Hashable]:
        """`path`'s part is now `fm`'s (None: gone); the inputs of the keys whose items
        changed. Only in a tracked run."""
        if self._table is None:
            return set()  # (made from the files as they are when first read)
        assert self._db.track, "a table read is kept up to date in tracked runs only"
        order = self._order
        old = self._parts.pop(path, {})
        new = self._split(fm) if fm is not None else {}
        if fm is not None:
            self._parts[path] = new
        # Items that hold a model's records are new objects whatever they say: every key
        # of the file's part changes. Plain items (paths, numbers) compare.
        changed = {k for k in old.keys() | new.keys()
                   if not self.plain or old.get(k) != new.get(k)}
        if list(old) != list(new):
            changed.add(_KEYS)  # (the keys, or the order they first appear in, may change)
        for key in old.keys() - new.keys():
            self._holders[key].discard(path)
        for key in new.keys() - old.keys():
            self._holders.setdefault(key, set()).add(path)
        self._in_order = False
        self._ranks.clear()
        for key in changed:
            if key is _KEYS:
                continue
            holders = sorted(self._holders.get(key, ()), key=order.__getitem__)
            if not holders:
                self._table.pop(key, None)
                self._holders.pop(key, None)
                continue
            items: List[object] = []
            for holder in holders:
                items.extend(self._parts[holder][key])
            self._table[key] = items
        return {(self.name, key) for key in changed}


_EMPTY: List[Any] = []
_PATHS = ("paths",)  # the input of the run's set of files
_KEYS = ("*keys",)  # the input of a table's set of keys


def plain_items(part: Callable) -> Callable:
    """Marks a table's part function as giving items of plain values (strings, numbers,
    tuples of them), which compare cheaply: a replaced file changes only the keys whose
    items differ."""
    part.plain = True  # type: ignore[attr-defined]
    return part


class ProjectIndex:
    """Modules, functions and classes of every file of the run, by qualified name."""

    def __init__(self, db: Db, tables: Iterable[Tuple[str, Callable]] = ()):
        self.db = db
        self.track = db.track
        self.files: Dict[str, FileModel] = {}  # path -> model, in the run's order
        self._order: Dict[str, int] = {}
        self._next = 0
        self._modules: Dict[str, List[str]] = {}  # module name -> paths (first wins)
        self._functions: Dict[str, FileModel] = {}
        self._classes: Dict[str, ClassInfo] = {}
        self._class_files: Dict[str, FileModel] = {}
        self._forwarders: Dict[str, int] = {}
        # Every name a project class's method has, with how many methods have it.
        self._method_names: Dict[str, int] = {}
        self.tables: Dict[str, Table] = {
            name: Table(db, name, part, self.files.values, self._order) for name, part in tables}
        if not self.track:
            # Nothing to record: the lookups are the tables' own (C) methods, the commonest
            # questions of a run by far.
            self.function_file = self._functions.get  # type: ignore[assignment]
            self.is_function = self._functions.__contains__  # type: ignore[assignment]
            self.klass = self._classes.get  # type: ignore[assignment]
            self.is_class = self._classes.__contains__  # type: ignore[assignment]
            self.class_file = self._class_files.get  # type: ignore[assignment]
            self.is_forwarder = self._forwarders.__contains__  # type: ignore[assignment]
            self.is_method_name = self._method_names.__contains__  # type: ignore[assignment]
            self.file_at = self.files.__getitem__  # type: ignore[assignment]
            self.read = _itself  # type: ignore[method-assign]
        self.mro = db.query("mro", self._linearised, [])
        self.method = db.query("method", self._method)
        self.external_name = db.query("external_name", self._external_name)

    # --- the files ---------------------------------------------------------------------

    def add_all(self, models: Iterable[FileModel]) -> None:
        """The run's files, in its order, into an empty index."""
        assert not self.files, "add_all fills an empty index"
        ignored: Set[Hashable] = set()
        for fm in models:
            if fm.path in self.files:
                continue
            self._order[fm.path] = self._next
            self._next += 1
            self.files[fm.path] = fm
            self._add(fm, ignored)

    def replace(self, path: str, fm: Optional[FileModel]) -> Set[Hashable]:
        """The run's file at `path` is now `fm` (None: gone from the run); the inputs that
        changed, for `Db.changed`."""
        changed: Set[Hashable] = {("file", path)}
        old = self.files.get(path)
        if old is not None:
            self._remove(old, changed)
        if fm is not None:
            if path not in self._order:
                self._order[path] = self._next
                self._next += 1
            self.files[path] = fm
            self._add(fm, changed)
        else:
            self.files.pop(path, None)
        for table in self.tables.values():
            changed |= table.replace(path, fm)
        if old is not None and fm is not None:
            changed -= _same_interface(old, fm)
        else:
            changed.add(_PATHS)
        if fm is not None and old is None:  # (the same dict, which the tables read, in order)
            ordered = sorted(self.files.items(), key=lambda item: self._order[item[0]])
            self.files.clear()
            self.files.update(ordered)
        return changed

    def _remove(self, fm: FileModel, changed: Set[Hashable]) -> None:
        paths = self._modules.get(fm.module, [])
        if fm.path in paths:
            paths.remove(fm.path)
            if not paths:
                del self._modules[fm.module]
        changed.add(("module", fm.module))
        for fid in fm.functions:
            if self._functions.get(fid) is fm:
                del self._functions[fid]
            changed.add(("fn", fid))
        for cid, info in fm.classes.items():
            if self._classes.get(cid) is info:
                del self._classes[cid]
                del self._class_files[cid]
            changed.add(("class", cid))
            for name in info.methods:
                _count(self._method_names, name, -1)
        for fid in fm.forwarders:
            _count(self._forwarders, fid, -1)
        changed.add(("forwarders",))
        changed.add(("classes",))
        changed.add(("method-names",))

    def _add(self, fm: FileModel, changed: Set[Hashable]) -> None:
        paths = self._modules.setdefault(fm.module, [])
        paths.append(fm.path)
        paths.sort(key=self._order.__getitem__)
        changed.add(("module", fm.module))
        for fid in fm.functions:
            self._functions[fid] = fm
            changed.add(("fn", fid))
        for cid, info in fm.classes.items():
            self._classes[cid] = info
            self._class_files[cid] = fm
            changed.add(("class", cid))
            for name in info.methods:
                _count(self._method_names, name, 1)
        for fid in fm.forwarders:
            _count(self._forwarders, fid, 1)
        changed.add(("forwarders",))
        changed.add(("classes",))
        changed.add(("method-names",))

    # --- lookups -----------------------------------------------------------------------

    def order(self, path: str) -> int:
        """Where a file is in the run's order."""
        return self._order[path]

    def module(self, name: str) -> Optional[FileModel]:
        if self.track:
            self.db.depend(("module", name))
        paths = self._modules.get(name)
        return self.files[paths[0]] if paths else None

    def function_file(self, fid: Optional[str]) -> Optional[FileModel]:
        """The model of the file that defines a function (or method, or lambda) by id."""
        if fid is None:
            return None
        if self.track:
            self.db.depend(("fn", fid))
        return self._functions.get(fid)

    def is_function(self, fid: Optional[str]) -> bool:
        return self.function_file(fid) is not None

    def klass(self, cid: Optional[str]) -> Optional[ClassInfo]:
        if cid is None:
            return None
        if self.track:
            self.db.depend(("class", cid))
        return self._classes.get(cid)

    def is_class(self, cid: Optional[str]) -> bool:
        return self.klass(cid) is not None

    def class_file(self, cid: str) -> Optional[FileModel]:
        if self.track:
            self.db.depend(("class", cid))
        return self._class_files.get(cid)

    def class_ids(self) -> Iterable[str]:
        """Every project class, in the run's order (an answer that reads it depends on
        which there are). Answers made from them may keep the first of several (what
        holds a variable): a replaced file's classes, added again last, keep their place."""
        if not self.track:
            return self._classes.keys()  # (filled in the run's order, and never replaced)
        self.db.depend(("classes",))
        ordered: Dict[str, None] = {}
        for fm in self.files.values():
            for cid in fm.classes:
                if cid in self._classes:
                    ordered.setdefault(cid)
        return ordered.keys()

    def is_forwarder(self, fid: str) -> bool:
        if self.track:
            self.db.depend(("forwarders",))
        return fid in self._forwarders

    def is_method_name(self, name: Optional[str]) -> bool:
        if self.track:
            self.db.depend(("method-names",))
        return name in self._method_names

    def read(self, fm: FileModel) -> FileModel:
        """`fm`'s content is read (an answer that depends on it)."""
        if self.track:
            self.db.depend(("file", fm.path))
        return fm

    def file_at(self, path: str) -> FileModel:
        """The model of the run's file at `path`, read. A file gone from the run reads as
        an empty model: an answer about it is checked (`Db.verify`) before whatever
        asked it is answered again, and must not fail for want of the file."""
        if self.track:
            self.db.depend(("file", path))
            found = self.files.get(path)
            return found if found is not None else FileModel(path=path, module="")
        return self.files[path]

    def paths(self) -> List[str]:
        """Every file's path, in the run's order: an answer that reads it depends on which
        files there are, not on what they hold."""
        if self.track:
            self.db.depend(_PATHS)
        return list(self.files)

    def all_files(self) -> Iterator[FileModel]:
        """Every file's model, read, in the run's order."""
        track = self.track
        for fm in self.files.values():
            if track:
                self.db.depend(("file", fm.path))
            yield fm

    def module_global(self, qname: str) -> Optional[list]:
        """Bindings of `pkg.mod.name` when `pkg.mod` is a module of this run."""
        module, _, name = qname.rpartition(".")
        fm = self.module(module)
        if fm is None:
            return None
        return self.read(fm).globals.get(name)

    def module_path(self, qname: str) -> str:
        """The path of the module a module-level name of the run is in."""
        fm = self.module(qname.rpartition(".")[0])
        return fm.path if fm is not None else ""

    # --- classes -------------------------------------------------------------------------

    def _linearised(self, class_id: str) -> List[str]:
        """The class and its project base classes, nearest first (not to be changed)."""
        order: List[str] = []
        queue = deque([class_id])
        while queue and len(order) < 32:
            cid = queue.popleft()
            if cid in order or not self.is_class(cid):
                continue
            order.append(cid)
            queue.extend(self.base_classes(cid))
        return order

    def base_classes(self, class_id: str) -> List[str]:
        """A project class's bases, each followed through the project's modules."""
        info = self.klass(class_id)
        if info is None:
            return []
        return [b if self.is_class(b) else self.external_name(b) for b in info.bases]

    def external_bases(self, class_id: str) -> List[str]:
        """Qualified names of the non-project classes a project class derives from, as
        named outside the project (`external_name`)."""
        result: List[str] = []
        for cid in self.mro(class_id):
            result.extend(b for b in self.base_classes(cid) if not self.is_class(b))
        return result

    def _method(self, class_id: str, name: str) -> Optional[str]:
        for cid in self.mro(class_id):
            fid = f"{cid}.{name}"
            if self.is_function(fid):
                return fid
        return None

    def class_attr(self, class_id: str, attr: str) -> list:
        bounds: list = []
        for cid in self.mro(class_id):
            info = self.klass(cid)
            fm = self.class_file(cid)
            if info is not None and fm is not None:
                self.read(fm)
                bounds.extend(info.attrs.get(attr, ()))
        return bounds

    # --- names through modules -----------------------------------------------------------

    def _external_name(self, qname: str) -> str:
        """What a name reached through the project's own modules stands for: `pkg.compat.
        layers.Layer`, where `pkg/compat.py` does `from tf_keras import *` (or `import
        tf_keras as keras`, reached as `pkg.compat.keras.layers.Layer`), is `tf_keras.
        layers.Layer`. A name the module binds itself is followed through its first
        binding; one it does not, through its first star import. A name of the project's
        own (a class, a function) or outside the project stays as it is."""
        for _ in range(_MAX_DEPTH):
            followed = self.followed(qname, self.module_prefix(qname))
            if followed is None:
                return qname
            qname = followed
        return qname

    def module_prefix(self, qname: str) -> Optional[str]:
        """The longest module of the index that `qname` is a name in."""
        parts = qname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            if self.module(module) is not None:
                return module
        return None

    def followed(self, qname: str, module: Optional[str]) -> Optional[str]:
        """`qname`, a name in `module` of the index, one binding further; None where it
        goes no further."""
        if module is None:
            return None
        fm = self.module(module)
        if fm is None:
            return None
        self.read(fm)
        rest = qname[len(module) + 1:].split(".")
        name = rest[0]
        if name in fm.globals:
            target = fm.exports.get(name)
        else:
            target = f"{fm.star_imports[0]}.{name}" if fm.star_imports else None
        if target is None:
            return None
        followed = ".".join([target] + rest[1:])
        return None if followed == qname else followed


def _itself(fm: FileModel) -> FileModel:
    return fm


def _count(table: Dict[str, int], key: str, by: int) -> None:
    count = table.get(key, 0) + by
    if count > 0:
        table[key] = count
    else:
        table.pop(key, None)


def _same_interface(old: FileModel, new: FileModel) -> Set[Hashable]:
    """The name inputs of a replaced file that stand for the same thing as before: the
    functions, classes and module whose interface (what other files can look up in them)
    is unchanged."""
    same: Set[Hashable] = set()
    for fid, info in new.functions.items():
        before = old.functions.get(fid)
        if before is not None and (before.name, before.klass, before.params, before.static) == \
                (info.name, info.klass, info.params, info.static):
            same.add(("fn", fid))
    for cid, klass in new.classes.items():
        was = old.classes.get(cid)
        if was is not None and (was.name, was.bases, was.methods) == \
                (klass.name, klass.bases, klass.methods):
            same.add(("class", cid))
    if old.module == new.module and old.globals.keys() == new.globals.keys() and \
            old.exports == new.exports and old.star_imports == new.star_imports:
        same.add(("module", new.module))
    if old.forwarders == new.forwarders:
        same.add(("forwarders",))
    if old.classes.keys() == new.classes.keys() and \
            all(("class", cid) in same for cid in new.classes):
        same.add(("classes",))
    if sorted(m for c in old.classes.values() for m in c.methods) == \
            sorted(m for c in new.classes.values() for m in c.methods):
        same.add(("method-names",))
    return same

"""What the model builder keeps while it walks a file.

`ast_builder.AstModelBuilder` walks Python's `ast`; this class holds the bookkeeping
that does not look at a node, and `finish`, which resolves every name once the walk is
over.
"""
from __future__ import annotations

import re

from typing import Dict, List, Optional, Sequence, Tuple

from . import tfapi
from .facts import (
    OTHER, QNAME, Argument, Bound, CallEdge, ClassInfo, CreationCall, EnumRef, FileModel,
    FunctionInfo, LayerCall, ObjectUse, Read, ReplicaEntry, ScopeEntry, Span, Update, Value,
)
from .names import CLASS, COMPREHENSION, FUNCTION, MODULE, Binding, NameResolver, PendingRef, Scope

_KERAS_IMPORT_FAMILIES = (("tf_keras", tfapi.KERAS2), ("keras", tfapi.KERAS3))
MEMBER_LIKE = re.compile(r"^[A-Z][A-Z0-9_]*$")  # an enum member's spelling
MAX_VALUE_DEPTH = 2  # how deep call arguments are kept as values


def literal_int(text: str) -> Optional[int]:
    try:
        return int(text.replace("_", ""), 0)
    except ValueError:
        return None


class Function:
    """Walk state for one function, or for the module (id None)."""

    __slots__ = ("id", "self_name", "klass", "scopes", "info", "stateless")

    def __init__(self, id_: Optional[str], self_name: Optional[str], klass: Optional[str],
                 info: Optional[FunctionInfo]):
        self.id = id_
        self.self_name = self_name  # the name of `self` in a method (or its closures)
        self.klass = klass
        self.scopes: List[int] = []  # open `with X.scope()` entries, innermost last
        self.info = info
        self.stateless = 0  # open `with StatelessScope(...)` blocks


class WalkState:
    def __init__(self, path: str, module: str, resolver: NameResolver):
        self.model = FileModel(path=path, module=module)
        self._resolver = resolver
        self._module_scope = Scope(MODULE, None)
        self._scope = self._module_scope
        self._seq = 0
        self._functions: List[Function] = [Function(None, None, None, None)]
        self._fn = self._functions[-1]
        self._classes: List[ClassInfo] = []
        self._qualname: List[str] = []
        self._lambda_ids: Dict[int, str] = {}
        self._import_after: Optional[Span] = None  # the preamble's last statement
        self._import_before: Optional[Span] = None  # the first other statement
        # Resolved in `finish`, once every binding is known.
        self._pending_values: List[Tuple[Value, PendingRef]] = []
        self._pending_bounds: List[Tuple[Bound, PendingRef]] = []
        self._pending_names: List[Tuple[PendingRef, Bound]] = []
        self._pending_creations: List[Tuple[CreationCall, Optional[PendingRef]]] = []
        self._pending_enum_refs: List[Tuple[PendingRef, str, Span, Span, str]] = []
        self._pending_bases: List[Tuple[ClassInfo, List[PendingRef]]] = []
        self._keras_imports: set = set()
        # Local names that may stand for a variable-creating callable (`Variable as V`).
        self._creation_aliases: set = set()
        self._creation_of_node: Dict[int, int] = {}  # id(call node) -> creation index
        self._entry_lambdas: set = set()  # lambdas passed to strategy.run & co
        # Calls whose meaning depends on what their callee resolves to.
        self._pending_updates: List[Tuple[Update, Optional[PendingRef], Optional[Tuple[Bound, Optional[Value]]]]] = []
        self._pending_checkpoints: List[Tuple[PendingRef, List[Read]]] = []
        self._pending_saves: List[Tuple[PendingRef, Read, Optional[Read]]] = []
        self._pending_layer_calls: List[Tuple[LayerCall, PendingRef]] = []

    # --- small helpers -------------------------------------------------------

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _ref(self, parts: Tuple[str, ...]) -> PendingRef:
        return PendingRef(self._scope, self._next_seq(), parts)

    def _push_function(self, fn: Function) -> None:
        self._functions.append(fn)
        self._fn = fn  # the innermost: read at every call, name and attribute

    def _pop_function(self) -> None:
        self._functions.pop()
        self._fn = self._functions[-1]

    def _self_head(self, parts: Tuple[str, ...]) -> bool:
        fn = self._fn
        return fn.self_name is not None and fn.klass is not None and parts[0] == fn.self_name

    def _bind(self, name: str, bound: Bound, alias: Optional[Tuple[str, ...]] = None) -> None:
        binding = Binding(self._next_seq(), bound, alias, self._scope if alias else None)
        self._scope.bind(name, binding)
        target = alias[-1] if alias else (bound.qname or "").rpartition(".")[2]
        if target in tfapi.CREATION_CALLEE_NAMES and target != name:
            self._creation_aliases.add(name)

    def _bind_local(self, name: str) -> None:
        self._bind(name, Bound("local", text=name))

    def _lambda_id(self, node: object) -> str:
        lambda_id = self._lambda_ids.get(id(node))
        if lambda_id is None:
            owner = self._fn.id or self.model.module
            lambda_id = self._lambda_ids[id(node)] = f"{owner}.<lambda{len(self._lambda_ids)}>"
        return lambda_id

    def _qualified(self, name: str) -> str:
        return ".".join([self.model.module] + self._qualname + [name])

    def _pop_scope(self) -> None:
        self._scope = self._scope.parent or self._module_scope

    # --- imports ---------------------------------------------------------------

    def _import(self, full: str, asname: Optional[str]) -> None:
        """`import a.b.c [as x]`."""
        self._note_keras_import(full)
        if asname is not None:
            self._bind(asname, Bound("qname", full, text=full))
        else:
            head = full.split(".", 1)[0]
            self._bind(head, Bound("qname", head, text=head))

    def _import_from(self, module: str, level: int, names: Optional[Sequence[Tuple[str, Optional[str]]]]
                     ) -> None:
        """`from [.]module import name [as local], ...`; names None for `import *`."""
        if level:
            module = self._absolute(level, module)
        self._note_keras_import(module)
        for name, asname in names or ():
            full = f"{module}.{name}" if module else name
            self._note_keras_import(full)
            local = asname if asname is not None else name
            self._bind(local, Bound("qname", full, text=local))

    def _absolute(self, level: int, module: str) -> str:
        package = self.model.module.split(".")
        if not self.model.path.endswith("__init__.py"):
            package = package[:-1]
        drop = level - 1
        package = package[: len(package) - drop] if drop <= len(package) else []
        return ".".join(package + ([module] if module else []))

    def _note_keras_import(self, full: str) -> None:
        canonical = self._resolver.canonical(full)
        for prefix, family in _KERAS_IMPORT_FAMILIES:
            if canonical == prefix or canonical.startswith(prefix + "."):
                self._keras_imports.add(family)

    # --- classes, functions, lambdas, comprehensions ---------------------------

    def _enter_class(self, name: str, name_span: Span, base_parts: Sequence[Tuple[str, ...]]
                     ) -> None:
        class_id = self._qualified(name)
        self._bind(name, Bound("qname", class_id, text=name))
        info = ClassInfo(class_id, name, (), name_span)
        self.model.classes[class_id] = info
        self._pending_bases.append((info, [self._ref(parts) for parts in base_parts]))
        self._classes.append(info)
        self._qualname.append(name)
        self._scope = Scope(CLASS, self._scope)

    def _leave_class(self) -> None:
        self._pop_scope()
        self._qualname.pop()
        self._classes.pop()

    def _enter_function(self, name: str, name_span: Span, params: List[str], static: bool
                        ) -> None:
        function_id = self._qualified(name)
        self._bind(name, Bound("qname", function_id, text=name))
        in_class = self._scope.kind == CLASS and bool(self._classes)
        if in_class:
            klass: Optional[str] = self._classes[-1].id
            self_name = params[0] if params and not static else None
            self._classes[-1].methods += (name,)
        else:  # a nested function sees the `self` of the method around it
            klass, self_name = self._fn.klass, self._fn.self_name
        info = FunctionInfo(function_id, name, klass if in_class else None, name_span)
        self.model.functions[function_id] = info
        self._scope = Scope(FUNCTION, self._scope)
        self._qualname.extend([name, "<locals>"])
        for param in params:
            self._bind_local(param)
        self._push_function(Function(function_id, self_name, klass, info))

    def _leave_function(self) -> None:
        self._pop_function()
        del self._qualname[-2:]
        self._pop_scope()

    def _enter_lambda(self, node: object, span: Span, params: List[str]) -> None:
        outer = self._fn
        lambda_id = self._lambda_id(node)
        info = FunctionInfo(lambda_id, "<lambda>", None, span)
        self.model.functions[lambda_id] = info
        if id(node) not in self._entry_lambdas:
            # Runs where it is written (tf.cond, map_fn, sorted...): the context it sits in.
            self.model.calls.append(CallEdge(outer.id, Bound("call", qname=lambda_id),
                                             tuple(outer.scopes), info.span))
        self._scope = Scope(FUNCTION, self._scope)
        for param in params:
            self._bind_local(param)
        self._push_function(Function(lambda_id, outer.self_name, outer.klass, info))

    def _leave_lambda(self) -> None:
        self._pop_function()
        self._pop_scope()

    def _enter_comprehension_scope(self) -> None:
        self._scope = Scope(COMPREHENSION, self._scope)

    def _name_creation_targets(self, elements: Sequence[object], target: str) -> None:
        """`x = tf.Variable(...)`: the creation's result is known as `target`."""
        for element in elements:
            index = self._creation_of_node.get(id(element))
            if index is not None:
                self.model.creations[index].target = target

    # --- what a builder tells about its tree's nodes ------------------------------------
    # The recording below is the same for both trees; it sees nodes only through these.

    def _dotted(self, node) -> Optional[Tuple[str, ...]]:
        """('a', 'b') for `a.b`; None for anything but a plain dotted name."""
        raise NotImplementedError

    def _attribute_of(self, node) -> Optional[Tuple[object, str]]:
        """(value, attr) for `value.attr`."""
        raise NotImplementedError

    def _name_of(self, node) -> Optional[str]:
        """`x` for the plain name `x` (libcst's names include None, True, False)."""
        raise NotImplementedError

    def _func_of(self, node) -> Optional[object]:
        """The callee expression of a call; None for anything else."""
        raise NotImplementedError

    def _call_arguments(self, call) -> Tuple[List[object], List[Tuple[str, object]]]:
        """(positional values, [(keyword, value)]) of a call, `*`/`**` arguments left out."""
        raise NotImplementedError

    def _has_arguments(self, call) -> bool:
        raise NotImplementedError

    def _is_lambda(self, node) -> bool:
        raise NotImplementedError

    def _member_span(self, node) -> Span:
        """The span of `attr` in the attribute `value.attr`."""
        raise NotImplementedError

    def _span(self, node) -> Span:
        raise NotImplementedError

    def _callee_text(self, parts: Tuple[str, ...]) -> str:
        return ".".join(parts)

    def _code(self, node) -> str:
        raise NotImplementedError

    def _is_self(self, node) -> bool:
        raise NotImplementedError

    def _bound_for(self, value, text: str) -> Bound:
        raise NotImplementedError

    def _ref_bound(self, node, text: Optional[str] = None) -> Bound:
        raise NotImplementedError

    def _value(self, node, depth: int = 0) -> Value:
        raise NotImplementedError

    def _arguments(self, call) -> Tuple[Argument, ...]:
        raise NotImplementedError

    # --- strategy scopes ----------------------------------------------------------

    def _open_scopes(self, items: Sequence[object]) -> Tuple[int, int]:
        """Enter a `with` statement's items (the expressions before `as`); what to pass
        to `_close_scopes` when it ends."""
        fn = self._fn
        stateless = sum(1 for item in items if self._is_stateless_scope(item))
        fn.stateless += stateless
        opened = 0
        for item in items:
            receiver = self._scope_receiver(item)
            if receiver is None:
                continue
            entry = ScopeEntry((), self._code(receiver), self._span(item), fn.id)
            attribute = self._attribute_of(receiver)
            if attribute is not None and self._is_self(attribute[0]):
                entry.receivers = (Bound("self-attr", qname=fn.klass, attr=attribute[1],
                                         text=entry.text, span=self._span(receiver)),)
            else:
                entry.receivers = (self._bound_for(receiver, entry.text),)
            self.model.scopes.append(entry)
            fn.scopes.append(len(self.model.scopes) - 1)
            opened += 1
        return stateless, opened

    def _close_scopes(self, stateless: int, opened: int) -> None:
        fn = self._fn
        fn.stateless -= stateless
        for _ in range(opened):
            fn.scopes.pop()

    def _is_stateless_scope(self, item) -> bool:
        func = self._func_of(item)
        if func is None:
            return False
        attribute = self._attribute_of(func)
        name = attribute[1] if attribute is not None else self._name_of(func) or ""
        return name in tfapi.STATELESS_SCOPE_NAMES

    def _scope_receiver(self, item) -> Optional[object]:
        """`X` for a `X.scope()` with-item."""
        func = self._func_of(item)
        if func is None or self._has_arguments(item):
            return None
        attribute = self._attribute_of(func)
        return attribute[0] if attribute is not None and attribute[1] == "scope" else None

    # --- calls and attributes -------------------------------------------------------

    def _record_call(self, node) -> None:
        func = self._func_of(node)
        attribute = self._attribute_of(func)
        last = attribute[1] if attribute is not None else self._name_of(func)
        if last is None:
            return
        fn = self._fn
        if attribute is not None and self._is_self(attribute[0]):
            callee = Bound("method", fn.klass, "", None, last)  # kind, qname, text, span, attr
            self.model.calls.append(CallEdge(fn.id, callee, tuple(fn.scopes), self._span(node)))
        else:
            parts = self._dotted(func)
            if parts is not None:
                # A function, a class, a method of an object (`model.build()`), or an
                # object's `__call__` (`accumulator(grads)`).
                if attribute is not None:
                    options, method = (self._ref_bound(attribute[0]),), last
                else:
                    options, method = (self._ref_bound(func),), "__call__"
                # (kind, qname, text, span, attr, options): positional, as in every hot
                # path (a call with keywords costs more than the object it makes)
                callee = Bound("call", None, self._callee_text(parts), None, method, options)
                self._pending_bounds.append((callee, self._ref(parts)))
                self.model.calls.append(
                    CallEdge(fn.id, callee, tuple(fn.scopes), self._span(node)))
        if last in tfapi.CREATION_CALLEE_NAMES or last in self._creation_aliases:
            self._record_creation(node, func, attribute, last, fn)
        if last in tfapi.UPDATE_CALLEE_NAMES and not fn.stateless:
            self._record_update(node, func, attribute, last, fn)
        if attribute is not None:
            receiver = attribute[0]
            if last in tfapi.READ_METHODS and not self._has_arguments(node):
                self.model.reads.append(Read(self._ref_bound(receiver), last, self._span(node),
                                             fn.id, tuple(fn.scopes)))
            if last in tfapi.REPLICA_RUN_METHODS or last in tfapi.REPLICA_CALL_METHODS \
                    or last in tfapi.CROSS_REPLICA_FN_METHODS:
                self._record_entry(node, receiver, last, fn)
            if last in tfapi.OBJECT_USE_METHODS:
                self.model.uses.append(ObjectUse(self._ref_bound(receiver), last,
                                                 self._span(node), fn.id, tuple(fn.scopes)))
        if last == "Checkpoint" or last in tfapi.SAVE_METHODS:
            self._record_save(node, func, attribute, last, fn)
        if last in tfapi.BATCH_NORMALIZATION_NAMES:
            parts = self._dotted(func)
            if parts is not None:
                layer = LayerCall(None, self._arguments(node), self._span(node), fn.id,
                                  tuple(fn.scopes))
                self._pending_layer_calls.append((layer, self._ref(parts)))

    def _record_update(self, node, func, attribute, last: str, fn: Function) -> None:
        positional, _ = self._call_arguments(node)
        value = self._value(positional[0]) if positional else None
        receiver = self._ref_bound(attribute[0]) if attribute is not None else \
            Bound("local", text=last)
        update = Update(receiver, last, value, self._span(node), fn.id, tuple(fn.scopes))
        # `tf.compat.v1.assign(ref, value)`, or a Keras optimizer's `self.assign(var, value)`:
        # the first argument is what changes.
        alternative = None
        if positional:
            second = self._value(positional[1]) if len(positional) > 1 else None
            alternative = (self._ref_bound(positional[0]), second)
        parts = self._dotted(func)
        ref = self._ref(parts) if parts is not None else None
        if attribute is not None and self._is_self(attribute[0]) and len(positional) >= 2:
            ref = None  # a Keras optimizer's `self.assign(variable, value)`: a method in effect
            update.receiver, update.value = alternative  # type: ignore[misc]
            alternative = None
        self._pending_updates.append((update, ref, alternative))

    def _record_entry(self, node, receiver, last: str, fn: Function) -> None:
        positional, keyword_list = self._call_arguments(node)
        keywords = dict(keyword_list)
        # `strategy.extended.update(...)`, `strategy.extended.call_for_each_replica(...)`
        extended = self._attribute_of(receiver)
        if extended is not None and extended[1] != "extended":
            extended = None
        if last in tfapi.CROSS_REPLICA_FN_METHODS:
            if last == "update" and extended is None:
                return
            index = tfapi.CROSS_REPLICA_FN_METHODS[last]
            target = keywords.get("merge_fn" if last == "merge_call" else "fn")
            if target is None and len(positional) > index:
                target = positional[index]
            kind, strategy = "cross", None
        else:
            target = keywords.get("fn", positional[0] if positional else None)
            if last in tfapi.REPLICA_CALL_METHODS:
                if extended is None:
                    return
                receiver = extended[0]
            kind, strategy = "replica", self._ref_bound(receiver)
        if target is None:
            return
        if self._is_lambda(target):
            self._entry_lambdas.add(id(target))
        self.model.entries.append(ReplicaEntry(kind, strategy, self._ref_bound(target),
                                               self._span(node), fn.id, tuple(fn.scopes)))

    def _record_save(self, node, func, attribute, last: str, fn: Function) -> None:
        parts = self._dotted(func)
        span, scopes = self._span(node), tuple(fn.scopes)
        positional, keywords = self._call_arguments(node)
        if last == "Checkpoint":
            if parts is None:
                return
            reads = [Read(self._ref_bound(value), "checkpoint", span, fn.id, scopes)
                     for _, value in keywords]
            self._pending_checkpoints.append((self._ref(parts), reads))
            return
        function_style = Read(self._ref_bound(positional[0]), "save", span, fn.id, scopes) \
            if positional else None
        method_style = Read(self._ref_bound(attribute[0]), "save", span, fn.id, scopes) \
            if attribute is not None else None
        if parts is not None and function_style is not None:
            self._pending_saves.append((self._ref(parts), function_style, method_style))
        elif method_style is not None:
            self.model.reads.append(method_style)

    def _record_creation(self, node, func, attribute, last: str, fn: Function) -> None:
        method = last if last in tfapi.CREATION_METHODS else None
        on_self = bool(method and attribute is not None and self._is_self(attribute[0]))
        args = self._arguments(node)
        parts = self._dotted(func)
        creation = CreationCall(
            callee=None, method=method, on_self=on_self, klass=fn.klass if on_self else None,
            function=fn.id, args=args, span=self._span(node), func_span=self._span(func),
            func_text=".".join(parts) if parts else self._code(func), scopes=tuple(fn.scopes),
        )
        self._pending_creations.append((creation, self._ref(parts) if parts else None))
        self._creation_of_node[id(node)] = len(self.model.creations)
        self.model.creations.append(creation)

    def _record_attribute(self, node, value, member: str) -> None:
        """`self.x` (a load, counted) or `<enum class>.MEMBER` (an enum reference)."""
        if self._is_self(value):
            key = (self._fn.id, member)
            loads = self.model.self_loads
            loads[key] = loads.get(key, 0) + 1
            return
        if not "A" <= member[0] <= "Z" or not MEMBER_LIKE.match(member):
            return  # (the first test spares most attributes the regular expression)
        parts = self._dotted(value)
        if parts is None:
            return
        self._pending_enum_refs.append(
            (self._ref(parts), member, self._span(node), self._member_span(node), ".".join(parts)))

    # --- after the walk -----------------------------------------------------------

    def _bounds_of_name(self, ref: PendingRef) -> List[Bound]:
        """Every binding a plain name may have where it is used (if/else branches)."""
        resolver = self._resolver
        binding = resolver.lookup(ref.scope, ref.parts[0], ref.seq)
        if binding is None:
            return []
        scope: Optional[Scope] = ref.scope
        while scope is not None and binding not in scope.bindings.get(ref.parts[0], ()):
            scope = scope.parent
        entries = scope.bindings[ref.parts[0]] if scope is not None else [binding]
        return [self._resolved_bound(b) for b in entries]

    def _resolved_bound(self, binding: Binding) -> Bound:
        bound = binding.bound
        if binding.alias_parts is not None:
            qname = self._resolver.resolve_binding(binding)
            return Bound("qname", qname, text=bound.text, span=bound.span) if qname else \
                Bound("local", text=bound.text, span=bound.span)
        return bound

    def finish(self) -> FileModel:
        if self._import_before is not None:
            self.model.import_line = self._import_before.line
        elif self._import_after is not None:
            self.model.import_line = self._import_after.end_line + 1
        resolve = self._resolver.resolve
        for value, ref in self._pending_values:
            value.qname = resolve(ref)
            if value.kind == QNAME and value.qname is None:
                value.kind = OTHER
        for bound, ref in self._pending_bounds:
            bound.qname = resolve(ref)
            if bound.kind == "qname" and bound.qname is None:
                bound.kind = "local"
        for ref, bound in self._pending_names:
            bound.options = tuple(b for b in self._bounds_of_name(ref) if b is not bound)
        for creation, ref in self._pending_creations:
            creation.callee = resolve(ref) if ref is not None else None
        for update, ref, alternative in self._pending_updates:
            if ref is not None and alternative is not None and \
                    resolve(ref) in tfapi.UPDATE_FUNCTIONS:
                update.receiver, update.value = alternative
                update.function_style = True
            self.model.updates.append(update)
        for ref, reads in self._pending_checkpoints:
            if resolve(ref) in tfapi.CHECKPOINT_CLASSES:
                self.model.reads.extend(reads)
        for ref, function_style, method_style in self._pending_saves:
            if resolve(ref) in tfapi.SAVE_FUNCTIONS:
                self.model.reads.append(function_style)
            elif method_style is not None:
                self.model.reads.append(method_style)
        for layer, ref in self._pending_layer_calls:
            layer.callee = resolve(ref)
            self.model.layer_calls.append(layer)
        for info, refs in self._pending_bases:
            info.bases = tuple(q for q in (resolve(r) for r in refs) if q)
        for ref, member, span, member_span, text in self._pending_enum_refs:
            qname = resolve(ref)
            if qname in tfapi.ENUM_CLASSES:
                self.model.enum_refs.append(EnumRef(qname, member, span, member_span, text))
        for name, entries in self._module_scope.bindings.items():
            self.model.globals[name] = [self._resolved_bound(b) for b in entries]
        self.model.keras_families = tuple(sorted(self._keras_imports))
        return self.model

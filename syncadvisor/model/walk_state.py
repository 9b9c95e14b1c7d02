"""What a model builder keeps while it walks a file, whatever the tree.

Two builders share this: `builder.ModelBuilder` walks libcst's tree (exact spans, the
tree fixes are made against) and `ast_builder.AstModelBuilder` walks Python's own `ast`
(ten times faster to parse). Both record the same bindings, calls, creations and scopes
in the same order; this class holds the bookkeeping that does not look at a node, and
`finish`, which resolves every name once the walk is over.
"""
from __future__ import annotations

import re

from typing import Dict, List, Optional, Sequence, Tuple

from . import tfapi
from .facts import (
    OTHER, QNAME, Bound, CallEdge, ClassInfo, CreationCall, EnumRef, FileModel, FunctionInfo,
    LayerCall, Read, Span, Update, Value,
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

    @property
    def _fn(self) -> Function:
        return self._functions[-1]

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
        self._functions.append(Function(function_id, self_name, klass, info))

    def _leave_function(self) -> None:
        self._functions.pop()
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
        self._functions.append(Function(lambda_id, outer.self_name, outer.klass, info))

    def _leave_lambda(self) -> None:
        self._functions.pop()
        self._pop_scope()

    def _enter_comprehension_scope(self) -> None:
        self._scope = Scope(COMPREHENSION, self._scope)

    def _name_creation_targets(self, elements: Sequence[object], target: str) -> None:
        """`x = tf.Variable(...)`: the creation's result is known as `target`."""
        for element in elements:
            index = self._creation_of_node.get(id(element))
            if index is not None:
                self.model.creations[index].target = target

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

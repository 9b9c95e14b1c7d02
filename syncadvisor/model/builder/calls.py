"""Calls: the edge of each, higher-order calls (`tf.function(f)`, `strategy.run(fn)`),
constructions, partials and the objects a call may hand over.
"""
from __future__ import annotations

import ast
from sys import intern
from typing import Dict, List, Optional, Tuple

from .. import tfapi
from ..facts import (
    BOUND_CALL, BOUND_METHOD, ENTRY_CROSS, ENTRY_REPLICA, READ_WRITE, Bound, CallEdge,
    Construction, LayerCall, ObjectUse, Read, ReplicaEntry,
)
from .syntax import (
    ATTRIBUTE, NAME, PARTIAL_NAMES, PASSABLE, argument_slot, attribute_of, dotted_parts,
    has_arguments, name_of, unstarred,
)
from .state import Function, Walk
from .arguments import argument_items, arguments_of, call_arguments
from .bindings import ref_bound
from .effects import creator_scope, record_creation, record_save, record_update
from .handovers import handed_bound


def record_call(w: Walk, node: ast.Call) -> None:
    func = node.func
    attribute = attribute_of(func)
    last = attribute[1] if attribute is not None else name_of(func)
    if last is None:
        return
    fn = w.fn
    callee: Optional[Bound] = None
    parts: Optional[Tuple[str, ...]] = None
    edge = -1
    if fn.next_creator is not None and last == fn.next_creator[0] and attribute is None \
            and fn.id is not None and fn.node is not None:
        w.creator_candidates[fn.id] = (fn.node, fn.next_creator[1])
    if attribute is not None and w.is_self(attribute[0]):
        callee = Bound(BOUND_METHOD, fn.klass, "", None, last)  # kind, qname, text, span, attr
    else:
        parts = dotted_parts(func)
        if parts is not None:
            # A function, a class, a method of an object (`model.build()`), or an
            # object's `__call__` (`accumulator(grads)`).
            if attribute is not None:
                options, method = (ref_bound(w, attribute[0]),), last
            else:
                options, method = (ref_bound(w, func),), "__call__"
            # (kind, qname, text, span, attr, options): positional, as in every hot
            # path (a call with keywords costs more than the object it makes)
            callee = Bound(BOUND_CALL, None, intern(".".join(parts)), None, method, options)
            w.pending_bounds.append((callee, w.ref(parts)))
    if callee is not None:
        edge = w.add_call(CallEdge(fn.id, callee, tuple(fn.scopes), w.span(node)), fn)
    if last in tfapi.HIGHER_ORDER_SLOTS_BY_NAME:
        record_higher_order(w, node, func, attribute, last, fn)
    if last in tfapi.CREATION_CALLEE_NAMES or last in w.creation_aliases:
        record_creation(w, node, func, attribute, last, fn)
    if last in tfapi.VARIABLE_CREATOR_SCOPE_NAMES:
        creator_scope(w, node, False)  # `stack.enter_context(...)`, or a `with` item
    if last in tfapi.UPDATE_CALLEE_NAMES and not fn.stateless:
        record_update(w, node, func, attribute, last, fn)
    if attribute is not None:
        receiver = attribute[0]
        if last in tfapi.READ_METHODS and not has_arguments(node):
            w.model.reads.append(Read(ref_bound(w, receiver), last, w.span(node),
                                      fn.id, tuple(fn.scopes)))
        if last in tfapi.REPLICA_RUN_METHODS or last in tfapi.REPLICA_CALL_METHODS \
                or last in tfapi.CROSS_REPLICA_FN_METHODS:
            record_entry(w, node, receiver, last, fn)
        if last in tfapi.OBJECT_USE_METHODS:
            passed = passed_objects(w, node) if last == "compile" else \
                variable_owners(w, node, last)
            w.model.uses.append(ObjectUse(ref_bound(w, receiver), last,
                                          w.span(node), fn.id, tuple(fn.scopes),
                                          passed))
    if last == "Checkpoint" or last in tfapi.SAVE_METHODS:
        record_save(w, node, func, attribute, last, fn)
    elif last in tfapi.CHECKPOINT_SAVE_METHODS and attribute is not None:
        w.model.reads.append(Read(ref_bound(w, attribute[0]), READ_WRITE,
                                  w.span(node), fn.id, tuple(fn.scopes)))
    if last[:1].isupper():
        record_construction(w, node, func, last, fn)
    elif last in PARTIAL_NAMES and parts is not None:
        record_partial(w, node, parts, fn)
    elif callee is not None and (node.args or node.keywords):
        record_handover(w, node, callee, edge, fn)
    if last in tfapi.BATCH_NORMALIZATION_NAMES:
        parts = dotted_parts(func)
        if parts is not None:
            layer = LayerCall(None, arguments_of(w, node), w.span(node), fn.id,
                              tuple(fn.scopes))
            w.pending_layer_calls.append((layer, w.ref(parts)))


def record_higher_order(w: Walk, node: ast.Call, func: ast.AST, attribute, last: str,
                        fn: Function) -> None:
    """`tf.cond(p, self._update, f)`, `tf.while_loop(cond, body, ...)`, `ds.map(parse)`:
    an edge from the caller to each callable handed over, shaped as the edge of a call
    of it (`f()`, `self.m()`, `obj.m()`), kept in `finish` if the callee is one that
    runs it (the lambdas among them have their edge already; `finish` names it)."""
    keywords = {k.arg: k.value for k in node.keywords if k.arg is not None}
    positional = node.args
    starred = next((i for i, a in enumerate(positional) if isinstance(a, ast.Starred)),
                   len(positional))
    found: List[ast.AST] = []
    for at, keyword in tfapi.HIGHER_ORDER_SLOTS_BY_NAME[last]:
        value = keywords.get(keyword)
        if value is None and at is not None and at < starred:
            value = positional[at]
        if value is not None:
            callables_in(w, value, found, 0)
    if not found:
        return
    parts = dotted_parts(func)
    span, scopes = w.span(node), tuple(fn.scopes)
    params = fn.info.params if fn.info is not None else ()
    pending: list = [w.ref(parts) if parts is not None else None,
                     intern(".".join(parts)) if parts is not None else "." + last,
                     attribute is not None and last in tfapi.HIGHER_ORDER_METHODS, [], [],
                     None]
    for element in found:
        if element.__class__ is ast.Lambda:
            w.higher_order_lambdas[id(element)] = pending
            continue
        callee = callable_bound(w, element)
        if callee is not None:
            pending[3].append(CallEdge(fn.id, callee, scopes, span))
            if fn.tests:
                w.guarded_edges[id(pending[3][-1])] = tuple(fn.tests)
        if element.__class__ is NAME and element.id in params:
            pending[5] = fn.id
    w.pending_higher_order.append(pending)


def callables_in(w: Walk, value: ast.AST, found: List[ast.AST], depth: int) -> None:
    """The callables an argument hands over: itself, the elements of a list, tuple or
    dict of them (`switch_case`), the second of each `(predicate, fn)` pair
    (`tf.case`), the function of a `functools.partial(f, ...)`."""
    kind = value.__class__
    if kind is NAME or kind is ATTRIBUTE or kind is ast.Lambda:
        found.append(value)
    elif depth > 1:
        return
    elif kind is ast.Tuple and depth and len(value.elts) == 2:  # type: ignore[attr-defined]
        callables_in(w, value.elts[1], found, depth + 1)  # type: ignore[attr-defined]
    elif kind is ast.List or kind is ast.Tuple:
        for element in value.elts:  # type: ignore[attr-defined]
            callables_in(w, unstarred(element), found, depth + 1)
    elif kind is ast.Dict:
        for element in value.values:  # type: ignore[attr-defined]
            callables_in(w, element, found, depth + 1)
    elif kind is ast.Call and value.args:  # type: ignore[attr-defined]
        callee = attribute_of(value.func)  # type: ignore[attr-defined]
        name = callee[1] if callee is not None else name_of(value.func)  # type: ignore[attr-defined]
        if name == tfapi.PARTIAL_NAME:
            callables_in(w, value.args[0], found, depth + 1)  # type: ignore[attr-defined]


def callable_bound(w: Walk, element: ast.AST) -> Optional[Bound]:
    """The callee of an edge to `element` (a name or attribute), as `record_call`
    makes it for a call of it."""
    attribute = attribute_of(element)
    if attribute is not None and w.is_self(attribute[0]):
        return Bound(BOUND_METHOD, w.fn.klass, "", None, attribute[1])
    parts = dotted_parts(element)
    if parts is None:
        return None
    if attribute is not None:
        options, method = (ref_bound(w, attribute[0]),), attribute[1]
    else:
        options, method = (ref_bound(w, element),), "__call__"
    callee = Bound(BOUND_CALL, None, intern(".".join(parts)), None, method, options)
    w.pending_bounds.append((callee, w.ref(parts)))
    return callee


def record_construction(w: Walk, node: ast.Call, func: ast.AST, last: str,
                        fn: Function) -> None:
    """A call of what may be a class: the objects it hands over by name (`Trainer(model,
    optimizer)`), a Keras object whose options the rules read (`SGD(0.1, momentum=m)`), or
    a call given a keyword of tfapi.RECORDED_CONSTRUCTION_KEYWORDS (`Dense(8,
    input_shape=(4,))`).
    By the naming convention, a class's name starts with a capital letter."""
    items = argument_items(node)
    passed = tuple(handed_bound(w, value) if value.__class__ in PASSABLE and not star
                   else None for _, _, value, star in items)
    options = last in tfapi.KERAS3_SLOT_OPTIONS or last in tfapi.STRATEGY_ARGUMENT_CLASSES
    # a layer given its input's shape, an optimizer that accumulates gradients (TFS109)
    read = any(keyword in tfapi.RECORDED_CONSTRUCTION_KEYWORDS for _, keyword, _, _ in items)
    if not options and not read and not any(passed):
        return
    parts = dotted_parts(func)
    if parts is None:
        return
    callee = Bound(BOUND_CALL, None, intern(".".join(parts)), w.span(node))
    w.pending_bounds.append((callee, w.ref(parts)))
    # Only a Keras object's options and a strategy's arguments are read as values;
    # following an object into a parameter needs each argument's keyword and star alone
    # (exact spans cost more).
    args = arguments_of(w, node) if options else tuple(
        argument_slot(keyword, star) for _, keyword, _, star in items)
    w.model.constructions.append(Construction(
        callee, args, passed, w.span(node), fn.id, tuple(fn.scopes)))


def record_handover(w: Walk, node: ast.Call, callee: Bound, edge: int, fn: Function) -> None:
    """A call that may run a project function or method (`step(x, acc)`, `self.m(acc)`,
    `trainer.fit(model)`) and hand it objects: recorded in `finish`, if its callee is
    not a library's."""
    w.handovers.append((callee, node, None, w.scope, w.seq, fn, None, edge))


def record_partial(w: Walk, node: ast.Call, parts: Tuple[str, ...], fn: Function) -> None:
    """`partial(step, a, accumulator=acc)`: a call of `step` with those arguments (kept
    if `partial` is `functools.partial`), recorded even when it hands nothing over: a
    call of the partial object passes its positional arguments after these."""
    if not node.args or isinstance(node.args[0], ast.Starred):
        return
    target = node.args[0]
    items: List[Tuple[Optional[str], Optional[ast.AST], str]] = [
        (keyword, value, star) for whole, keyword, value, star
        in argument_items(node) if whole is not target]
    callee = Bound(BOUND_CALL, None, w.code(target), None, "__call__",
                   (ref_bound(w, target),))
    w.handovers.append((callee, node, items, w.scope, w.seq, fn,
                        w.ref(parts), -1))


def record_entry_arguments(w: Walk, node: ast.Call, target: ast.AST,
                           spec: Tuple[int, int, int], positional: List[ast.AST],
                           keywords: Dict[Optional[str], ast.AST], fn: Function) -> None:
    """`strategy.run(step, args=(x, acc), kwargs={"k": v})`: a call `step(x, acc, k=v)`
    (`tfapi.ENTRY_ARGUMENTS` says where `args` and `kwargs` are)."""
    at, kwargs_at, leading = spec
    args = keywords.get("args", positional[at] if len(positional) > at else None)
    kwargs = keywords.get("kwargs",
                          positional[kwargs_at] if len(positional) > kwargs_at else None)
    items: List[Tuple[Optional[str], Optional[ast.AST], str]] = [(None, None, "")] * leading
    if isinstance(args, (ast.Tuple, ast.List)):
        items += [(None, e.value, "*") if isinstance(e, ast.Starred) else (None, e, "")
                  for e in args.elts]
    elif args is not None:
        items.append((None, args, "*"))
    if isinstance(kwargs, ast.Dict):
        for key, value in zip(kwargs.keys, kwargs.values):
            if key is None:
                items.append((None, value, "**"))
            elif isinstance(key, ast.Constant) and isinstance(key.value, str):
                items.append((key.value, value, ""))
    elif kwargs is not None:
        items.append((None, kwargs, "**"))
    callee = Bound(BOUND_CALL, None, w.code(target), None, "__call__",
                   (ref_bound(w, target),))
    w.handovers.append((callee, node, items, w.scope, w.seq, fn, None, -1))


def passed_objects(w: Walk, node: ast.Call) -> Tuple[Tuple[str, Bound], ...]:
    """The objects `compile(...)` is handed, a list's elements one by one."""
    given = [(k.arg, k.value) for k in node.keywords
             if k.arg in tfapi.COMPILE_OBJECT_ARGUMENTS]
    given += [(keyword, node.args[position])
              for keyword, position in tfapi.COMPILE_OBJECT_ARGUMENTS.items()
              if position is not None and position < len(node.args)]
    passed: List[Tuple[str, Bound]] = []
    for keyword, value in given:
        elements = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
        passed.extend((str(keyword), ref_bound(w, e)) for e in elements
                      if not isinstance(e, ast.Starred))
    return tuple(passed)


def variable_owners(w: Walk, node: ast.Call, last: str) -> Tuple[Tuple[str, Bound], ...]:
    """The objects whose variables an optimizer call is handed, with the argument's
    keyword: `model` of `apply_gradients(zip(grads, model.trainable_variables))`."""
    spec = tfapi.OPTIMIZER_VARIABLE_ARGUMENTS.get(last)
    if spec is None:
        return ()
    keyword, position = spec
    value = next((k.value for k in node.keywords if k.arg == keyword), None)
    if value is None and position < len(node.args) and \
            not any(isinstance(a, ast.Starred) for a in node.args[:position + 1]):
        value = node.args[position]
    owners: List[Tuple[str, Bound]] = []
    stack = [value] if value is not None else []
    while stack:
        item = stack.pop()
        if isinstance(item, ast.Attribute) and item.attr in tfapi.MODEL_VARIABLE_ATTRIBUTES:
            owners.append((keyword, ref_bound(w, item.value)))
        elif isinstance(item, ast.Call) and isinstance(item.func, ast.Name) and \
                item.func.id in tfapi.VARIABLE_LIST_CALLS:
            stack.extend(a for a in reversed(item.args) if not isinstance(a, ast.Starred))
        elif isinstance(item, (ast.List, ast.Tuple)):
            stack.extend(e for e in reversed(item.elts) if not isinstance(e, ast.Starred))
        elif isinstance(item, ast.BinOp) and isinstance(item.op, ast.Add):
            stack.extend((item.right, item.left))  # `a.trainable_variables + b...`
    return tuple(owners)


def record_entry(w: Walk, node, receiver, last: str, fn: Function) -> None:
    positional, keyword_list = call_arguments(w, node)
    keywords = dict(keyword_list)
    # `strategy.extended.update(...)`, `strategy.extended.call_for_each_replica(...)`
    extended = attribute_of(receiver)
    if extended is not None and extended[1] != "extended":
        extended = None
    if last in tfapi.CROSS_REPLICA_FN_METHODS:
        if last == "update" and extended is None:
            return
        index = tfapi.CROSS_REPLICA_FN_METHODS[last]
        target = keywords.get("merge_fn" if last == "merge_call" else "fn")
        if target is None and len(positional) > index:
            target = positional[index]
        kind, strategy = ENTRY_CROSS, None
    else:
        target = keywords.get("fn", positional[0] if positional else None)
        if last in tfapi.REPLICA_CALL_METHODS:
            if extended is None:
                return
            receiver = extended[0]
        kind, strategy = ENTRY_REPLICA, ref_bound(w, receiver)
    if target is None:
        return
    if isinstance(target, ast.Lambda):
        w.entry_lambdas.add(id(target))
    w.model.entries.append(ReplicaEntry(kind, strategy, ref_bound(w, target),
                                        w.span(node), fn.id, tuple(fn.scopes)))
    spec = tfapi.ENTRY_ARGUMENTS.get(last)
    if spec is not None:
        record_entry_arguments(w, node, target, spec, positional, keywords, fn)

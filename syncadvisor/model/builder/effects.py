"""Calls that create, update, save or read variables, and creator scopes: the
variable facts of a module, recorded as the walk meets them.
"""
from __future__ import annotations

import ast
from typing import Optional, Tuple

from .. import tfapi
from ..facts import (
    BOUND_LOCAL, READ_CHECKPOINT, READ_SAVE, Bound, CreationCall, CreatorScope, Read,
    ScopeEntry, Source, Span, Update,
)
from ..invariance import Definitions, Invariance
from .syntax import MAX_SUM_DEPTH, MEMBER_LIKE, attribute_of, dotted_parts, name_of
from .state import Function, Walk
from .arguments import arguments_of, call_arguments
from .bindings import ref_bound, value_of


def creator_effect(w: Walk, node, method: bool) -> None:
    """Note the first parameter of a function shaped like a variable creator: if the
    walk sees it called (`record_call`), `finish` reads what the function does."""
    args = node.args
    positional = args.posonlyargs + args.args
    first = 1 if method else 0
    if len(positional) > first:
        w.fn.next_creator = (positional[first].arg, method)


def creator_scope(w: Walk, item: ast.AST, entered: bool) -> bool:
    """Record `tf.variable_creator_scope(creator)` (and, `entered` by a `with`, its
    ScopeEntry); whether `item` may be one."""
    if not isinstance(item, ast.Call) or not item.args:
        return False
    func = item.func
    attribute = attribute_of(func)
    last = attribute[1] if attribute is not None else name_of(func)
    parts = dotted_parts(func)
    if last not in tfapi.VARIABLE_CREATOR_SCOPE_NAMES or parts is None \
            or id(item) in w.creator_items:
        return False
    fn = w.fn
    creator = item.args[0]
    text = w.code(creator)
    scope = CreatorScope(ref_bound(w, creator, text), text, w.span(item), fn.id)
    entry = None
    if entered:
        w.creator_items.add(id(item))
        entry = ScopeEntry((), text, w.span(item), fn.id, -2)
        w.model.scopes.append(entry)
    w.pending_creator_scopes.append((scope, entry, w.ref(parts)))
    return entered


def record_update(w: Walk, node, func, attribute, last: str, fn: Function) -> None:
    positional, _ = call_arguments(w, node)
    value = value_of(w, positional[0]) if positional else None
    receiver = ref_bound(w, attribute[0]) if attribute is not None else \
        Bound(BOUND_LOCAL, text=last)
    update = Update(receiver, last, value, w.span(node), fn.id, tuple(fn.scopes))
    if fn.tests:
        update.tests = tuple(fn.tests)
    params: tuple = ()
    other_params: tuple = ()
    if positional:
        update.depends, update.source, params = dependencies(w, positional[0])
    if last == "assign" and positional and attribute is not None:
        update.accumulates = running_sum_of(w, positional[0], attribute[0])
    # `tf.compat.v1.assign(ref, value)`, or a Keras optimizer's `self.assign(var, value)`:
    # the first argument is what changes.
    alternative = None
    if positional:
        second = value_of(w, positional[1]) if len(positional) > 1 else None
        sums = len(positional) > 1 and running_sum_of(w, positional[1], positional[0])
        depends, source, other_params = dependencies(w, positional[1]) \
            if len(positional) > 1 else (None, None, ())
        alternative = (ref_bound(w, positional[0]), second, sums, depends, source)
    parts = dotted_parts(func)
    ref = w.ref(parts) if parts is not None else None
    if attribute is not None and w.is_self(attribute[0]) and len(positional) >= 2:
        ref = None  # a Keras optimizer's `self.assign(variable, value)`: a method in effect
        update.receiver, update.value, update.accumulates, update.depends, \
            update.source = alternative  # type: ignore[misc]
        alternative = None
        params, other_params = other_params, ()
    w.pending_updates.append((update, ref, alternative))
    if params or other_params:
        w.update_params[id(update)] = (params, other_params)


def dependencies(w: Walk, value: ast.AST) -> Tuple[Optional[Tuple[Bound, ...]], Optional[Source],
                                                   tuple]:
    """What outside state `value` reads, or None if it can differ between replicas
    (see invariance.py), with what makes it differ where that was found, and the
    parameters it reads that `finish` settles from the calls of their function
    (its node, the name, the node that reads it): the functions around it, innermost
    first, give its locals."""
    functions = [fn for fn in reversed(w.functions) if fn.node is not None]
    invariance = Invariance([definitions_of(w, fn) for fn in functions],
                            w.fn.self_name, [fn.own_calls for fn in functions])
    reads = invariance.reads(value)
    if reads is not None:
        return tuple(ref_bound(w, read) for read in reads), None, tuple(
            (functions[level].node, name, node) for level, name, node in invariance.params)
    if invariance.source is None:
        return None, None, ()
    kind, name, node = invariance.source
    return None, Source(kind, name, w.span(node)), ()


def definitions_of(w: Walk, fn: Function) -> Definitions:
    definitions = w.definitions.get(id(fn.node))
    if definitions is None:
        assert fn.node is not None
        definitions = w.definitions[id(fn.node)] = Definitions(fn.node, fn.walrus)
    return definitions


def running_sum_of(w: Walk, node: ast.AST, target: ast.AST, depth: int = 0) -> bool:
    """Whether `node` is `target` plus or minus other terms (`total + x`,
    `tf.add(total.read_value(), x)`): what `assign` of it keeps is a running sum."""
    if depth > MAX_SUM_DEPTH:
        return False
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Add):
            return running_sum_of(w, node.left, target, depth + 1) or \
                running_sum_of(w, node.right, target, depth + 1)
        return isinstance(node.op, ast.Sub) and \
            running_sum_of(w, node.left, target, depth + 1)
    if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
        name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
        if name in tfapi.READ_METHODS and isinstance(node.func, ast.Attribute):
            return w.code(node.func.value) == w.code(target)
        if name in tfapi.SUM_PRESERVING_CALL_NAMES:
            terms = [e for a in node.args
                     for e in (a.elts if isinstance(a, (ast.List, ast.Tuple)) else (a,))]
            return any(running_sum_of(w, t, target, depth + 1) for t in terms)
        return False
    return w.code(node) == w.code(target)


def record_save(w: Walk, node, func, attribute, last: str, fn: Function) -> None:
    parts = dotted_parts(func)
    span, scopes = w.span(node), tuple(fn.scopes)
    positional, keywords = call_arguments(w, node)
    if last == "Checkpoint":
        if parts is None:
            return
        # `Checkpoint(vs=[a, b])`, `Checkpoint(d={"a": a})`: each element is tracked
        values = [e for _, value in keywords for e in (
            value.elts if isinstance(value, (ast.List, ast.Tuple, ast.Set)) else
            [v for v in value.values if v is not None] if isinstance(value, ast.Dict)
            else [value]) if not isinstance(e, ast.Starred)]
        reads = [Read(ref_bound(w, value), READ_CHECKPOINT, span, fn.id, scopes)
                 for value in values]
        w.pending_checkpoints.append((w.ref(parts), reads))
        return
    function_style = Read(ref_bound(w, positional[0]), READ_SAVE, span, fn.id, scopes) \
        if positional else None
    method_style = Read(ref_bound(w, attribute[0]), READ_SAVE, span, fn.id, scopes) \
        if attribute is not None else None
    if parts is not None and function_style is not None:
        w.pending_saves.append((w.ref(parts), function_style, method_style))
    elif method_style is not None:
        w.model.reads.append(method_style)


def record_creation(w: Walk, node, func, attribute, last: str, fn: Function) -> None:
    method = last if last in tfapi.CREATION_METHODS else None
    on_self = bool(method and attribute is not None and (
        w.is_self(attribute[0]) or w.is_super(attribute[0])))
    receiver = ref_bound(w, attribute[0]) if method and attribute is not None \
        and not on_self else None
    args = arguments_of(w, node)
    parts = dotted_parts(func)
    creation = CreationCall(
        callee=None, method=method, on_self=on_self, klass=fn.klass if on_self else None,
        function=fn.id, args=args, span=w.span(node), func_span=w.span(func),
        func_text=".".join(parts) if parts else w.code(func), scopes=tuple(fn.scopes),
        receiver=receiver,
    )
    w.pending_creations.append((creation, w.ref(parts) if parts else None))
    w.creation_of_node[id(node)] = len(w.model.creations)
    w.model.creations.append(creation)


def record_attribute(w: Walk, node, value, member: str) -> None:
    """`self.x` (a load, counted) or `<enum class>.MEMBER` (an enum reference)."""
    if w.is_self(value):
        key = (w.fn.id, member)
        loads = w.model.self_loads
        loads[key] = loads.get(key, 0) + 1
        return
    if not "A" <= member[0] <= "Z" or not MEMBER_LIKE.match(member):
        return  # (the first test spares most attributes the regular expression)
    parts = dotted_parts(value)
    if parts is None:
        return
    span = w.span(node)  # the member ends the attribute, on its last line
    member_span = Span(span.end_line, span.end_column - len(member), span.end_line,
                       span.end_column)
    w.pending_enum_refs.append((w.ref(parts), member, span, member_span,
                                ".".join(parts)))

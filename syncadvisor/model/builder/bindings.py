"""What a name, an attribute or an expression may denote (`Bound`), and the bindings an
assignment, an unpacking or a loop target makes.
"""
from __future__ import annotations

import ast
from typing import Optional, Sequence

from ..facts import (
    BOOL, BOUND_ATTR, BOUND_CALL, BOUND_CONTAINER, BOUND_ELEMENT, BOUND_ITEM, BOUND_LOCAL,
    BOUND_METHOD, BOUND_NAMES, BOUND_QNAME, BOUND_SELF_ATTR, CALL, EVERY_ITEM, FLOAT, INT, NONE,
    OTHER, QNAME, STR, Bound, Value,
)
from ..invariance import paired
from ..names import PendingRef
from .syntax import (
    LITERAL_CONTAINERS, MAX_VALUE_DEPTH, dotted_parts, is_name_constant, literal_int,
    single_string_literal, unstarred,
)
from .constants import LITERALS, is_known, literal
from .state import Walk


def name_creation_targets(w: Walk, elements: Sequence[object], target: str) -> None:
    """`x = tf.Variable(...)`: the creation's result is known as `target`."""
    for element in elements:
        index = w.creation_of_node.get(id(element))
        if index is not None:
            w.model.creations[index].target = target


def bind_target(w: Walk, target: ast.AST, value: Optional[ast.AST]) -> None:
    if isinstance(target, ast.Name):
        parts = dotted_parts(value) if value is not None else None
        if parts is not None and value is not None and not w.self_head(parts):
            binding = w.bind(target.id, Bound(BOUND_QNAME, text=target.id,
                                              span=w.span(value)), alias=parts)
        else:
            binding = w.bind(target.id, bound_for(w, value, target.id))
        if value is not None and value.__class__ in LITERALS:
            known = literal(value)
            if is_known(known):
                w.literals[id(binding)] = known
    elif isinstance(target, (ast.Tuple, ast.List)):
        bind_unpacking(w, target, value)
    elif isinstance(target, ast.Starred):
        bind_target(w, target.value, None)
    elif isinstance(target, ast.Attribute) and w.is_self(target.value):
        klass = w.model.classes.get(w.fn.klass or "")
        if klass is not None:
            bound = bound_for(w, value, "self." + target.attr)
            klass.attrs.setdefault(target.attr, []).append(bound)


def bind_unpacking(w: Walk, target, value: Optional[ast.AST]) -> None:
    elements = target.elts
    parts = paired(target, value, loop=False)
    if parts is not None:
        for element, item in parts:
            bind_target(w, element, item)
        return
    if value is None or any(isinstance(e, ast.Starred) for e in elements):
        for element in elements:
            bind_target(w, unstarred(element), None)
        return
    source = bound_for(w, value, w.code(value))
    for i, element in enumerate(elements):
        if isinstance(element, ast.Name):
            w.bind(element.id, Bound(BOUND_ITEM, text=element.id, attr=str(i),
                                     options=(source,)))
        elif isinstance(element, ast.Attribute) and w.is_self(element.value):
            # `self.accum, self.seen = make_state(model)`: item i of what it returns
            klass = w.model.classes.get(w.fn.klass or "")
            if klass is not None:
                klass.attrs.setdefault(element.attr, []).append(Bound(
                    BOUND_ITEM, text="self." + element.attr, attr=str(i), options=(source,)))
        else:
            bind_target(w, element, None)


def bind_loop_target(w: Walk, target: ast.AST, iterable: ast.AST) -> None:
    parts = paired(target, iterable, loop=True) \
        if isinstance(target, (ast.Tuple, ast.List)) else None
    if parts is not None:  # `for g, v in zip(grads, variables)`, `enumerate(xs)`
        for element, source in parts:
            if isinstance(element, ast.Name) and source is not None:
                w.bind(element.id, element_of(w, source))
            else:
                bind_target(w, element, None)
        return
    if isinstance(target, ast.Name):
        w.bind(target.id, element_of(w, iterable))
    else:
        bind_target(w, target, None)


def element_of(w: Walk, source: ast.AST) -> Bound:
    text = w.code(source)
    if source.__class__ in LITERAL_CONTAINERS:  # `for v in (acc, total):`: each of them
        return Bound(BOUND_ELEMENT, text=text, options=(bound_for(w, source, text),))
    return Bound(BOUND_ELEMENT, text=text, options=(ref_bound(w, source),))


def name_bound(w: Walk, node: ast.Name, text: Optional[str]) -> Bound:
    """`_bound_for(node, text)` for a plain name, the commonest case by far, in one
    step. A name's text is the name, on an ASCII line; elsewhere Python may have
    normalised it (NFKC: `ﬁ` is `fi`), so it is taken from the source."""
    name = node.id
    if text is None:
        text = w.code(node) if node.lineno in w.wide else name
    if w.is_self(node):
        return Bound(BOUND_LOCAL, None, text, w.span(node))
    bound = Bound(BOUND_NAMES, None, text, w.span(node))  # (kind, qname, text, span)
    w.pending_names.append((named_ref(w, name), bound))
    return bound


def named_ref(w: Walk, name: str) -> PendingRef:
    """A use of a plain name, with the bindings that reach it in the walk's scope."""
    ref = w.ref((name,))
    if not w.finishing:  # (what `finish` asks about runs after the walk's code)
        ref.reach = w.flow().use(name)
    return ref


def bound_for(w: Walk, value: Optional[ast.AST], text: str) -> Bound:
    if value is None:
        return Bound(BOUND_LOCAL, text=text)
    if value.__class__ is ast.Name:
        return name_bound(w, value, text)
    span = w.span(value)
    parts = dotted_parts(value)
    if parts is not None and not w.self_head(parts):
        if len(parts) == 1:
            bound = Bound(BOUND_NAMES, None, text, span)
            w.pending_names.append((named_ref(w, parts[0]), bound))
            return bound
        bound = Bound(BOUND_QNAME, None, text, span)
        w.pending_bounds.append((bound, w.ref(parts)))
        return bound
    if isinstance(value, (ast.Attribute, ast.Subscript)):
        return ref_bound(w, value, text)
    if isinstance(value, ast.Call):
        func = value.func
        creation = w.creation_of_node.get(id(value))
        if isinstance(func, ast.Attribute) and w.is_self(func.value):
            return Bound(BOUND_METHOD, qname=w.fn.klass, attr=func.attr, text=text,
                         span=span, creation=creation)
        func_parts = dotted_parts(func)
        if func_parts is not None:
            first = next((a for a in value.args if not isinstance(a, ast.Starred)), None)
            options = (ref_bound(w, first),) if first is not None and (isinstance(
                first, (ast.Name, ast.Attribute, ast.Lambda)) or is_name_constant(first)) \
                else ()
            bound = Bound(BOUND_CALL, text=text, span=span, creation=creation, options=options)
            w.pending_bounds.append((bound, w.ref(func_parts)))
            return bound
        return Bound(BOUND_LOCAL, text=text, span=span, creation=creation)
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        elements = tuple(bound_for(w, e, text) for e in value.elts
                         if not isinstance(e, ast.Starred))
        return Bound(BOUND_CONTAINER, text=text, span=span, options=elements)
    if isinstance(value, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
        return Bound(BOUND_CONTAINER, text=text, span=span, attr=EVERY_ITEM,
                     options=(bound_for(w, value.elt, text),))
    return Bound(BOUND_LOCAL, text=text, span=span)


def ref_bound(w: Walk, node: ast.AST, text: Optional[str] = None) -> Bound:
    if node.__class__ is ast.Name:
        return name_bound(w, node, text)
    text = text if text is not None else w.code(node)
    if isinstance(node, ast.Name) or is_name_constant(node):
        return bound_for(w, node, text)
    if isinstance(node, ast.Attribute):
        if w.is_self(node.value):
            return Bound(BOUND_SELF_ATTR, qname=w.fn.klass, attr=node.attr, text=text,
                         span=w.span(node))
        bound = Bound(BOUND_ATTR, None, text, w.span(node), node.attr,
                      (ref_bound(w, node.value),))
        parts = dotted_parts(node)
        if parts is not None and not w.self_head(parts):
            w.pending_bounds.append((bound, w.ref(parts)))
        return bound
    if isinstance(node, ast.Subscript):
        return Bound(BOUND_ELEMENT, text=text, span=w.span(node),
                     options=(ref_bound(w, node.value),))
    if isinstance(node, ast.Lambda):
        return Bound(BOUND_QNAME, qname=w.lambda_id(node), text="lambda",
                     span=w.span(node))
    if isinstance(node, ast.Call):
        return bound_for(w, node, text)
    return Bound(BOUND_LOCAL, text=text, span=w.span(node))


def value_of(w: Walk, node: ast.AST, depth: int = 0) -> Value:
    span = w.span(node)
    if isinstance(node, ast.Constant):
        literal = node.value
        if literal is None:
            return Value(NONE, "None", span)
        if literal is True or literal is False:
            return Value(BOOL, str(literal), span, literal=literal)
        text = w.code(node)
        if isinstance(literal, str) and single_string_literal(text):
            return Value(STR, text, span, literal=literal)
        if type(literal) is int:
            return Value(INT, text, span, literal=literal_int(text))
        if type(literal) is float:
            return Value(FLOAT, text, span)
        return Value(OTHER, text, span)
    parts = dotted_parts(node)
    if parts is not None:
        value = Value(QNAME, ".".join(parts), span)
        if len(parts) > 1:
            value.prefix_text = ".".join(parts[:-1])
        w.pending_values.append((value, w.ref(parts)))
        return value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
            and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) in (int, float):
        inner = value_of(w, node.operand, depth)
        inner.span, inner.text = span, w.code(node)
        if isinstance(inner.literal, int):
            inner.literal = -inner.literal
        return inner
    if isinstance(node, ast.Call) and depth < MAX_VALUE_DEPTH:
        value = Value(CALL, w.code(node), span)
        func_parts = dotted_parts(node.func)
        if func_parts is not None:
            w.pending_values.append((value, w.ref(func_parts)))
        value.args = tuple(value_of(w, a, depth + 1) for a in node.args
                           if not isinstance(a, ast.Starred))
        value.kwargs = tuple((k.arg, value_of(w, k.value, depth + 1))
                             for k in node.keywords if k.arg is not None)
        return value
    return Value(OTHER, w.code(node), span)

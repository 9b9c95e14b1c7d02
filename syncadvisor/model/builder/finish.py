"""After the walk: resolve every name once against the complete binding tables (a
function body sees module names bound after it, as Python does) and make the
`FileModel`.
"""
from __future__ import annotations

import ast
from functools import partial
from typing import Optional

from .. import creators, tfapi
from ..facts import (
    BOUND_CALL, BOUND_LOCAL, BOUND_METHOD, BOUND_QNAME, OTHER, QNAME, EnumRef, FileModel,
)
from ..names import PendingRef
from .syntax import BUILTIN_NAMES, KEYWORDS_MADE, PASSABLE
from .state import Walk
from .arguments import argument_items
from .handovers import bounds_of_name, handed_bound, handover, resolved_bound
from .parameters import settle_parameters


def finish_handovers(w: Walk) -> None:
    """Record the calls of `w.handovers` that may call the project's code: not a callee
    resolved into a library module (`tfapi.LIBRARY_MODULES`, unless this file is part
    of it), not a builtin (`len(x)`), not a `partial` other than functools'. Their
    arguments are looked at where they were written."""
    resolve, lookup = w.resolver.resolve, w.resolver.lookup
    package, libraries = w.package, tfapi.LIBRARY_MODULES
    builtins_seen = not w.model.star_imports
    walk_state = w.scope, w.seq, w.fn
    w.finishing = True
    w.handed_names.clear()  # (made while bindings were still being walked)
    passed_of, passable = partial(handed_bound, w), PASSABLE
    handovers = w.model.handovers
    classes = w.model.classes
    # Classes whose methods are all this file's or a library's (`unittest.TestCase`):
    # `self.assertEqual(x, y)` runs no code of the run's unless the class defines it.
    closed = {cid for cid, info in classes.items()
              if all(b.partition(".")[0] in libraries and not b.startswith(package + ".")
                     for b in info.bases)}
    for callee, node, items, scope, seq, fn, partial_ref, edge in w.handovers:
        if partial_ref is not None:
            if resolve(partial_ref) not in tfapi.PARTIAL_CALLS:
                continue
        elif callee.kind == BOUND_METHOD:
            if callee.qname in closed and \
                    callee.attr not in classes[callee.qname].methods:
                continue
        elif callee.kind == BOUND_CALL:
            qname = callee.qname
            if qname is not None:
                top = qname.partition(".")[0]
                if top in libraries and top != package:
                    continue
            elif builtins_seen and items is None and callee.attr == "__call__" and \
                    callee.text in BUILTIN_NAMES and \
                    lookup(scope, callee.text, seq + 1) is None:
                continue
        w.scope, w.seq, w.fn = scope, seq, fn
        if items is not None:
            handover(w, callee, items, node, fn, always=partial_ref is not None)
            continue
        if node.keywords:
            arguments = argument_items(node)
            passed = tuple(passed_of(value) if not star and value.__class__ in PASSABLE
                           else None for _, _, value, star in arguments)
            if any(passed):
                keywords = tuple(star or keyword or "" for _, keyword, _, star in arguments)
                handovers.append((edge, KEYWORDS_MADE.setdefault(keywords, keywords),
                                  passed))
            continue
        passed_list = [passed_of(a) if a.__class__ in passable else None
                       for a in node.args]  # (a starred one is not: None)
        if any(passed_list):
            keywords = tuple("*" if a.__class__ is ast.Starred else "" for a in node.args)
            handovers.append((edge, KEYWORDS_MADE.setdefault(keywords, keywords),
                              tuple(passed_list)))
    w.scope, w.seq, w.fn = walk_state


def link_higher_order(w: Walk) -> None:
    """Keep the edges of the calls whose callee runs the callables it is given: one of
    tfapi.HIGHER_ORDER_CALLS, a `Dataset`-style method on any object, or -- on the
    condition that it forwards them (`FileModel.forwarders`) -- a function of that
    name elsewhere (a project's own `smart_cond`)."""
    calls, higher_order = w.model.calls, w.model.higher_order
    forwarders = []
    for ref, text, method_style, edges, lambdas, forwarder in w.pending_higher_order:
        qname = w.resolver.resolve(ref) if ref is not None else None
        if qname in tfapi.HIGHER_ORDER_CALLS or method_style:
            wrapper = None
            if forwarder is not None:
                forwarders.append(forwarder)
            for i in lambdas:
                higher_order[i] = (text, None, qname)
        elif qname:
            wrapper = qname
        else:
            continue
        for edge in edges:
            higher_order[len(calls)] = (text, wrapper, qname)
            if w.guarded_edges and id(edge) in w.guarded_edges:
                w.model.guarded_calls[len(calls)] = w.guarded_edges[id(edge)]
            calls.append(edge)
    w.model.forwarders = tuple(dict.fromkeys(forwarders))


def finish(w: Walk) -> FileModel:
    if w.update_params:
        settle_parameters(w)  # makes bounds: before they are resolved
    if w.import_before is not None:
        w.model.import_line = w.import_before.line
    elif w.import_after is not None:
        w.model.import_line = w.import_after.end_line + 1
    resolve = w.resolver.resolve
    for value, ref in w.pending_values:
        value.qname = resolve(ref)
        if value.kind == QNAME and value.qname is None:
            value.kind = OTHER
    for bound, ref in w.pending_bounds:
        bound.qname = resolve(ref)
        if bound.kind == BOUND_QNAME and bound.qname is None:
            bound.kind = BOUND_LOCAL
    for ref, bound in w.pending_names:
        bound.options = tuple(b for b in bounds_of_name(w, ref) if b is not bound)
    for creation, creation_ref in w.pending_creations:
        creation.callee = resolve(creation_ref) if creation_ref is not None else None
    for update, update_ref, alternative in w.pending_updates:
        if update_ref is not None and alternative is not None and \
                resolve(update_ref) in tfapi.UPDATE_FUNCTIONS:
            update.receiver, update.value, update.accumulates, update.depends, \
                update.source = alternative
            update.function_style = True
        w.model.updates.append(update)
    for ref, reads in w.pending_checkpoints:
        if resolve(ref) in tfapi.CHECKPOINT_CLASSES:
            w.model.reads.extend(reads)
    for ref, function_style, method_style in w.pending_saves:
        if resolve(ref) in tfapi.SAVE_FUNCTIONS:
            w.model.reads.append(function_style)
        elif method_style is not None:
            w.model.reads.append(method_style)
    link_higher_order(w)
    for layer, ref in w.pending_layer_calls:
        layer.callee = resolve(ref)
        w.model.layer_calls.append(layer)
    for scope, entry, ref in w.pending_creator_scopes:
        if resolve(ref) in tfapi.VARIABLE_CREATOR_SCOPES:
            if entry is not None:
                entry.creator = len(w.model.creator_scopes)
            w.model.creator_scopes.append(scope)
    member_of = partial(creator_member, w)
    for function_id, (node, method) in w.creator_candidates.items():
        # Members are named through module-level names (`tf.VariableSynchronization`):
        # resolved where the whole module is bound.
        _, ops = creators.effect_of(node, w.ref, method)
        w.model.creator_effects[function_id] = creators.resolved(ops, member_of)
    for info, refs in w.pending_bases:
        info.bases = tuple(q for q in (resolve(r) for r in refs) if q)
    for function, param, ref in w.pending_annotations:
        annotation = resolve(ref)
        if annotation:
            function.annotations[param] = annotation
    if w.handovers:  # (once names and bases are resolved; adds some to resolve)
        resolved, named = len(w.pending_bounds), len(w.pending_names)
        finish_handovers(w)
        for bound, ref in w.pending_bounds[resolved:]:
            bound.qname = resolve(ref)
            if bound.kind == BOUND_QNAME and bound.qname is None:
                bound.kind = BOUND_LOCAL
        for ref, bound in w.pending_names[named:]:
            bound.options = tuple(b for b in bounds_of_name(w, ref) if b is not bound)
    for ref, member, span, member_span, text in w.pending_enum_refs:
        qname = resolve(ref)
        if qname in tfapi.ENUM_CLASSES:
            w.model.enum_refs.append(EnumRef(qname, member, span, member_span, text))
    own = w.model.module + "."
    for name, entries in w.module_scope.bindings.items():
        bounds = w.model.globals[name] = [resolved_bound(w, b) for b in entries]
        first = bounds[0]
        # Not its own classes and functions (bound to their own qualified name); a package
        # `__init__`'s import from a submodule (`from .layers import Dense`) is an export.
        if first.kind == BOUND_QNAME and first.qname and first.qname != own + name:
            w.model.exports[name] = w.resolver.canonical(first.qname)
    w.model.keras_families = tuple(sorted(w.keras_imports))
    return w.model


def creator_member(w: Walk, ref: object, setting: str) -> Optional[str]:
    """The member of `setting`'s enum a creator's placeholder names, if it is one."""
    assert isinstance(ref, PendingRef)
    enum_class, _, member = (w.resolver.resolve(ref) or "").rpartition(".")
    spec = tfapi.ENUM_CLASSES.get(enum_class)
    if spec is None or spec.setting != setting:
        return None
    return member if member in spec.members else spec.aliases.get(member)

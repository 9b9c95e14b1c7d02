"""What the parameters of a function hold where its file shows every call of it: an
update whose value reads them is the same on every replica when every call passes
values that are (the update's `depends` then takes what those values read).
"""
from __future__ import annotations

import ast
from bisect import bisect_left, bisect_right
from typing import Dict, List, Optional, Set, Tuple

from .. import tfapi
from ..facts import SOURCE_INPUT, Bound, Source
from ..invariance import Invariance
from .syntax import FIELDS, NAME, node_fields, word_positions
from .state import Walk
from .bindings import ref_bound
from .effects import definitions_of


def settle_parameters(w: Walk) -> None:
    """Each update value that reads parameters of functions whose every call the file
    may show is the same on every replica if every call passes them values that are:
    their outside state joins the update's `depends`, or else the value can differ,
    for the reason found in the caller (the replica's batch it passes) or, where no
    call says, for the parameter itself."""
    pending = w.pending_updates
    for i, (update, ref, alternative) in enumerate(pending):
        params, other_params = w.update_params.get(id(update), ((), ()))
        if params and update.depends is not None:
            ok, reads, source = passed_params(w, params)
            update.depends, update.source = (update.depends + tuple(reads), None) if ok \
                else (None, source)
        if other_params and alternative is not None:
            bound, value, sums, depends, _ = alternative
            if depends is not None:
                ok, reads, source = passed_params(w, other_params)
                alternative = (bound, value, sums, depends + tuple(reads), None) if ok \
                    else (bound, value, sums, None, source)
                pending[i] = (update, ref, alternative)


def passed_params(w: Walk, params) -> Tuple[bool, List[Bound], Optional[Source]]:
    """Whether the parameters read are the same on every replica (see above)."""
    found: List[Bound] = []
    for fn_node, name, node in params:
        ok, reads, source = parameter(w, fn_node, name)
        if not ok:
            return False, [], source or Source(SOURCE_INPUT, name, w.span(node))
        found.extend(reads)
    return True, found, None


def parameter(w: Walk, fn_node: ast.AST, name: str
              ) -> Tuple[bool, List[Bound], Optional[Source]]:
    key = (id(fn_node), name)
    known = w.parameter_memo.get(key)
    if known is None:
        # The greatest fixpoint: a recursive call passing the parameter on keeps it.
        w.parameter_memo[key] = (True, [], None)
        known = w.parameter_memo[key] = settle_parameter(w, fn_node, name)
    return known


def settle_parameter(w: Walk, fn_node: ast.AST, name: str
                     ) -> Tuple[bool, List[Bound], Optional[Source]]:
    """What every call of the function passes for the parameter `name` (its default
    where a call passes none), as `passed_params` says; False where a reference to the
    function is not a plain call, a call unpacks its arguments, or there is none."""
    fn = w.function_of[id(fn_node)]
    method = fn.info is not None and fn.info.klass is not None and fn.self_name is not None
    args = fn_node.args  # type: ignore[attr-defined]
    found, referred, sites = references_of(w, fn_node.name)  # type: ignore[attr-defined]
    if not found or referred:
        return False, [], None
    positional = [a.arg for a in args.posonlyargs + args.args]
    defaults = dict(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    defaults.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults)
                    if d is not None)
    where = positional.index(name) - (1 if method else 0) if name in positional else -1
    reads: List[Bound] = []
    for call, site in found:
        if method != isinstance(call.func, ast.Attribute) or None in site or any(
                isinstance(a, ast.Starred) for a in call.args) or any(
                k.arg is None for k in call.keywords):
            return False, [], None
        value: Optional[ast.AST] = None
        if 0 <= where < len(call.args):
            value, at = call.args[where], site
        else:
            value = next((k.value for k in call.keywords if k.arg == name), None)
            at = site
            if value is None:
                value, at = defaults.get(name), sites.get(id(fn_node), ())
        if value is None or None in at:
            return False, [], None
        ok, more, source = invariant_at(w, value, at)
        if not ok:
            return False, [], source
        reads.extend(more)
    return True, reads, None


def invariant_at(w: Walk, value: ast.AST, site: tuple
                 ) -> Tuple[bool, List[Bound], Optional[Source]]:
    """`dependencies` of a value in the functions `site` (innermost first), once walked."""
    functions = [w.function_of[id(node)] for node in site]
    fn = functions[0] if functions else w.functions[0]
    invariance = Invariance([definitions_of(w, f) for f in functions], fn.self_name,
                            [f.own_calls for f in functions])
    reads = invariance.reads(value)
    if reads is None:
        if invariance.source is None:
            return False, [], None
        kind, name, node = invariance.source
        return False, [], Source(kind, name, w.span(node))
    saved = w.fn, w.scope
    w.fn, w.scope = fn, w.module_scope  # names outside `site`: the module's
    try:
        bounds = [ref_bound(w, read) for read in reads]
    finally:
        w.fn, w.scope = saved
    ok, more, source = passed_params(
        w, [(site[level], name, node) for level, name, node in invariance.params])
    return ok, bounds + more if ok else [], source


def entry_call(node: ast.Call, name: str) -> Optional[ast.Call]:
    """`strategy.run(name, args=(x, 0.5), kwargs={"k": v})` as the call it makes,
    `name(x, 0.5, k=v)`: its arguments bind to the parameters as a direct call's do. An
    `args` that is no tuple or list literal is passed on starred, a `kwargs` that is no
    dict of string keys as `**` (no parameter is then settled from it). None for any
    other call (and for the entries whose function TensorFlow hands values first:
    `merge_call`, `extended.update`)."""
    func = node.func
    if not isinstance(func, ast.Attribute) or func.attr not in tfapi.ENTRY_ARGUMENTS \
            or not node.args:
        return None
    args_at, kwargs_at, before = tfapi.ENTRY_ARGUMENTS[func.attr]
    first = node.args[0]
    if before or tfapi.CROSS_REPLICA_FN_METHODS.get(func.attr, 0) or \
            (first.id if isinstance(first, ast.Name) else getattr(first, "attr", None)) != name:
        return None
    args = node.args[args_at] if len(node.args) > args_at else \
        next((k.value for k in node.keywords if k.arg == "args"), None)
    kwargs = node.args[kwargs_at] if len(node.args) > kwargs_at else \
        next((k.value for k in node.keywords if k.arg == "kwargs"), None)
    passed: List[ast.expr] = []
    if isinstance(args, (ast.Tuple, ast.List)):
        passed = list(args.elts)
    elif args is not None and not (isinstance(args, ast.Constant) and args.value is None):
        passed = [ast.Starred(args, ast.Load())]
    keywords: List[ast.keyword] = []
    names = [k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None
             for k in kwargs.keys] if isinstance(kwargs, ast.Dict) else []
    if isinstance(kwargs, ast.Dict) and None not in names:
        keywords = [ast.keyword(k, v) for k, v in zip(names, kwargs.values)]
    elif kwargs is not None and not (isinstance(kwargs, ast.Constant) and kwargs.value is None):
        keywords = [ast.keyword(None, kwargs)]
    return ast.copy_location(ast.Call(first, passed, keywords), node)


def references_of(w: Walk, name: str):
    """The calls of `name` in the file (`f(...)`, `x.f(...)`) with the functions around
    each, innermost first (None for a comprehension: names the walk does not follow);
    whether it is referred to other than as the callee of a call; and the functions
    around each def. Only the nodes whose lines hold the word `name` are looked into
    (a decorator's lines are its def's; an f-string's parts' positions are not
    trusted before Python 3.12, so what is under one is all looked into)."""
    found = w.references.get(name)
    if found is not None:
        return found
    starts, lines = w.starts, []  # type: Tuple[List[int], List[int]]
    for at in word_positions(w.text, name):
        line = bisect_right(starts, at)
        if not lines or lines[-1] != line:
            lines.append(line)
    calls: List[Tuple[ast.Call, tuple]] = []
    other = False
    sites: Dict[int, tuple] = {}
    callees: Set[int] = set()
    stack: List[Tuple[ast.AST, tuple, bool]] = \
        [(w.tree, (), True)] if w.tree and lines else []
    fields_of = FIELDS
    while stack:
        node, site, pruned = stack.pop()
        kind = node.__class__
        if kind is ast.Constant:
            continue
        if pruned:
            first = getattr(node, "lineno", None)
            if first is not None:
                decorators = getattr(node, "decorator_list", None)
                if decorators:
                    first = min(first, min(d.lineno for d in decorators))
                at = bisect_left(lines, first)
                if at == len(lines) or lines[at] > node.end_lineno:  # type: ignore
                    continue
            if kind is ast.JoinedStr:
                pruned = False
        if kind is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            if (func.id if func.__class__ is NAME else getattr(func, "attr", None)) \
                    == name:
                callees.add(id(func))
                calls.append((node, site))  # type: ignore[arg-type]
            else:
                entry = entry_call(node, name)  # type: ignore[arg-type]
                if entry is not None:
                    callees.add(id(entry.func))
                    calls.append((entry, site))
        elif kind is NAME:
            if node.id == name and id(node) not in callees:  # type: ignore
                other = True
            continue
        elif kind is ast.Attribute:
            if node.attr == name and id(node) not in callees:  # type: ignore
                other = True
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
            sites[id(node)] = site
            site = (node,) + site
        elif kind in (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp):
            site = (None,) + site
        fields = fields_of.get(kind)
        if fields is None:
            fields = node_fields(node)
        for field_name in fields:
            child = getattr(node, field_name, None)
            if child.__class__ is list:
                stack.extend((item, site, pruned) for item in child
                             if isinstance(item, ast.AST))
            elif isinstance(child, ast.AST):
                stack.append((child, site, pruned))
    found = w.references[name] = (calls, other, sites)
    return found

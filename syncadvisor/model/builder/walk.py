"""The walk: visits a module's nodes in source order and records bindings, calls,
scopes and branches as it meets them (the handlers in `HANDLERS`).
"""
from __future__ import annotations

import ast
import re
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .. import tfapi
from ..facts import (
    BOUND_CALL, BOUND_LOCAL, BOUND_PARAM, BOUND_QNAME, BOUND_SELF_ATTR, TEST_IF, TEST_WHILE,
    Bound, BranchTest, CallEdge, ClassInfo, FunctionInfo, ScopeEntry, Span,
)
from ..names import CLASS, COMPREHENSION, FUNCTION, Scope
from .syntax import (
    ATTRIBUTE, FIELDS, LEAVES, MAX_SUM_DEPTH, NAME, PYTHON_COMPARISONS, attribute_of,
    dotted_parts, func_of, has_arguments, is_preamble, name_of, node_fields, param_names,
    plain_test, signature, unstarred,
)
from .state import Function, Walk
from .bindings import bind_loop_target, bind_target, bound_for, name_creation_targets, ref_bound
from .calls import record_call
from .blocks import block_facts
from .constants import truth
from .narrowing import enter_branch, leave_branch, narrowed_for, narrowing_of
from .effects import creator_effect, creator_scope, record_attribute


def visit(w: Walk, node: ast.AST) -> None:
    handler = HANDLERS.get(type(node))
    if handler is not None:
        handler(w, node)
    else:
        visit_children(w, node)


def visit_children(w: Walk, node: ast.AST) -> None:
    fields = FIELDS.get(type(node))
    if fields is None:
        fields = node_fields(node)
    for name in fields:
        child = getattr(node, name, None)
        if isinstance(child, list):
            for item in child:
                if isinstance(item, ast.AST) and item.__class__ not in LEAVES:
                    visit(w, item)
        elif isinstance(child, ast.AST) and child.__class__ not in LEAVES:
            visit(w, child)


def visit_all(w: Walk, nodes: Sequence[Optional[ast.AST]]) -> None:
    for node in nodes:
        if node is not None and node.__class__ not in LEAVES:
            visit(w, node)


# `global a, b` / `nonlocal a` statements: at a line's start or after a `;`.
REBINDING = re.compile(r"(?:^|;)[ \t]*(?:global|nonlocal)[ \t]+(\w+(?:[ \t]*,[ \t]*\w+)*)",
                       re.MULTILINE)


def on_module(w: Walk, node: ast.Module) -> None:
    w.tree = node
    if "global" in w.text or "nonlocal" in w.text:
        # (read off the text: a walk of every node costs more than the rest of the
        # module's walk; a line of a string that looks like one only adds names)
        w.rebindable = {name.strip() for found in REBINDING.finditer(w.text)
                        for name in found.group(1).split(",")}
    for statement in node.body:
        if not is_preamble(statement):
            w.import_before = w.span(statement)
            break
        w.import_after = w.span(statement)
    visit_all(w, node.body)


def on_import(w: Walk, node: ast.Import) -> None:
    for alias in node.names:
        import_name(w, alias.name, alias.asname)


def on_import_from(w: Walk, node: ast.ImportFrom) -> None:
    names = None if node.names[0].name == "*" else [(a.name, a.asname) for a in node.names]
    import_from(w, node.module or "", node.level or 0, names)


def import_name(w: Walk, full: str, asname: Optional[str]) -> None:
    """`import a.b.c [as x]`."""
    note_keras_import(w, full)
    if asname is not None:
        w.bind(asname, Bound(BOUND_QNAME, full, text=full))
    else:
        head = full.split(".", 1)[0]
        w.bind(head, Bound(BOUND_QNAME, head, text=head))


def import_from(w: Walk, module: str, level: int,
                names: Optional[Sequence[Tuple[str, Optional[str]]]]
                ) -> None:
    """`from [.]module import name [as local], ...`; names None for `import *`."""
    if level:
        module = absolute(w, level, module)
    note_keras_import(w, module)
    if names is None and module:
        w.model.star_imports += (w.resolver.canonical(module),)
    for name, asname in names or ():
        full = f"{module}.{name}" if module else name
        note_keras_import(w, full)
        local = asname if asname is not None else name
        w.bind(local, Bound(BOUND_QNAME, full, text=local))


def absolute(w: Walk, level: int, module: str) -> str:
    package = w.model.module.split(".")
    if not w.model.path.endswith("__init__.py"):
        package = package[:-1]
    drop = level - 1
    package = package[: len(package) - drop] if drop <= len(package) else []
    return ".".join(package + ([module] if module else []))


def note_keras_import(w: Walk, full: str) -> None:
    canonical = w.resolver.canonical(full)
    for module, family in tfapi.KERAS_IMPORT_FAMILIES:
        if canonical == module or canonical.startswith(module + "."):
            w.keras_imports.add(family)


def on_class(w: Walk, node: ast.ClassDef) -> None:
    bases = [parts for parts in (dotted_parts(unstarred(b)) for b in node.bases) if parts]
    enter_class(w, node.name, w.name_span(node, "class"), bases)
    visit_all(w, node.decorator_list)
    visit_all(w, node.bases)
    visit_all(w, [k.value for k in node.keywords])
    visit_all(w, node.body)
    leave_class(w)


def enter_class(w: Walk, name: str, name_span: Span, base_parts: Sequence[Tuple[str, ...]]
                ) -> None:
    class_id = w.qualified(name)
    w.bind(name, Bound(BOUND_QNAME, class_id, text=name))
    info = ClassInfo(class_id, name, (), name_span)
    w.model.classes[class_id] = info
    w.pending_bases.append((info, [w.ref(parts) for parts in base_parts]))
    w.classes.append(info)
    w.qualname.append(name)
    w.scope = Scope(CLASS, w.scope)


def leave_class(w: Walk) -> None:
    w.pop_scope()
    w.qualname.pop()
    w.classes.pop()


def on_function(w: Walk, node) -> None:
    keyword = "def" if isinstance(node, ast.FunctionDef) else "async def"
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod"
                 for d in node.decorator_list)
    method = w.scope.kind == CLASS and not static
    enter_function(w, node.name, w.name_span(node, keyword),
                   param_names(node.args), static)
    fn = w.fn
    fn.node = node
    w.function_of[id(node)] = fn
    name = node.name
    fn.own_calls = not node.decorator_list and (
        not method and not static and w.functions[-2].node is not None
        or name[:1] == "_" and not name.endswith("__")
        and name not in tfapi.FRAMEWORK_CALLED_METHODS)
    if node.args.kwarg is not None:
        creator_effect(w, node, method)
    if w.fn.info is not None:
        w.fn.info.params = signature(node.args)
        w.fn.info.static = static
    visit_all(w, node.decorator_list)
    walk_parameters(w, node.args)
    if w.fn.info is not None:
        for arg in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
            parts = dotted_parts(arg.annotation) if arg.annotation is not None else None
            if parts:
                w.pending_annotations.append((w.fn.info, arg.arg, w.ref(parts)))
    if node.returns is not None:
        visit(w, node.returns)
    visit_all(w, node.body)
    leave_function(w)


def enter_function(w: Walk, name: str, name_span: Span, params: List[str], static: bool
                   ) -> None:
    function_id = w.qualified(name)
    w.bind(name, Bound(BOUND_QNAME, function_id, text=name))
    in_class = w.scope.kind == CLASS and bool(w.classes)
    if in_class:
        klass: Optional[str] = w.classes[-1].id
        self_name = params[0] if params and not static else None
        w.classes[-1].methods += (name,)
    else:  # a nested function sees the `self` of the method around it
        klass, self_name = w.fn.klass, w.fn.self_name
    info = FunctionInfo(function_id, name, klass if in_class else None, name_span)
    w.model.functions[function_id] = info
    w.scope = Scope(FUNCTION, w.scope)
    w.qualname.extend([name, "<locals>"])
    for param in params:
        w.bind(param, Bound(BOUND_PARAM, function_id, param, attr=param))
    w.push_function(Function(function_id, self_name, klass, info))


def leave_function(w: Walk) -> None:
    w.pop_function()
    del w.qualname[-2:]
    w.pop_scope()


def walk_parameters(w: Walk, args: ast.arguments) -> None:
    """Annotations and defaults, in source order."""
    positional = args.posonlyargs + args.args
    defaults: List[Optional[ast.AST]] = [None] * (len(positional) - len(args.defaults))
    defaults += args.defaults
    for arg, default in zip(positional, defaults):
        visit_all(w, [arg.annotation, default])
    if args.vararg is not None:
        visit_all(w, [args.vararg.annotation])
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        visit_all(w, [arg.annotation, default])
    if args.kwarg is not None:
        visit_all(w, [args.kwarg.annotation])


def on_lambda(w: Walk, node: ast.Lambda) -> None:
    enter_lambda(w, node, w.span(node), param_names(node.args))
    w.fn.node = node
    w.function_of[id(node)] = w.fn
    if node.args.kwarg is not None:
        creator_effect(w, node, False)
    walk_parameters(w, node.args)
    visit(w, node.body)
    leave_lambda(w)


def enter_lambda(w: Walk, node: object, span: Span, params: List[str]) -> None:
    outer = w.fn
    lambda_id = w.lambda_id(node)
    info = FunctionInfo(lambda_id, "<lambda>", None, span)
    w.model.functions[lambda_id] = info
    if id(node) not in w.entry_lambdas:
        # Runs where it is written (tf.cond, map_fn, sorted...): the context it sits in.
        if w.higher_order_lambdas:
            pending = w.higher_order_lambdas.pop(id(node), None)
            if pending is not None:
                pending[4].append(len(w.model.calls))
        w.add_call(CallEdge(outer.id, Bound(BOUND_CALL, qname=lambda_id),
                            tuple(outer.scopes), info.span), outer)
    w.scope = Scope(FUNCTION, w.scope)
    for param in params:
        w.bind_local(param)
    w.push_function(Function(lambda_id, outer.self_name, outer.klass, info))


def leave_lambda(w: Walk) -> None:
    w.pop_function()
    w.pop_scope()


def on_branch(w: Walk, node) -> None:
    """`if`/`while`/`x if t else y`: a test that may be a tensor is recorded on the
    updates and the calls of the function's own code under it (`BranchTest`, and
    `add_call` guards the calls). Each branch may or may not run (`Flow`)."""
    test_node = node.test
    kind = node.__class__
    is_while = kind is ast.While
    flow = w.flow()
    if is_while:
        flow.begin_loop()  # (the test runs again after each pass of the body)
    if kind is not ast.IfExp:
        visit_all(w, (test_node,))
        if kind is ast.If:
            known = truth(w, test_node)
            if known is not None:  # configuration the code spells out: one way runs
                visit_all(w, node.body if known else node.orelse)
                return
    fn = w.fn
    guarded = not plain_test(test_node, fn.info.params if fn.info is not None else ())
    outer = fn.guard
    if guarded:
        reads: List[Bound] = []
        test_reads(w, test_node, reads, 0)
        tests = w.model.branch_tests
        tests.append(BranchTest(TEST_WHILE if is_while else TEST_IF, w.span(test_node),
                                w.code(test_node), tuple(reads)))
        fn.tests.append(len(tests) - 1)
        fn.guard = tuple(fn.tests)
    if is_while:
        visit_all(w, node.body)
    else:
        narrowing = narrowing_of(w, test_node) if kind is ast.If else None
        opened = enter_branch(w, narrowing, True) if narrowing is not None else 0
        flow.begin()
        visit_all(w, (node.body,) if kind is ast.IfExp else node.body)
        taken = flow.end()
        if narrowing is not None:
            leave_branch(w, opened)
            opened = enter_branch(w, narrowing, False)
        if kind is ast.IfExp:
            visit_all(w, (test_node,))
        flow.begin()
        visit_all(w, (node.orelse,) if kind is ast.IfExp else node.orelse)
        flow.join(taken, flow.end())
        if narrowing is not None:
            leave_branch(w, opened)
    if guarded:
        fn.tests.pop()
        fn.guard = outer
    if is_while:
        flow.end_loop()
        visit_all(w, node.orelse)  # (a `while`'s `else` runs once, after the loop)


def test_reads(w: Walk, node: ast.AST, reads: List[Bound], depth: int) -> None:
    """The operands whose values a test takes: what decides whether it is a tensor."""
    kind = node.__class__
    if depth > MAX_SUM_DEPTH:
        return
    if kind is ast.UnaryOp:
        test_reads(w, node.operand, reads, depth + 1)  # type: ignore[attr-defined]
    elif kind is ast.BoolOp:
        for value in node.values:  # type: ignore[attr-defined]
            test_reads(w, value, reads, depth + 1)
    elif kind is ast.BinOp:
        test_reads(w, node.left, reads, depth + 1)  # type: ignore[attr-defined]
        test_reads(w, node.right, reads, depth + 1)  # type: ignore[attr-defined]
    elif kind is ast.Compare:
        if not any(op.__class__ in PYTHON_COMPARISONS
                   for op in node.ops):  # type: ignore[attr-defined]
            for operand in [node.left, *node.comparators]:  # type: ignore[attr-defined]
                test_reads(w, operand, reads, depth + 1)
    elif kind is NAME or kind is ATTRIBUTE or kind is ast.Call:
        reads.append(ref_bound(w, node))


def on_comprehension(w: Walk, node) -> None:
    w.scope = Scope(COMPREHENSION, w.scope)
    if isinstance(node, ast.DictComp):
        visit_all(w, [node.key, node.value])
    else:
        visit(w, node.elt)
    for generator in node.generators:
        bind_loop_target(w, generator.target, generator.iter)
        visit_all(w, [generator.target, generator.iter])
        visit_all(w, generator.ifs)
    w.pop_scope()


def on_return(w: Walk, node: ast.Return) -> None:
    if node.value is not None:
        visit(w, node.value)
    info = w.fn.info
    if info is not None and node.value is not None:
        # What messages call it: `AdamW(...)` for a returned construction.
        parts = dotted_parts(node.value.func) if isinstance(node.value, ast.Call) else None
        text = f"{parts[-1]}(...)" if parts else "return value"
        info.returns.append(bound_for(w, node.value, text))


def on_assign(w: Walk, node: ast.Assign) -> None:
    visit_all(w, node.targets)
    visit(w, node.value)
    for target in node.targets:
        bind_target(w, target, node.value)
    value = node.value
    target_text = w.code(node.targets[0])
    elements: List[ast.AST]
    if isinstance(value, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
        elements, target_text = [value.elt], target_text + "[...]"
    elif isinstance(value, (ast.List, ast.Tuple)):
        elements, target_text = [unstarred(e) for e in value.elts], target_text + "[...]"
    else:
        elements = [value]
    name_creation_targets(w, elements, target_text)


def on_ann_assign(w: Walk, node: ast.AnnAssign) -> None:
    visit_all(w, [node.target, node.annotation, node.value])
    bind_target(w, node.target, node.value)


def on_aug_assign(w: Walk, node: ast.AugAssign) -> None:
    visit_all(w, [node.target, node.value])
    if isinstance(node.target, ast.Name):
        w.bind_local(node.target.id)


def on_named_expr(w: Walk, node: ast.NamedExpr) -> None:
    if isinstance(node.target, ast.Name):
        w.fn.walrus.add(node.target.id)
    visit_all(w, [node.target, node.value])
    bind_target(w, node.target, node.value)


def on_for(w: Walk, node) -> None:
    visit(w, node.iter)  # (once, before the loop)
    flow = w.flow()
    flow.begin_loop()
    bind_loop_target(w, node.target, node.iter)
    visit(w, node.target)
    visit_all(w, node.body)
    flow.end_loop()
    visit_all(w, node.orelse)


def on_try(w: Walk, node) -> None:
    """`try`: the body may stop anywhere, so a handler sees what came before it or any
    binding of the body; after the statement, what any way through it left."""
    flow = w.flow()
    flow.begin_try()
    visit_all(w, node.body)
    body, starts = flow.end_try()
    flow.begin()  # (`else` runs after the body, outside its handlers)
    for name, reaching in body.items():
        flow.set(name, reaching)
    visit_all(w, node.orelse)
    ways = [flow.end()]
    for handler in node.handlers:
        flow.begin()
        for name, reaching in starts.items():
            flow.set(name, reaching)
        visit(w, handler)
        ways.append(flow.end())
    flow.join(*ways)
    visit_all(w, node.finalbody)


def on_match(w: Walk, node) -> None:
    """`match`: one case runs, or none."""
    visit(w, node.subject)
    flow = w.flow()
    ways = []
    for case in node.cases:
        flow.begin()
        visit_all(w, (case.pattern, case.guard))
        visit_all(w, case.body)
        ways.append(flow.end())
    flow.join(*ways, {})


def on_except_handler(w: Walk, node: ast.ExceptHandler) -> None:
    if node.type is not None:
        visit(w, node.type)
    if node.name is not None:
        w.bind(node.name, Bound(BOUND_LOCAL, text=node.name))
    visit_all(w, node.body)


def on_dict(w: Walk, node: ast.Dict) -> None:
    for key, value in zip(node.keys, node.values):
        visit_all(w, [key, value])


def on_with(w: Walk, node) -> None:
    first = len(w.model.scopes)
    entered = open_scopes(w, [item.context_expr for item in node.items])
    strategy_scopes = [e for e in w.model.scopes[first:] if e.creator == -1]
    if strategy_scopes:
        preceding, body, reads = block_facts(w, node)
        for entry in strategy_scopes:
            entry.preceding, entry.body, entry.item_reads = preceding, body, reads
    for item in node.items:
        visit(w, item.context_expr)
        if item.optional_vars is not None:
            bind_target(w, item.optional_vars, None)
            visit(w, item.optional_vars)
    visit_all(w, node.body)
    close_scopes(w, *entered)


def open_scopes(w: Walk, items: Sequence[ast.AST]) -> Tuple[int, int]:
    """Enter a `with` statement's items (the expressions before `as`); what to pass
    to `close_scopes` when it ends."""
    fn = w.fn
    stateless = sum(1 for item in items if is_stateless_scope(w, item))
    fn.stateless += stateless
    opened = 0
    for item in items:
        receiver = scope_receiver(w, item)
        if receiver is None:
            if creator_scope(w, item, True):
                fn.scopes.append(len(w.model.scopes) - 1)
                opened += 1
            continue
        entry = ScopeEntry((), w.code(receiver), w.span(item), fn.id)
        if fn.narrowings:
            entry.narrowed = narrowed_for(w, entry.text)
        attribute = attribute_of(receiver)
        if attribute is not None and w.is_self(attribute[0]):
            entry.receivers = (Bound(BOUND_SELF_ATTR, qname=fn.klass, attr=attribute[1],
                                     text=entry.text, span=w.span(receiver)),)
        else:
            entry.receivers = (bound_for(w, receiver, entry.text),)
        w.model.scopes.append(entry)
        fn.scopes.append(len(w.model.scopes) - 1)
        opened += 1
    return stateless, opened


def close_scopes(w: Walk, stateless: int, opened: int) -> None:
    fn = w.fn
    fn.stateless -= stateless
    for _ in range(opened):
        fn.scopes.pop()


def is_stateless_scope(w: Walk, item) -> bool:
    func = func_of(item)
    if func is None:
        return False
    attribute = attribute_of(func)
    name = attribute[1] if attribute is not None else name_of(func) or ""
    return name in tfapi.STATELESS_SCOPE_NAMES


def scope_receiver(w: Walk, item: ast.AST) -> Optional[ast.AST]:
    """`X` for a `X.scope()` with-item."""
    if not isinstance(item, ast.Call) or has_arguments(item):
        return None
    func = item.func
    attribute = attribute_of(func)
    return attribute[0] if attribute is not None and attribute[1] == "scope" else None


def on_call(w: Walk, node: ast.Call) -> None:
    record_call(w, node)
    if node.func.__class__ not in LEAVES:  # `f(x)`: nothing more to see in `f`
        visit(w, node.func)
    visit_all(w, node.args)
    for keyword in node.keywords:
        if keyword.value.__class__ not in LEAVES:
            visit(w, keyword.value)


def on_attribute(w: Walk, node: ast.Attribute) -> None:
    value = node.value
    record_attribute(w, node, value, node.attr)
    if value.__class__ not in LEAVES:  # `x.attr`, `self.attr`: the commonest
        visit(w, value)


def leaf(w: Walk, node: ast.AST) -> None:
    return None


HANDLERS: Dict[type, Callable[[Walk, Any], None]] = {
    ast.Module: on_module, ast.Import: on_import, ast.ImportFrom: on_import_from,
    ast.ClassDef: on_class, ast.FunctionDef: on_function, ast.AsyncFunctionDef: on_function,
    ast.Lambda: on_lambda, ast.ListComp: on_comprehension, ast.SetComp: on_comprehension,
    ast.GeneratorExp: on_comprehension, ast.DictComp: on_comprehension,
    ast.Return: on_return, ast.Assign: on_assign, ast.AnnAssign: on_ann_assign,
    ast.AugAssign: on_aug_assign, ast.NamedExpr: on_named_expr, ast.For: on_for,
    ast.AsyncFor: on_for, ast.With: on_with, ast.AsyncWith: on_with,
    ast.ExceptHandler: on_except_handler, ast.Call: on_call, ast.Attribute: on_attribute,
    ast.Dict: on_dict, ast.Name: leaf, ast.Constant: leaf,
    ast.If: on_branch, ast.While: on_branch, ast.IfExp: on_branch, ast.Try: on_try,
}
for _kind, _handler in (("TryStar", on_try), ("Match", on_match)):  # (Python 3.11, 3.10)
    if hasattr(ast, _kind):
        HANDLERS[getattr(ast, _kind)] = _handler

"""One pass over Python's own `ast` tree -> a `FileModel`.

Spans are Python's positions, in characters; texts are the source between them
(Python leaves the parentheses that group an expression out of its node, but an
argument's span takes them: fixes add and remove arguments at those spans). The walk
visits nodes in source order: sequence numbers decide which binding a name sees.
"""
from __future__ import annotations

import ast
import re
import sys
from bisect import bisect_right
from sys import intern
from typing import Dict, List, Optional, Sequence, Tuple

from ..lines import line_starts, position
from .facts import (
    BOOL, CALL, FLOAT, INT, NONE, OTHER, QNAME, STR, Argument, Bound, FileModel, Span, Value,
)
from .names import NameResolver
from .walk_state import MAX_VALUE_DEPTH, WalkState, literal_int

_NEWLINE = re.compile(r"\r\n|\r|\n")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_CONSTANT_NAMES = {None: "None", True: "True", False: "False"}
_SKIPPED_FIELDS = frozenset({"ctx", "op", "ops", "type_comment", "kind", "is_async",
                             "type_ignores", "simple", "conversion", "level"})
# Where the order of `_fields` is not the order libcst visits (which is the source's).
_ORDER = {
    ast.IfExp: ("body", "test", "orelse"),
}
_FIELDS: Dict[type, Tuple[str, ...]] = {}
_NAME, _ATTRIBUTE = ast.Name, ast.Attribute


def dotted_parts(node: ast.AST) -> Optional[Tuple[str, ...]]:
    """('a', 'b', 'c') for `a.b.c`; None for anything that is not a plain dotted name.
    `None`, `True` and `False` count as names, as they are in libcst's tree."""
    if node.__class__ is _NAME:
        return (node.id,)  # type: ignore[attr-defined]
    parts: List[str] = []
    while node.__class__ is _ATTRIBUTE:
        parts.append(node.attr)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
    if node.__class__ is _NAME:
        parts.append(node.id)  # type: ignore[attr-defined]
    elif not parts and _is_name_constant(node):
        parts.append(_CONSTANT_NAMES[node.value])  # type: ignore[attr-defined]
    else:
        return None
    parts.reverse()
    return tuple(parts)


def _is_name_constant(node: ast.AST) -> bool:
    """`None`, `True`, `False`: constants to Python, names to libcst."""
    if not isinstance(node, ast.Constant):
        return False
    value = node.value
    return value is None or value is True or value is False


def _unstarred(node: ast.AST) -> ast.AST:
    return node.value if isinstance(node, ast.Starred) else node


class AstModelBuilder(WalkState):
    def __init__(self, path: str, module: str, resolver: NameResolver, text: str):
        super().__init__(path, module, resolver)
        self._text = text
        self._starts = line_starts(text)
        # line -> its UTF-8, for the lines with a non-ASCII character (columns differ there)
        self._wide: Dict[int, bytes] = {}
        if not text.isascii():
            for run in _NON_ASCII.finditer(text):
                line = bisect_right(self._starts, run.start())
                if line not in self._wide:
                    end = self._starts[line] if line < len(self._starts) else len(text)
                    self._wide[line] = text[self._starts[line - 1]:end].encode(
                        "utf-8", "surrogatepass")
        first = _NEWLINE.search(text)
        self.model.newline = first.group() if first else "\n"

    # --- positions and text ----------------------------------------------------

    def _column(self, line: int, byte_column: int) -> int:
        """Python counts columns in UTF-8 bytes; spans count characters."""
        encoded = self._wide.get(line)
        if encoded is None:
            return byte_column
        return len(encoded[:byte_column].decode("utf-8", "ignore"))

    def _span(self, node: ast.AST) -> Span:
        line, end_line = node.lineno, node.end_lineno  # type: ignore[attr-defined]
        wide = self._wide
        if not wide or (line not in wide and end_line not in wide):
            return Span(line, node.col_offset, end_line, node.end_col_offset)  # type: ignore[attr-defined]
        return Span(line, self._column(line, node.col_offset),  # type: ignore[attr-defined]
                    end_line, self._column(end_line, node.end_col_offset))  # type: ignore[attr-defined]

    def _offsets(self, node: ast.AST) -> Tuple[int, int]:
        span = self._span(node)
        starts = self._starts
        return starts[span.line - 1] + span.column, starts[span.end_line - 1] + span.end_column

    def _code(self, node: ast.AST) -> str:
        start, end = self._offsets(node)
        # Interned: the same names recur thousands of times in a file, and a pickle
        # writes an object it has seen once as a reference (smaller, faster models).
        return intern(self._text[start:end])

    def _name_span(self, node: ast.AST, keyword: str) -> Span:
        """The span of the name in `class Name` / `def name`."""
        start, _ = self._offsets(node)
        text = self._text
        after = text.find(keyword, start) + len(keyword)
        at = text.find(node.name, after)  # type: ignore[attr-defined]
        line, column = position(self._starts, at)
        return Span(line, column, line, column + len(node.name))  # type: ignore[attr-defined]

    def _is_self(self, node: ast.AST) -> bool:
        fn = self._fn  # (`self_name` is None outside methods: no name equals it)
        return node.__class__ is _NAME and node.id == fn.self_name and fn.klass is not None

    # --- the walk -------------------------------------------------------------------

    def walk(self, node: ast.AST) -> None:
        handler = _HANDLERS.get(type(node))
        if handler is not None:
            handler(self, node)
        else:
            self._children(node)

    def _children(self, node: ast.AST) -> None:
        fields = _FIELDS.get(type(node))
        if fields is None:
            fields = _FIELDS[type(node)] = _ORDER.get(type(node)) or tuple(
                f for f in node._fields if f not in _SKIPPED_FIELDS)
        walk = self.walk
        for name in fields:
            child = getattr(node, name, None)
            if isinstance(child, list):
                for item in child:
                    if isinstance(item, ast.AST) and item.__class__ not in _LEAVES:
                        walk(item)
            elif isinstance(child, ast.AST) and child.__class__ not in _LEAVES:
                walk(child)

    def _walk_all(self, nodes: Sequence[Optional[ast.AST]]) -> None:
        walk = self.walk
        for node in nodes:
            if node is not None and node.__class__ not in _LEAVES:
                walk(node)

    def _module(self, node: ast.Module) -> None:
        for statement in node.body:
            if not _is_preamble(statement):
                self._import_before = self._span(statement)
                break
            self._import_after = self._span(statement)
        self._walk_all(node.body)

    # --- bindings ------------------------------------------------------------

    def _bind_target(self, target: ast.AST, value: Optional[ast.AST]) -> None:
        if isinstance(target, ast.Name):
            parts = dotted_parts(value) if value is not None else None
            if parts is not None and not self._self_head(parts):
                self._bind(target.id, Bound("qname", text=target.id, span=self._span(value)),
                           alias=parts)
            else:
                self._bind(target.id, self._bound_for(value, target.id))
        elif isinstance(target, (ast.Tuple, ast.List)):
            self._bind_unpacking(target, value)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, None)
        elif isinstance(target, ast.Attribute) and self._is_self(target.value):
            klass = self.model.classes.get(self._fn.klass or "")
            if klass is not None:
                bound = self._bound_for(value, "self." + target.attr)
                klass.attrs.setdefault(target.attr, []).append(bound)

    def _bind_unpacking(self, target, value: Optional[ast.AST]) -> None:
        elements = target.elts
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(elements) \
                and not any(isinstance(e, ast.Starred) for e in value.elts):
            for element, item in zip(elements, value.elts):
                self._bind_target(_unstarred(element), item)
            return
        if value is None or any(isinstance(e, ast.Starred) for e in elements):
            for element in elements:
                self._bind_target(_unstarred(element), None)
            return
        source = self._bound_for(value, self._code(value))
        for i, element in enumerate(elements):
            if isinstance(element, ast.Name):
                self._bind(element.id, Bound("item", text=element.id, attr=str(i),
                                             options=(source,)))
            else:
                self._bind_target(element, None)

    def _bind_loop_target(self, target: ast.AST, iterable: ast.AST) -> None:
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) \
                and isinstance(target, (ast.Tuple, ast.List)):
            sources: List[Optional[ast.AST]] = [
                a for a in iterable.args if not isinstance(a, ast.Starred)]
            sources += [k.value for k in iterable.keywords if k.arg is not None]
            if iterable.func.id == "enumerate" and len(target.elts) == 2 and sources:
                sources = [None, sources[0]]
            elif iterable.func.id != "zip":
                sources = []
            if len(sources) == len(target.elts):
                for element, source in zip(target.elts, sources):
                    element = _unstarred(element)
                    if isinstance(element, ast.Name) and source is not None:
                        self._bind(element.id, self._element_of(source))
                    else:
                        self._bind_target(element, None)
                return
        if isinstance(target, ast.Name):
            self._bind(target.id, self._element_of(iterable))
        else:
            self._bind_target(target, None)

    def _element_of(self, source: ast.AST) -> Bound:
        return Bound("element", text=self._code(source), options=(self._ref_bound(source),))

    def _name_bound(self, node: ast.Name, text: Optional[str]) -> Bound:
        """`_bound_for(node, text)` for a plain name, the commonest case by far (keras+
        tf_keras: 70k of 107k), in one step. A name's text is the name, on an ASCII
        line; elsewhere Python may have normalised it (NFKC: `ﬁ` is `fi`), so it is
        taken from the source."""
        name = node.id
        if text is None:
            text = self._code(node) if node.lineno in self._wide else name
        if self._is_self(node):
            return Bound("local", None, text, self._span(node))
        bound = Bound("names", None, text, self._span(node))  # (kind, qname, text, span)
        self._pending_names.append((self._ref((name,)), bound))
        return bound

    def _bound_for(self, value: Optional[ast.AST], text: str) -> Bound:
        if value is None:
            return Bound("local", text=text)
        if value.__class__ is ast.Name:
            return self._name_bound(value, text)  # type: ignore[arg-type]
        span = self._span(value)
        parts = dotted_parts(value)
        if parts is not None and not self._self_head(parts):
            if len(parts) == 1:
                bound = Bound("names", None, text, span)
                self._pending_names.append((self._ref(parts), bound))
                return bound
            bound = Bound("qname", None, text, span)
            self._pending_bounds.append((bound, self._ref(parts)))
            return bound
        if isinstance(value, (ast.Attribute, ast.Subscript)):
            return self._ref_bound(value, text)
        if isinstance(value, ast.Call):
            func = value.func
            creation = self._creation_of_node.get(id(value))
            if isinstance(func, ast.Attribute) and self._is_self(func.value):
                return Bound("method", qname=self._fn.klass, attr=func.attr, text=text,
                             span=span, creation=creation)
            func_parts = dotted_parts(func)
            if func_parts is not None:
                first = next((a for a in value.args if not isinstance(a, ast.Starred)), None)
                options = (self._ref_bound(first),) if first is not None and (isinstance(
                    first, (ast.Name, ast.Attribute, ast.Lambda)) or _is_name_constant(first)) \
                    else ()
                bound = Bound("call", text=text, span=span, creation=creation, options=options)
                self._pending_bounds.append((bound, self._ref(func_parts)))
                return bound
            return Bound("local", text=text, span=span, creation=creation)
        if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
            elements = tuple(self._bound_for(e, text) for e in value.elts
                             if not isinstance(e, ast.Starred))
            return Bound("container", text=text, span=span, options=elements)
        if isinstance(value, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return Bound("container", text=text, span=span,
                         options=(self._bound_for(value.elt, text),))
        return Bound("local", text=text, span=span)

    def _ref_bound(self, node: ast.AST, text: Optional[str] = None) -> Bound:
        if node.__class__ is ast.Name:
            return self._name_bound(node, text)  # type: ignore[arg-type]
        text = text if text is not None else self._code(node)
        if isinstance(node, ast.Name) or _is_name_constant(node):
            return self._bound_for(node, text)
        if isinstance(node, ast.Attribute):
            if self._is_self(node.value):
                return Bound("self-attr", qname=self._fn.klass, attr=node.attr, text=text,
                             span=self._span(node))
            bound = Bound("attr", None, text, self._span(node), node.attr,
                          (self._ref_bound(node.value),))
            parts = dotted_parts(node)
            if parts is not None and not self._self_head(parts):
                self._pending_bounds.append((bound, self._ref(parts)))
            return bound
        if isinstance(node, ast.Subscript):
            return Bound("element", text=text, span=self._span(node),
                         options=(self._ref_bound(node.value),))
        if isinstance(node, ast.Lambda):
            return Bound("qname", qname=self._lambda_id(node), text="lambda", span=self._span(node))
        if isinstance(node, ast.Call):
            return self._bound_for(node, text)
        return Bound("local", text=text, span=self._span(node))

    # --- values --------------------------------------------------------------

    def _value(self, node: ast.AST, depth: int = 0) -> Value:
        span = self._span(node)
        if isinstance(node, ast.Constant):
            literal = node.value
            if literal is None:
                return Value(NONE, "None", span)
            if literal is True or literal is False:
                return Value(BOOL, str(literal), span, literal=literal)
            text = self._code(node)
            if isinstance(literal, str) and _single_string_literal(text):
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
            self._pending_values.append((value, self._ref(parts)))
            return value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
                and isinstance(node.operand, ast.Constant) \
                and type(node.operand.value) in (int, float):
            inner = self._value(node.operand, depth)
            inner.span, inner.text = span, self._code(node)
            if isinstance(inner.literal, int):
                inner.literal = -inner.literal
            return inner
        if isinstance(node, ast.Call) and depth < MAX_VALUE_DEPTH:
            value = Value(CALL, self._code(node), span)
            func_parts = dotted_parts(node.func)
            if func_parts is not None:
                self._pending_values.append((value, self._ref(func_parts)))
            value.args = tuple(self._value(a, depth + 1) for a in node.args
                               if not isinstance(a, ast.Starred))
            value.kwargs = tuple((k.arg, self._value(k.value, depth + 1))
                                 for k in node.keywords if k.arg is not None)
            return value
        return Value(OTHER, self._code(node), span)

    # --- imports, classes, functions, lambdas, comprehensions --------------------------

    def _import_node(self, node: ast.Import) -> None:
        for alias in node.names:
            self._import(alias.name, alias.asname)

    def _import_from_node(self, node: ast.ImportFrom) -> None:
        names = None if node.names[0].name == "*" else [(a.name, a.asname) for a in node.names]
        self._import_from(node.module or "", node.level or 0, names)

    def _class(self, node: ast.ClassDef) -> None:
        bases = [parts for parts in (dotted_parts(_unstarred(b)) for b in node.bases) if parts]
        self._enter_class(node.name, self._name_span(node, "class"), bases)
        self._walk_all(node.decorator_list)
        self._walk_all(node.bases)
        self._walk_all([k.value for k in node.keywords])
        self._walk_all(node.body)
        self._leave_class()

    def _function(self, node) -> None:
        keyword = "def" if isinstance(node, ast.FunctionDef) else "async def"
        static = any(isinstance(d, ast.Name) and d.id == "staticmethod"
                     for d in node.decorator_list)
        self._enter_function(node.name, self._name_span(node, keyword),
                             _param_names(node.args), static)
        self._walk_all(node.decorator_list)
        self._walk_parameters(node.args)
        if node.returns is not None:
            self.walk(node.returns)
        self._walk_all(node.body)
        self._leave_function()

    def _walk_parameters(self, args: ast.arguments) -> None:
        """Annotations and defaults in libcst's order: parameters, *args, keyword-only
        parameters, **kwargs, then positional-only parameters."""
        positional = args.posonlyargs + args.args
        defaults: List[Optional[ast.AST]] = [None] * (len(positional) - len(args.defaults))
        defaults += args.defaults
        posonly = len(args.posonlyargs)
        walk = self._walk_all
        for arg, default in zip(args.args, defaults[posonly:]):
            walk([arg.annotation, default])
        if args.vararg is not None:
            walk([args.vararg.annotation])
        for arg, default in zip(args.kwonlyargs, args.kw_defaults):
            walk([arg.annotation, default])
        if args.kwarg is not None:
            walk([args.kwarg.annotation])
        for arg, default in zip(args.posonlyargs, defaults[:posonly]):
            walk([arg.annotation, default])

    def _lambda(self, node: ast.Lambda) -> None:
        self._enter_lambda(node, self._span(node), _param_names(node.args))
        self._walk_parameters(node.args)
        self.walk(node.body)
        self._leave_lambda()

    def _comprehension(self, node) -> None:
        self._enter_comprehension_scope()
        if isinstance(node, ast.DictComp):
            self._walk_all([node.key, node.value])
        else:
            self.walk(node.elt)
        for generator in node.generators:
            self._bind_loop_target(generator.target, generator.iter)
            self._walk_all([generator.target, generator.iter])
            self._walk_all(generator.ifs)
        self._pop_scope()

    def _return(self, node: ast.Return) -> None:
        if node.value is not None:
            self.walk(node.value)
        info = self._fn.info
        if info is not None and node.value is not None:
            info.returns.append(self._bound_for(node.value, "return value"))

    # --- other bindings ---------------------------------------------------------

    def _assign(self, node: ast.Assign) -> None:
        self._walk_all(node.targets)
        self.walk(node.value)
        for target in node.targets:
            self._bind_target(target, node.value)
        value = node.value
        target_text = self._code(node.targets[0])
        if isinstance(value, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            elements, target_text = [value.elt], target_text + "[...]"
        elif isinstance(value, (ast.List, ast.Tuple)):
            elements, target_text = [_unstarred(e) for e in value.elts], target_text + "[...]"
        else:
            elements = [value]
        self._name_creation_targets(elements, target_text)

    def _ann_assign(self, node: ast.AnnAssign) -> None:
        self._walk_all([node.target, node.annotation, node.value])
        self._bind_target(node.target, node.value)

    def _aug_assign(self, node: ast.AugAssign) -> None:
        self._walk_all([node.target, node.value])
        if isinstance(node.target, ast.Name):
            self._bind_local(node.target.id)

    def _named_expr(self, node: ast.NamedExpr) -> None:
        self._walk_all([node.target, node.value])
        self._bind_target(node.target, node.value)

    def _for(self, node) -> None:
        self._bind_loop_target(node.target, node.iter)
        self._walk_all([node.target, node.iter])
        self._walk_all(node.body)
        self._walk_all(node.orelse)

    def _except_handler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.walk(node.type)
        if node.name is not None:
            self._bind(node.name, Bound("local", text=node.name))
        self._walk_all(node.body)

    def _dict(self, node: ast.Dict) -> None:
        for key, value in zip(node.keys, node.values):
            self._walk_all([key, value])

    # --- strategy scopes ----------------------------------------------------------

    def _with(self, node) -> None:
        entered = self._open_scopes([item.context_expr for item in node.items])
        for item in node.items:
            self.walk(item.context_expr)
            if item.optional_vars is not None:
                self._bind_target(item.optional_vars, None)
                self.walk(item.optional_vars)
        self._walk_all(node.body)
        self._close_scopes(*entered)

    # --- calls and attributes -------------------------------------------------------

    def _call(self, node: ast.Call) -> None:
        self._record_call(node)
        if node.func.__class__ not in _LEAVES:  # `f(x)`: nothing more to see in `f`
            self.walk(node.func)
        self._walk_all(node.args)
        for keyword in node.keywords:
            if keyword.value.__class__ not in _LEAVES:
                self.walk(keyword.value)

    def _arguments(self, node: ast.Call) -> Tuple[Argument, ...]:
        items: List[Tuple[ast.AST, Optional[str], ast.AST, str]] = [
            (a, None, a.value, "*") if isinstance(a, ast.Starred) else (a, None, a, "")
            for a in node.args]
        items += [(k, k.arg, k.value, "" if k.arg is not None else "**") for k in node.keywords]
        if node.args and node.keywords and _before(node.keywords[0], node.args[-1]):
            items.sort(key=lambda item: (item[0].lineno, item[0].col_offset))  # type: ignore[attr-defined]
        arguments: List[Argument] = []
        # Where the text before the next argument starts: after the callee, then after
        # each argument (its grouping parentheses included).
        after = self._offsets(node.func)[1]
        for whole, keyword, value, star in items:
            start, end = self._offsets(whole)
            if whole is value:  # a positional argument: Python leaves out `(` `)` around it
                start, end = _grouped(self._text, after, start, end, first=not arguments)
            arguments.append(Argument(keyword, self._value(value), self._text_span(start, end),
                                      star))
            after = end
        if arguments:
            comma = _trailing_comma(self._text, after)
            if comma is not None:
                arguments[-1].trailing_comma = self._text_span(comma, comma + 1)
        return tuple(arguments)



    def _text_span(self, start: int, end: int) -> Span:
        line, column = position(self._starts, start)
        end_line, end_column = position(self._starts, end)
        return Span(line, column, end_line, end_column)


    def _attribute(self, node: ast.Attribute) -> None:
        value = node.value
        self._record_attribute(node, value, node.attr)
        if value.__class__ not in _LEAVES:  # `x.attr`, `self.attr`: the commonest
            self.walk(value)

    # --- what the shared recording needs to know of Python's nodes --------------------

    def _dotted(self, node: ast.AST) -> Optional[Tuple[str, ...]]:
        return dotted_parts(node)

    def _callee_text(self, parts: Tuple[str, ...]) -> str:
        return intern(".".join(parts))  # as `_code`: recurs, pickles once

    def _attribute_of(self, node) -> Optional[Tuple[ast.AST, str]]:
        return (node.value, node.attr) if isinstance(node, ast.Attribute) else None

    def _name_of(self, node) -> Optional[str]:
        if isinstance(node, ast.Name):
            return node.id
        return _CONSTANT_NAMES[node.value] if _is_name_constant(node) else None

    def _func_of(self, node) -> Optional[ast.AST]:
        return node.func if isinstance(node, ast.Call) else None

    def _call_arguments(self, call: ast.Call):
        return ([a for a in call.args if not isinstance(a, ast.Starred)],
                [(k.arg, k.value) for k in call.keywords if k.arg is not None])

    def _has_arguments(self, call: ast.Call) -> bool:
        return bool(call.args or call.keywords)

    def _is_lambda(self, node) -> bool:
        return isinstance(node, ast.Lambda)

    def _member_span(self, node: ast.Attribute) -> Span:
        span = self._span(node)  # the member is the end of the attribute, on its last line
        return Span(span.end_line, span.end_column - len(node.attr), span.end_line,
                    span.end_column)


def _leaf(builder: AstModelBuilder, node: ast.AST) -> None:
    return None


# Nothing to record in these, and nothing below them: the walk does not even call itself
# for them (a quarter of the nodes it meets).
_LEAVES = frozenset({ast.Name, ast.Constant})


def _before(a: ast.AST, b: ast.AST) -> bool:
    return (a.lineno, a.col_offset) < (b.lineno, b.col_offset)  # type: ignore[attr-defined]


def _skip_comment(text: str, i: int) -> int:
    """Past a `#` comment starting at `i`, to its line's end."""
    while i < len(text) and text[i] not in "\r\n":
        i += 1
    return i


def _grouped(text: str, after: int, start: int, end: int, first: bool) -> Tuple[int, int]:
    """The offsets of an argument with the parentheses that group it: `(x)` in `f((x))`.
    Between `after` (the callee's end, or the previous argument's) and the argument, the
    text holds only commas, parentheses, white space and comments: every `(` there
    groups the argument, but the call's own (before the first argument)."""
    opening: List[int] = []
    i = after
    while i < start:
        char = text[i]
        if char == "#":
            i = _skip_comment(text, i)
            continue
        if char == "(":
            opening.append(i)
        i += 1
    groups = len(opening) - first
    if groups <= 0:  # (a lone generator argument's span takes the call's parentheses)
        return start, end
    closed = 0
    while closed < groups:  # on past the closing parenthesis of each group
        char = text[end]
        if char == "#":
            end = _skip_comment(text, end)
            continue
        closed += char == ")"
        end += 1
    return opening[-groups], end


def _trailing_comma(text: str, end: int) -> Optional[int]:
    """The offset of a comma after the last argument (`f(x=1,)`), when only spaces,
    tabs, form feeds and backslash-continuations stand between them; else None."""
    i = end
    while i < len(text):
        char = text[i]
        if char in " \t\f":
            i += 1
        elif char == "\\" and text.startswith(("\r\n", "\r", "\n"), i + 1):
            i += 3 if text.startswith("\r\n", i + 1) else 2
        else:
            return i if char == "," else None
    return None


def _single_string_literal(text: str) -> bool:
    """True for one string literal; False for implicitly concatenated ones ("a" "b"),
    which Python joins into one constant and libcst keeps apart."""
    i = 0
    while i < len(text) and text[i] not in "'\"":
        i += 1
    quote = text[i:i + 3] if text[i:i + 3] in ("'''", '"""') else text[i:i + 1]
    body_end = len(text) - len(quote)
    if not quote or body_end < i + len(quote) or not text.endswith(quote):
        return False
    j = i + len(quote)
    while j < body_end:
        if text[j] == "\\":
            j += 2  # an escaped character (in a raw string too, it cannot end the string)
            continue
        if text.startswith(quote, j):
            return False
        j += 1
    return j == body_end


def _is_preamble(statement: ast.AST) -> bool:
    if isinstance(statement, ast.Expr):
        return isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str)
    return (isinstance(statement, ast.ImportFrom) and statement.module == "__future__"
            and not statement.level)


def _param_names(args: ast.arguments) -> List[str]:
    names = [a.arg for a in args.posonlyargs] + [a.arg for a in args.args]
    if args.vararg is not None:
        names.append(args.vararg.arg)
    names += [a.arg for a in args.kwonlyargs]
    if args.kwarg is not None:
        names.append(args.kwarg.arg)
    return names


# Functions, not bound methods: a builder holding its own bound methods would be in a
# reference cycle, kept (with its model and all its bookkeeping) until the cycle collector
# runs, which a run pauses.
_B = AstModelBuilder
_HANDLERS = {
    ast.Module: _B._module, ast.Import: _B._import_node, ast.ImportFrom: _B._import_from_node,
    ast.ClassDef: _B._class, ast.FunctionDef: _B._function, ast.AsyncFunctionDef: _B._function,
    ast.Lambda: _B._lambda, ast.ListComp: _B._comprehension, ast.SetComp: _B._comprehension,
    ast.GeneratorExp: _B._comprehension, ast.DictComp: _B._comprehension,
    ast.Return: _B._return, ast.Assign: _B._assign, ast.AnnAssign: _B._ann_assign,
    ast.AugAssign: _B._aug_assign, ast.NamedExpr: _B._named_expr, ast.For: _B._for,
    ast.AsyncFor: _B._for, ast.With: _B._with, ast.AsyncWith: _B._with,
    ast.ExceptHandler: _B._except_handler, ast.Call: _B._call, ast.Attribute: _B._attribute,
    ast.Dict: _B._dict, ast.Name: _leaf, ast.Constant: _leaf,
}


def build_model_from_ast(tree: ast.Module, path: str, module_name: str,
                         rewrites: Sequence[Tuple[str, str]], text: str) -> FileModel:
    """The model of a module from Python's tree of `text`."""
    builder = AstModelBuilder(path, module_name, NameResolver(rewrites), text)
    # The walk takes two or three frames a level; Python builds trees up to about the
    # recursion limit deep (a chain of 900 `+` operands, or of `elif`s): room for those.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 3 * limit + 100))
    try:
        builder.walk(tree)
    finally:
        sys.setrecursionlimit(limit)
    return builder.finish()

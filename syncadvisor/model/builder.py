"""One pass over a libcst tree -> a `FileModel`.

The walk records bindings, candidate calls, enum references and strategy scopes
together with the scope they were written in; `finish` then resolves every name
once, against the complete binding tables, and drops the scopes. Rules never see
the tree.
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional, Sequence, Tuple, Union

import libcst as cst
from libcst._nodes.internal import CodegenState

from ..lines import line_starts, position

from .facts import (
    BOOL, CALL, FLOAT, INT, NONE, OTHER, QNAME, STR, Argument, Bound, FileModel, Span, Value,
)
from .names import NameResolver
from .walk_state import MAX_VALUE_DEPTH, WalkState, literal_int


def dotted_parts(node: cst.BaseExpression) -> Optional[Tuple[str, ...]]:
    """('a', 'b', 'c') for `a.b.c`; None for anything that is not a plain dotted name."""
    parts: List[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        parts.reverse()
        return tuple(parts)
    return None


class _SpanFiller(CodegenState):
    """Positions for the few nodes a model keeps, in one code generation pass.

    libcst's PositionProvider computes and stores a position for every node of the
    tree before a visitor runs: most of the time of a check, and hundreds of MB for
    a 10,000-line file. Here the walk first hands out placeholder spans, then one
    pass of code generation counts characters and fills in only those, with the
    same rule as PositionProvider (a node's syntactic position where libcst records
    one, else the code it generates).
    """

    def __init__(self, module: cst.Module, wanted: Dict[int, Span], starts: List[int]):
        super().__init__(default_indent=module.default_indent,
                         default_newline=module.default_newline)
        self.position = 0
        self._wanted = wanted
        self._starts = starts
        self._open: Dict[int, List[int]] = {}
        self._done: set = set()
        self.offsets: Dict[int, Tuple[int, int]] = {}  # key -> (start, end) in the code

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.position += len(token)

    def add_token(self, value: str) -> None:
        self.position += len(value)

    def pop_trailing_newline(self) -> None:
        pass  # only the end of the file moves

    def before_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self._wanted:
            self._open.setdefault(id(node), []).append(self.position)

    def after_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        if key in self._wanted:
            start = self._open[key].pop()
            if key not in self._done:
                self._fill(key, start, self.position)

    def record_syntactic_position(self, node: cst.CSTNode, *, start_node=None, end_node=None):
        if id(node) not in self._wanted:
            return _NO_RECORD
        return _SyntacticRecord(self, id(node))

    def _fill(self, key: int, start: int, end: int) -> None:
        self.offsets[key] = (start, end)
        line, column = position(self._starts, start)
        end_line, end_column = position(self._starts, end)
        span = self._wanted[key]
        for name, value in (("line", line), ("column", column), ("end_line", end_line),
                            ("end_column", end_column)):
            object.__setattr__(span, name, value)  # a frozen placeholder, filled once
        self._done.add(key)


def align_to_text(generated: str, text: str):
    """Offsets in `generated` -> offsets in `text`, when `generated` is `text` without
    some backslash-newlines (what libcst drops); None when it is not, e.g. when libcst
    moved a statement after `\\`-newline into the block above it."""
    kept: List[int] = []  # for each character of `generated`, its offset in `text`
    j, n = 0, len(text)
    block = 4096
    i = 0
    while i < len(generated):
        chunk = generated[i:i + block]
        if text.startswith(chunk, j):  # the common case: a whole block unchanged
            kept.extend(range(j, j + len(chunk)))
            i += len(chunk)
            j += len(chunk)
            continue
        while j < n and text[j] != generated[i]:
            if text[j] not in "\\\r\n":
                return None  # libcst changed the code, not only dropped a continuation
            j += 1  # a character libcst dropped
        if j >= n:
            return None
        kept.append(j)
        i += 1
        j += 1

    def to_text(offset: int, is_end: bool) -> int:
        if offset >= len(kept):
            return len(text) if not kept else kept[-1] + 1
        if is_end and offset > 0:
            return kept[offset - 1] + 1  # just after the last character of the node
        return kept[offset]
    return to_text


class _SyntacticRecord:
    __slots__ = ("state", "key", "start")

    def __init__(self, state: _SpanFiller, key: int):
        self.state, self.key = state, key

    def __enter__(self) -> None:
        self.start = self.state.position

    def __exit__(self, *exc) -> None:
        self.state._fill(self.key, self.start, self.state.position)


class _NoRecord:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        return None


_NO_RECORD = _NoRecord()


class ModelBuilder(WalkState, cst.CSTVisitor):
    def __init__(self, path: str, module: str, resolver: NameResolver, text: str):
        cst.CSTVisitor.__init__(self)
        WalkState.__init__(self, path, module, resolver)
        self._text = text
        self._starts = line_starts(text)  # libcst reproduces `text`, nearly: see fill_spans
        self._wanted: Dict[int, Span] = {}  # id(node) -> its placeholder span
        self._module_node: Optional[cst.Module] = None
        self._with_scopes: List[Tuple[int, int]] = []  # what each open `with` entered

    # --- small helpers -------------------------------------------------------

    def _span(self, node: cst.CSTNode) -> Span:
        """The node's span: a placeholder until `fill_spans` runs after the walk."""
        span = self._wanted.get(id(node))
        if span is None:
            span = self._wanted[id(node)] = Span(0, 0, 0, 0)
        return span

    def fill_spans(self, module: cst.Module, start: int = 0, end: Optional[int] = None) -> None:
        """Fill the spans of the nodes of `module`, whose code is `text[start:end]`."""
        if not self._wanted:
            return
        end = len(self._text) if end is None else end
        filler = _SpanFiller(module, self._wanted, self._starts)
        filler.position = start
        module._codegen(filler)
        # The pass ends one newline past the code (a trailing newline it does not pop).
        if filler.position != end + len(module.default_newline):
            # libcst did not reproduce the text: it drops a `\\`-newline on a line of its
            # own before a statement, and a CR-only file's last `\r`. Positions counted in
            # its code would be off by those characters, and fixes would land beside
            # their target: map them back onto the text.
            generated, text = module.code, self._text[start:end]
            to_text = align_to_text(generated, text) if generated != text else None
            if to_text is not None:
                for key, (a, b) in filler.offsets.items():
                    filler._fill(key, start + to_text(a - start, False),
                                 start + to_text(b - start, True))

    def _code(self, node: cst.CSTNode) -> str:
        assert self._module_node is not None
        return self._module_node.code_for_node(node)

    def _is_self(self, node: cst.BaseExpression) -> bool:
        fn = self._fn
        return (isinstance(node, cst.Name) and fn.self_name is not None
                and fn.klass is not None and node.value == fn.self_name)

    # --- bindings ------------------------------------------------------------

    def _bind_target(self, target: cst.BaseExpression, value: Optional[cst.BaseExpression]) -> None:
        """Bind an assignment target; `value` is its right-hand side when it gets one value."""
        if isinstance(target, cst.Name):
            parts = dotted_parts(value) if value is not None else None
            if parts is not None and not self._self_head(parts):
                # An alias such as `S = tf.VariableSynchronization`.
                self._bind(target.value, Bound("qname", text=target.value,
                                               span=self._span(value)), alias=parts)
            else:
                self._bind(target.value, self._bound_for(value, target.value))
        elif isinstance(target, (cst.Tuple, cst.List)):
            self._bind_unpacking(target, value)
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value, None)
        elif isinstance(target, cst.Attribute) and self._is_self(target.value):
            klass = self.model.classes.get(self._fn.klass or "")
            if klass is not None:
                bound = self._bound_for(value, "self." + target.attr.value)
                klass.attrs.setdefault(target.attr.value, []).append(bound)

    def _bind_unpacking(self, target, value: Optional[cst.BaseExpression]) -> None:
        """`a, b = x, y` element by element; `a, b = f()` to the items of what f returns."""
        elements = target.elements
        if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(elements) \
                and not any(isinstance(e, cst.StarredElement) for e in value.elements):
            for element, item in zip(elements, value.elements):
                self._bind_target(element.value, item.value)
            return
        if value is None or any(isinstance(e, cst.StarredElement) for e in elements):
            for element in elements:
                self._bind_target(element.value, None)
            return
        source = self._bound_for(value, self._code(value))
        for i, element in enumerate(elements):
            if isinstance(element.value, cst.Name):
                self._bind(element.value.value, Bound("item", text=element.value.value,
                                                      attr=str(i), options=(source,)))
            else:
                self._bind_target(element.value, None)

    def _bind_loop_target(self, target: cst.BaseExpression, iterable: cst.BaseExpression) -> None:
        """`for a in xs`, `for a, b in zip(xs, ys)`, `for i, a in enumerate(xs)`."""
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) \
                and isinstance(target, (cst.Tuple, cst.List)):
            sources = [a.value for a in iterable.args if not a.star]
            if iterable.func.value == "enumerate" and len(target.elements) == 2 and sources:
                sources = [None, sources[0]]  # type: ignore[list-item]
            elif iterable.func.value != "zip":
                sources = []
            if len(sources) == len(target.elements):
                for element, source in zip(target.elements, sources):
                    if isinstance(element.value, cst.Name) and source is not None:
                        self._bind(element.value.value, self._element_of(source))
                    else:
                        self._bind_target(element.value, None)
                return
        if isinstance(target, cst.Name):
            self._bind(target.value, self._element_of(iterable))
        else:
            self._bind_target(target, None)

    def _element_of(self, source: cst.BaseExpression) -> Bound:
        return Bound("element", text=self._code(source), options=(self._ref_bound(source),))

    def _bound_for(self, value: Optional[cst.BaseExpression], text: str) -> Bound:
        """What a name bound to `value` is: a qualified name, a call's result, a
        container of variables, or local."""
        if value is None:
            return Bound("local", text=text)
        span = self._span(value)
        parts = dotted_parts(value)
        if parts is not None and not self._self_head(parts):
            if len(parts) == 1:
                # A plain name: it is bound to whatever that name is bound to.
                bound = Bound("names", text=text, span=span)
                self._pending_names.append((self._ref(parts), bound))
                return bound
            bound = Bound("qname", text=text, span=span)
            self._pending_bounds.append((bound, self._ref(parts)))
            return bound
        if isinstance(value, (cst.Attribute, cst.Subscript)):
            return self._ref_bound(value, text)
        if isinstance(value, cst.Call):
            func = value.func
            creation = self._creation_of_node.get(id(value))
            if isinstance(func, cst.Attribute) and self._is_self(func.value):
                return Bound("method", qname=self._fn.klass, attr=func.attr.value, text=text,
                             span=span, creation=creation)
            func_parts = dotted_parts(func)
            if func_parts is not None:
                first = next((a.value for a in value.args if not a.star and a.keyword is None), None)
                options = (self._ref_bound(first),) if isinstance(
                    first, (cst.Name, cst.Attribute, cst.Lambda)) else ()
                bound = Bound("call", text=text, span=span, creation=creation, options=options)
                self._pending_bounds.append((bound, self._ref(func_parts)))
                return bound
            return Bound("local", text=text, span=span, creation=creation)
        if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
            elements = tuple(self._bound_for(e.value, text) for e in value.elements
                             if not isinstance(e, cst.StarredElement))
            return Bound("container", text=text, span=span, options=elements)
        if isinstance(value, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            return Bound("container", text=text, span=span,
                         options=(self._bound_for(value.elt, text),))
        return Bound("local", text=text, span=span)

    def _ref_bound(self, node: cst.BaseExpression, text: Optional[str] = None) -> Bound:
        """What an expression used as an object refers to: `v`, `self.v`, `obj.v`,
        `xs[i]`, `f()`, a lambda."""
        text = text if text is not None else self._code(node)
        if isinstance(node, cst.Name):
            return self._bound_for(node, text)
        if isinstance(node, cst.Attribute):
            if self._is_self(node.value):
                return Bound("self-attr", qname=self._fn.klass, attr=node.attr.value, text=text,
                             span=self._span(node))
            bound = Bound("attr", text=text, span=self._span(node), attr=node.attr.value,
                          options=(self._ref_bound(node.value),))
            parts = dotted_parts(node)
            if parts is not None and not self._self_head(parts):
                self._pending_bounds.append((bound, self._ref(parts)))  # maybe a module attribute
            return bound
        if isinstance(node, cst.Subscript):
            return Bound("element", text=text, span=self._span(node),
                         options=(self._ref_bound(node.value),))
        if isinstance(node, cst.Lambda):
            return Bound("qname", qname=self._lambda_id(node), text="lambda", span=self._span(node))
        if isinstance(node, cst.Call):
            return self._bound_for(node, text)
        return Bound("local", text=text, span=self._span(node))

    # --- values --------------------------------------------------------------

    def _value(self, node: cst.BaseExpression, depth: int = 0) -> Value:
        span = self._span(node)
        if isinstance(node, cst.Name) and node.value in ("None", "True", "False"):
            if node.value == "None":
                return Value(NONE, "None", span)
            return Value(BOOL, node.value, span, literal=node.value == "True")
        parts = dotted_parts(node)
        if parts is not None:
            value = Value(QNAME, ".".join(parts), span)
            if len(parts) > 1:
                value.prefix_text = ".".join(parts[:-1])
            self._pending_values.append((value, self._ref(parts)))
            return value
        if isinstance(node, cst.SimpleString):
            try:
                literal = node.evaluated_value
            except Exception:  # noqa: BLE001 - odd prefixes stay opaque
                literal = None
            if isinstance(literal, str):
                return Value(STR, node.value, span, literal=literal)
        elif isinstance(node, cst.Integer):
            return Value(INT, node.value, span, literal=literal_int(node.value))
        elif isinstance(node, cst.Float):
            return Value(FLOAT, node.value, span)
        elif (isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus)
              and isinstance(node.expression, (cst.Integer, cst.Float))):
            inner = self._value(node.expression, depth)
            inner.span, inner.text = span, self._code(node)
            if isinstance(inner.literal, int):
                inner.literal = -inner.literal
            return inner
        elif isinstance(node, cst.Call) and depth < MAX_VALUE_DEPTH:
            value = Value(CALL, self._code(node), span)
            func_parts = dotted_parts(node.func)
            if func_parts is not None:
                self._pending_values.append((value, self._ref(func_parts)))
            positional, keywords = [], []
            for arg in node.args:
                if arg.star:
                    continue
                if arg.keyword is None:
                    positional.append(self._value(arg.value, depth + 1))
                else:
                    keywords.append((arg.keyword.value, self._value(arg.value, depth + 1)))
            value.args, value.kwargs = tuple(positional), tuple(keywords)
            return value
        return Value(OTHER, self._code(node), span)

    # --- module and imports --------------------------------------------------

    def visit_Module(self, node: cst.Module) -> None:
        self._module_node = node  # the piece being walked, for `_code`

    def begin(self, modules: Sequence[cst.Module]) -> None:
        """Before the walk: where an import may go, over the whole file's statements."""
        self.model.newline = modules[0].default_newline
        self._import_after: Optional[Span] = None  # the preamble's last statement
        self._import_before: Optional[Span] = None  # the first other statement
        for statement in (s for module in modules for s in module.body):
            if not _is_preamble(statement):
                self._import_before = self._span(statement)
                break
            self._import_after = self._span(statement)

    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            asname = alias.asname.name.value if alias.asname is not None and isinstance(
                alias.asname.name, cst.Name) else None
            self._import(".".join(dotted_parts(alias.name) or ()), asname)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        module = ".".join(dotted_parts(node.module) or ()) if node.module is not None else ""
        names = None if isinstance(node.names, cst.ImportStar) else [
            (".".join(dotted_parts(alias.name) or ()),
             alias.asname.name.value if alias.asname is not None and isinstance(
                 alias.asname.name, cst.Name) else None)
            for alias in node.names]
        self._import_from(module, len(node.relative), names)
        return False

    # --- classes, functions, lambdas, comprehensions ---------------------------

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        bases = [parts for parts in (dotted_parts(b.value) for b in node.bases
                                     if b.keyword is None) if parts]
        self._enter_class(node.name.value, self._span(node.name), bases)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._leave_class()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._enter_function(node.name.value, self._span(node.name), _param_names(node.params),
                             _is_static(node))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._leave_function()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._enter_lambda(node, self._span(node), _param_names(node.params))

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self._leave_lambda()

    def _enter_comprehension(self, node: cst.CSTNode) -> None:
        self._enter_comprehension_scope()

    def _leave_comprehension(self, original_node: cst.CSTNode) -> None:
        self._pop_scope()

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _enter_comprehension
    leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _leave_comprehension

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind_loop_target(node.target, node.iter)

    def leave_Return(self, original_node: cst.Return) -> None:
        info = self._fn.info
        if info is not None and original_node.value is not None:
            info.returns.append(self._bound_for(original_node.value, "return value"))

    # --- other bindings ---------------------------------------------------------

    def leave_Assign(self, original_node: cst.Assign) -> None:
        for target in original_node.targets:
            self._bind_target(target.target, original_node.value)
        value = original_node.value
        target = self._code(original_node.targets[0].target)
        if isinstance(value, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            elements, target = [value.elt], target + "[...]"
        elif isinstance(value, (cst.List, cst.Tuple)):
            elements, target = [e.value for e in value.elements], target + "[...]"
        else:
            elements = [value]
        self._name_creation_targets(elements, target)

    def leave_AnnAssign(self, original_node: cst.AnnAssign) -> None:
        self._bind_target(original_node.target, original_node.value)

    def leave_AugAssign(self, original_node: cst.AugAssign) -> None:
        if isinstance(original_node.target, cst.Name):
            self._bind_local(original_node.target.value)

    def leave_NamedExpr(self, original_node: cst.NamedExpr) -> None:
        self._bind_target(original_node.target, original_node.value)

    def visit_For(self, node: cst.For) -> None:
        self._bind_loop_target(node.target, node.iter)

    def visit_AsName(self, node: cst.AsName) -> None:
        # `with ... as x` and `except ... as x`; import aliases never get here.
        self._bind_target(node.name, None)

    # --- strategy scopes ----------------------------------------------------------

    def visit_With(self, node: cst.With) -> None:
        self._with_scopes.append(self._open_scopes([item.item for item in node.items]))

    def leave_With(self, original_node: cst.With) -> None:
        self._close_scopes(*self._with_scopes.pop())

    # --- calls and attributes -------------------------------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        self._record_call(node)

    def _arguments(self, node: cst.Call) -> Tuple[Argument, ...]:
        arguments = []
        for arg in node.args:
            comma = arg.comma
            trailing = None
            if arg is node.args[-1] and isinstance(comma, cst.Comma) and \
                    isinstance(comma.whitespace_before, cst.SimpleWhitespace):
                trailing = (self._span(comma), len(comma.whitespace_before.value))
            arguments.append(Argument(arg.keyword.value if arg.keyword else None,
                                      self._value(arg.value), self._span(arg),
                                      arg.star if isinstance(arg.star, str) else "", trailing))
        return tuple(arguments)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._record_attribute(node, node.value, node.attr.value)

    # --- what the shared recording needs to know of libcst's nodes --------------------

    def _dotted(self, node: cst.BaseExpression) -> Optional[Tuple[str, ...]]:
        return dotted_parts(node)

    def _attribute_of(self, node) -> Optional[Tuple[cst.BaseExpression, str]]:
        return (node.value, node.attr.value) if isinstance(node, cst.Attribute) else None

    def _name_of(self, node) -> Optional[str]:
        return node.value if isinstance(node, cst.Name) else None

    def _func_of(self, node) -> Optional[cst.BaseExpression]:
        return node.func if isinstance(node, cst.Call) else None

    def _call_arguments(self, call: cst.Call):
        args = [a for a in call.args if not a.star]
        return ([a.value for a in args if a.keyword is None],
                [(a.keyword.value, a.value) for a in args if a.keyword is not None])

    def _has_arguments(self, call: cst.Call) -> bool:
        return bool(call.args)

    def _is_lambda(self, node) -> bool:
        return isinstance(node, cst.Lambda)

    def _member_span(self, node: cst.Attribute) -> Span:
        return self._span(node.attr)


def _is_preamble(statement: cst.CSTNode) -> bool:
    """A module docstring or a `from __future__ import`: imports go after these."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString,
                                                                 cst.ConcatenatedString)):
        return True
    return (isinstance(small, cst.ImportFrom) and isinstance(small.module, cst.Name)
            and small.module.value == "__future__")


def _param_names(params: cst.Parameters) -> List[str]:
    names = [p.name.value for p in params.posonly_params]
    names += [p.name.value for p in params.params]
    if isinstance(params.star_arg, cst.Param):
        names.append(params.star_arg.name.value)
    names += [p.name.value for p in params.kwonly_params]
    if params.star_kwarg is not None:
        names.append(params.star_kwarg.name.value)
    return names


def _is_static(node: cst.FunctionDef) -> bool:
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
               for d in node.decorators)


# --- the walk ----------------------------------------------------------------------

# Fields that never hold code worth visiting.
_NOT_CODE = frozenset({
    "lpar", "rpar", "lbracket", "rbracket", "lbrace", "rbrace", "leading_lines",
    "lines_after_decorators", "trailing_whitespace", "comma", "equal", "dot", "colon",
    "semicolon", "header", "footer", "indent", "encoding", "default_indent", "default_newline",
    "has_trailing_newline", "asynchronous", "star", "operator", "start", "end", "whitespace",
    "type_parameters", "posonly_ind", "first_line", "empty_lines", "newline", "value_quote",
})
# Where libcst's field order is not the order of the source.
_SOURCE_ORDER = {
    "FunctionDef": ("decorators", "name", "params", "returns", "body"),
    "ClassDef": ("decorators", "name", "bases", "keywords", "body"),
    "ExceptHandler": ("type", "name", "body"),
    "IfExp": ("body", "test", "orelse"),
    "Arg": ("keyword", "value"),
}
_FIELDS: Dict[type, Tuple[str, ...]] = {}


def _fields_of(cls: type) -> Tuple[str, ...]:
    fields = _FIELDS.get(cls)
    if fields is None:
        order = _SOURCE_ORDER.get(cls.__name__)
        if order is None:
            order = tuple(f.name for f in dataclasses.fields(cls))
        fields = _FIELDS[cls] = tuple(
            name for name in order
            if name not in _NOT_CODE and not name.startswith("whitespace"))
    return fields


def walk(node: cst.CSTNode, builder: "ModelBuilder") -> None:
    """Visit a tree as libcst's visitor does (visit_X, children in source order, leave_X),
    without rebuilding every node on the way back as `CSTNode.visit` does."""
    name = type(node).__name__
    visit = getattr(builder, "visit_" + name, None)
    if visit is None or visit(node) is not False:
        for field in _fields_of(type(node)):
            child = getattr(node, field)
            if isinstance(child, cst.CSTNode):
                walk(child, builder)
            elif isinstance(child, (list, tuple)):
                for item in child:
                    if isinstance(item, cst.CSTNode):
                        walk(item, builder)
    leave = getattr(builder, "leave_" + name, None)
    if leave is not None:
        leave(node)


def build_model(module: Union[cst.Module, Sequence[Tuple[cst.Module, int]]], path: str,
                module_name: str, rewrites: Sequence[Tuple[str, str]],
                text: Optional[str] = None) -> FileModel:
    """The model of a parsed module, or of a file parsed in pieces (`parsing.parse_chunks`:
    each piece with the offset of its code in `text`); `text` is the file's source, when
    the caller has it."""
    pieces = [(module, 0)] if isinstance(module, cst.Module) else list(module)
    if text is None:
        text = "".join(piece.code for piece, _ in pieces)
    builder = ModelBuilder(path, module_name, NameResolver(rewrites), text)
    builder.begin([piece for piece, _ in pieces])
    for piece, _ in pieces:
        walk(piece, builder)
    ends = [offset for _, offset in pieces[1:]] + [len(text)]
    for (piece, offset), end in zip(pieces, ends):
        builder.fill_spans(piece, offset, end)
    return builder.finish()

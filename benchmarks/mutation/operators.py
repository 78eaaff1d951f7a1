"""The mutants of one module: small changes to its functions' code, one at a time.

Each mutant is one change a defence could suffer by mistake: a comparison turned round, ``and`` for
``or``, a ``not`` dropped, a number moved by one, a guard's ``if`` made false, a filter of a
comprehension dropped, a value returned as ``None``, a call or a ``raise`` deleted, ``min`` for
``max``. A ``/`` is left alone (in this code it joins paths, where any change fails at once). Only
function bodies are mutated (module and class constants are data, not defences), and
strings are left alone (messages, mostly). A mutant is named by its enclosing top-level function or
method (the code object a run swaps) and its line.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass

_COMPARE_SWAP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_BINOP_SWAP: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.FloorDiv: ast.Mult}
_NAME_SWAP = {"min": "max", "max": "min", "any": "all", "all": "any"}
_SYMBOL = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
           ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not", ast.Add: "+", ast.Sub: "-",
           ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//"}

#: a node's place in the source: its type and span (unique among the nodes a mutant changes)
Key = tuple[str, int, int, int, int]


@dataclass(frozen=True)
class Mutant:
    """One change to one module.

    Attributes
    ----------
    function:
        Qualified name of the top-level function or method whose code the change lands in.
    line:
        Line of the changed node.
    description:
        What changed, in a few words (``"< -> <="``, ``"if -> if False"``).
    key:
        The changed node's type and span.
    variant:
        Which of the node's changes (a chained comparison has one per operator).
    """

    function: str
    line: int
    description: str
    key: Key
    variant: int


def _key(node: ast.AST) -> Key:
    return (type(node).__name__, node.lineno, node.col_offset,  # type: ignore[attr-defined]
            node.end_lineno or 0, node.end_col_offset or 0)  # type: ignore[attr-defined]


def _changes(node: ast.AST) -> Iterator[tuple[str, Callable[[ast.AST], ast.AST]]]:
    """Every change of one node: its description and a function making the changed node from a copy."""
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            new = _COMPARE_SWAP[type(op)]

            def swap(n: ast.AST, i: int = i, new: type[ast.cmpop] = new) -> ast.AST:
                n.ops[i] = new()  # type: ignore[attr-defined]
                return n
            yield f"{_SYMBOL[type(op)]} -> {_SYMBOL[new]}", swap
    elif isinstance(node, ast.BoolOp):
        other = ast.Or if isinstance(node.op, ast.And) else ast.And
        yield ("and -> or" if other is ast.Or else "or -> and"), lambda n: ast.BoolOp(op=other(), values=n.values)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "not dropped", lambda n: n.operand  # type: ignore[attr-defined]
    elif isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in _BINOP_SWAP:
        new_op = _BINOP_SWAP[type(node.op)]

        def binop(n: ast.AST, new_op: type[ast.operator] = new_op) -> ast.AST:
            n.op = new_op()  # type: ignore[attr-defined]
            return n
        yield f"{_SYMBOL[type(node.op)]} -> {_SYMBOL[new_op]}", binop
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield f"{node.value} -> {not node.value}", lambda n: ast.Constant(value=not n.value)  # type: ignore[attr-defined]
    elif isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        yield f"{node.value!r} -> {node.value + 1!r}", lambda n: ast.Constant(value=n.value + 1)  # type: ignore[attr-defined]
    elif isinstance(node, ast.If):
        yield "if -> if False", lambda n: ast.If(test=ast.Constant(value=False), body=n.body, orelse=n.orelse)  # type: ignore[attr-defined]
    elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)) and any(
            g.ifs for g in node.generators):
        def unfiltered(n: ast.AST) -> ast.AST:
            for g in n.generators:  # type: ignore[attr-defined]
                g.ifs = []
            return n
        yield "comprehension filter dropped", unfiltered
    elif isinstance(node, ast.Return) and node.value is not None and not (
            isinstance(node.value, ast.Constant) and node.value.value is None):
        yield "return value -> None", lambda n: ast.Return(value=ast.Constant(value=None))
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        yield "call deleted", lambda n: ast.Pass()
    elif isinstance(node, ast.Raise):
        yield "raise deleted", lambda n: ast.Pass()
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _NAME_SWAP:
        name = _NAME_SWAP[node.func.id]

        def rename(n: ast.AST, name: str = name) -> ast.AST:
            n.func = ast.Name(id=name, ctx=ast.Load())  # type: ignore[attr-defined]
            return n
        yield f"{node.func.id} -> {name}", rename


def _candidates(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """The nodes of a function body a mutant may change (no docstring, no annotations)."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue
        yield node
        for field, value in reversed(list(ast.iter_fields(node))):
            if field in ("annotation", "returns", "decorator_list", "type_comment"):
                continue
            if field == "args" and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            children = value if isinstance(value, list) else [value]
            stack.extend(c for c in reversed(children) if isinstance(c, ast.AST))


def _functions(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every top-level function and method (of classes at any depth), with its qualified name."""
    def walk(body: list[ast.stmt], prefix: str) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield prefix + stmt.name, stmt
            elif isinstance(stmt, ast.ClassDef):
                yield from walk(stmt.body, prefix + stmt.name + ".")
    yield from walk(tree.body, "")


def mutants(source: str) -> list[Mutant]:
    """Every mutant of a module's source, in source order.

    Parameters
    ----------
    source:
        The module's text.

    Returns
    -------
    list[Mutant]
        One per change of each mutable node of each function body.
    """
    tree = ast.parse(source)
    found: list[Mutant] = []
    for qualname, fn in _functions(tree):
        for node in _candidates(fn.body):
            if not hasattr(node, "lineno"):
                continue
            for variant, (description, _) in enumerate(_changes(node)):
                found.append(Mutant(qualname, node.lineno, description, _key(node), variant))  # type: ignore[attr-defined]
    return sorted(found, key=lambda m: (m.line, m.key, m.variant))


class _Apply(ast.NodeTransformer):
    def __init__(self, mutant: Mutant) -> None:
        self.mutant = mutant
        self.done = False

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if not self.done and hasattr(node, "lineno") and _key(node) == self.mutant.key:
            self.done = True
            change = list(_changes(node))[self.mutant.variant][1]
            return ast.copy_location(change(node), node)
        return super().generic_visit(node)


def mutated_tree(source: str, mutant: Mutant) -> ast.Module:
    """The module's syntax tree with one mutant applied.

    Parameters
    ----------
    source:
        The module's text.
    mutant:
        One of :func:`mutants` of that text.

    Returns
    -------
    ast.Module
        The changed tree, locations fixed, ready for :func:`compile`.
    """
    tree = copy.deepcopy(ast.parse(source))
    applier = _Apply(mutant)
    tree = applier.visit(tree)
    if not applier.done:
        raise LookupError(f"mutant {mutant} not found in the source")
    return ast.fix_missing_locations(tree)

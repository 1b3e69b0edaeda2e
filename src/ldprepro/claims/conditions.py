"""A claim's condition on its scope points, declared as arithmetic: ``where: "k > 3*exp(eps) + 2"``.

Wang et al. (USENIX Security 2017, §4.4) state where OLH beats GRR as a condition on both the domain
size and ε; a scope of ε alone cannot say it. ``where`` keeps the points at which the condition
holds, evaluated on the point's own values: ``eps`` (ε), ``k`` (the domain size of a frequency
point) and ``n`` (its number of users), with numbers, ``+ - * / **``, ``exp``, ``log``, ``sqrt``,
comparisons (chained too: ``1 < eps <= 4``) and ``and`` / ``or`` / ``not``.

The text is data, never code: it is parsed into Python's syntax tree and only the nodes above are
evaluated (anything else, an attribute, a call of another name, a subscript, is refused when the
workflow loads, naming the declaration). Light: imported at workflow parse time.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable

#: the names a condition may use, and what they are at a point
VARIABLES = {"eps": "the point's ε", "k": "its domain size (frequency kinds)", "n": "its number of users"}
FUNCTIONS = {"exp": math.exp, "log": math.log, "sqrt": math.sqrt}
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_BINARY[ast.Pow] = operator.pow
_COMPARE = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}
_COMPARE.update({ast.Eq: operator.eq, ast.NotEq: operator.ne})


class ConditionError(ValueError):
    """A condition that cannot be read; the message says which part."""


def _check(node: ast.AST, text: str) -> None:
    ok = (
        ast.Expression,
        ast.BoolOp,
        ast.And,
        ast.Or,
        ast.UnaryOp,
        ast.Not,
        ast.USub,
        ast.UAdd,
        ast.BinOp,
        ast.Compare,
        ast.Call,
        ast.Name,
        ast.Load,
        ast.Constant,
        *_BINARY,
        *_COMPARE,
    )
    for sub in ast.walk(node):
        if not isinstance(sub, ok):
            raise ConditionError(
                f"condition {text!r}: {type(sub).__name__} is not allowed (arithmetic and comparisons)"
            )
        if isinstance(sub, ast.Constant) and not isinstance(sub.value, int | float):
            raise ConditionError(f"condition {text!r}: only numbers are allowed as constants, not {sub.value!r}")
        if isinstance(sub, ast.Call) and (
            not isinstance(sub.func, ast.Name) or sub.func.id not in FUNCTIONS or sub.keywords or len(sub.args) != 1
        ):
            raise ConditionError(f"condition {text!r}: a call is one of {', '.join(FUNCTIONS)} of one argument")
        if isinstance(sub, ast.Name) and sub.id not in VARIABLES and sub.id not in FUNCTIONS:
            raise ConditionError(f"condition {text!r}: unknown name {sub.id!r}; use {', '.join(VARIABLES)}")


def parse(text: str) -> Callable[[dict], bool]:
    """The condition as a function of a point's values ``{"eps": ..., "k": ..., "n": ...}``; a
    ConditionError for text that is not such a condition, or (when called) names a value the
    point does not have."""
    if not isinstance(text, str) or not text.strip():
        raise ConditionError(f"condition {text!r}: write it as text, e.g. 'k > 3*exp(eps) + 2'")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ConditionError(f"condition {text!r}: not an arithmetic condition ({exc.msg})") from None
    _check(tree, text)

    def value(node: ast.AST, point: dict):
        if isinstance(node, ast.Expression):
            return value(node.body, point)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in point or point[node.id] is None:
                raise ConditionError(
                    f"condition {text!r}: the point has no {node.id} ({VARIABLES.get(node.id, 'a value')})"
                )
            return point[node.id]
        if isinstance(node, ast.Call):
            return FUNCTIONS[node.func.id](value(node.args[0], point))
        if isinstance(node, ast.UnaryOp):
            v = value(node.operand, point)
            return (not v) if isinstance(node.op, ast.Not) else (-v if isinstance(node.op, ast.USub) else v)
        if isinstance(node, ast.BinOp):
            return _BINARY[type(node.op)](value(node.left, point), value(node.right, point))
        if isinstance(node, ast.BoolOp):
            parts = (bool(value(v, point)) for v in node.values)
            return all(parts) if isinstance(node.op, ast.And) else any(parts)
        left = value(node.left, point)  # ast.Compare, chained
        for op, right_node in zip(node.ops, node.comparators):
            right = value(right_node, point)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True

    def holds(point: dict) -> bool:
        return bool(value(tree, point))

    return holds


def names(text: str) -> set[str]:
    """The point values a (valid) condition reads."""
    return {n.id for n in ast.walk(ast.parse(text.strip(), mode="eval")) if isinstance(n, ast.Name)} - set(FUNCTIONS)

"""The class body being executed, so that ``key("x")`` inside it can find its namespace."""

from __future__ import annotations

import threading
import typing as _t

_local = threading.local()


def push(ns: _t.Dict[str, _t.Any]) -> None:
    """Enters a class body."""
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    stack.append(ns)


def pop() -> None:
    """Leaves a class body."""
    stack = getattr(_local, "stack", [])
    if stack:
        stack.pop()


def current_scope() -> _t.Optional[_t.Dict[str, _t.Any]]:
    """The namespace of the innermost IDL class body being executed."""
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else None

"""Tiny stub: class decorators are identities; member annotations check that the member they
name was declared just before in the class body."""
import sys


def _member(name):
    scope = sys._getframe(2).f_locals
    if name not in scope.get("__annotations__", {}):
        raise TypeError(f"annotation names undeclared member {name}")


def key(m): _member(m)
def member_id(m, v): _member(m)
def member_name(m, n): _member(m)
def external(m): _member(m)
def must_understand(m): _member(m)
def default(m, v): _member(m)
def position(m, p): _member(m)


def final(c): return c
def appendable(c): return c
def mutable(c): return c
def nested(c): return c
def autoid(kind): return lambda c: c
def bit_bound(n): return lambda c: c

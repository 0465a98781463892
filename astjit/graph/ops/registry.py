"""The op registry: one small entry per numpy-level operation.

An Op names its *reference implementation* (the exact Python/numpy callable the user's code would have
run, so the numpy backend and constant folding reproduce numpy by construction), its *kind* (which
drives inference, partitioning and lowering) and a Python signature used to bind operands by name.
Backends look ops up by name; the frontend looks them up by the object a call resolves to.
"""

import inspect
from collections.abc import Callable
from dataclasses import dataclass

KINDS = ("elementwise", "reduction", "view", "creation", "static", "effect", "python", "linalg")


@dataclass
class Op:
    name: str
    impl: Callable
    kind: str
    signature: inspect.Signature | None = None
    ufunc: object = None            # the numpy ufunc computing it elementwise, if any
    array_params: tuple = ()        # parameters that may carry arrays; every other one must be static
    infer: Callable | None = None   # infer(ctx, node, params) -> Type; None: the kind's default rule
    fold: bool = True               # may run at specialization time when every operand is static


OPS: dict[str, Op] = {}
NUMPY_CALLABLES: dict[int, tuple[object, str]] = {}   # id(numpy object) -> (object, op name)
BUILTIN_CALLABLES: dict[int, tuple[object, str]] = {}
METHODS: dict[str, str] = {}                           # ndarray method name -> op name
ATTRIBUTES: dict[str, str] = {}                        # ndarray attribute name -> op name


def signature_of(fn) -> inspect.Signature:
    return inspect.signature(fn)


def register(name, impl, kind, *, signature=None, ufunc=None, array_params=(), infer=None,
             numpy=(), builtins=(), method=None, attribute=None, fold=True) -> Op:
    assert kind in KINDS, kind
    if signature is not None and not isinstance(signature, inspect.Signature):
        signature = signature_of(signature)
    op = Op(name, impl, kind, signature, ufunc, tuple(array_params), infer, fold)
    OPS[name] = op
    for obj in numpy:
        NUMPY_CALLABLES[id(obj)] = (obj, name)
    for obj in builtins:
        BUILTIN_CALLABLES[id(obj)] = (obj, name)
    if method:
        METHODS[method] = name
    if attribute:
        ATTRIBUTES[attribute] = name
    return op


def updates_in_place(graph) -> bool:
    """Whether ``graph`` holds an op that updates an array in place (``a[i] = v``, ``a += b``)."""
    return any(OPS[n.op].kind == "effect" for n in graph.nodes if n.op in OPS)


def lookup_callable(obj):
    """The op name of a resolved callable (numpy function or supported builtin), or None."""
    hit = NUMPY_CALLABLES.get(id(obj)) or BUILTIN_CALLABLES.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    return None

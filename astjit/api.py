"""The public entry points: ``jit`` and ``explain``."""

import functools
import threading
import time
import types
import weakref

from . import config
from .errors import AstjitError, SourceUnavailableError, StrictModeError, render_location, strict_error
from .frontend.resolve import GUARD_ERRORS
from .runtime import fpstate, watchers
from .runtime.records import Record

_slow_path = threading.local()        # .active: the jitted function whose slow path this thread is in


KEPT_VERSIONS = 8       # earlier transforms a jitted function keeps to install again (_reinstall)
# A function jitted anew at each call (``@jit`` on a def inside the function called, ``jit(lambda y: ...)(x)``)
# was transformed at each call: 3-7 ms for a call of 1 us. After this many jitted functions of one code
# object were transformed, called once, quickly (SHORT_CALL_SECONDS, compiling its blocks or loading
# them from the disk cache included), and dropped, a new one of it runs as Python from the start. One
# called again, or whose call took longer (a closure smoothing a million elements once: 26 ms, where
# Python takes 150 ms), does not count.
SHORT_LIVED_AT_MOST = 8
SHORT_CALL_SECONDS = 5e-3
_short_lived: dict = {}     # code object -> how many transformed jitted functions of it lived so
SHORT_LIVED_NOTE = ("jitted anew {count} times and dropped each time after one short call (@jit on a def or lambda "
                    "inside a function that is called again and again): every new jit of it would be transformed "
                    "again, which costs milliseconds; it runs as Python. Apply jit once, outside the function that "
                    "is called")


def _gone(code, life) -> None:
    """A transformed jitted function of ``code`` is gone; ``life``: [its calls through the slow path and
    its second call, the seconds its first call ran after the transform]."""
    calls, seconds = life
    if calls > 1 or seconds >= SHORT_CALL_SECONDS:
        return
    if len(_short_lived) > 4096:         # (code objects made by exec, one each)
        _short_lived.clear()
    _short_lived[code] = _short_lived.get(code, 0) + 1


class JitFunction:
    """A jitted function: call it like the original; inspect it with ``show()``, ``fragments``,
    ``cache_info()`` and ``explain()``.

    It pickles without its compiled code: by reference (module and qualified name) where that name
    resolves to it, else, under cloudpickle, as the original function with ``strict`` and ``backend``,
    jitted again where it is unpickled (see Scale-out)."""

    # under strict, whether statements may still run as Python (astjit.grad's generated function: its tape
    # and helper calls do by design, and strict checks the user's own function instead)
    statements_may_run_as_python = False

    def __init__(self, fn, strict=False, backend=None, rewrites=(), fastmath=False, device=None):
        self.original = fn
        self.strict = strict
        self.backend = backend
        if not (type(rewrites) is tuple and not rewrites):      # (the default, (), needs no check)
            from . import rewrite

            rewrites = rewrite.check_rewrites(rewrites)
        self.rewrites = rewrites
        self.fastmath = bool(fastmath)
        self.device = device
        self._transformed = None
        self._versions: list = []         # the latest transforms, each as installed (_reinstall)
        self._transforms = 0
        self._disabled = False
        self._noted_error_state = False
        self._parsed = None
        self._records: list[Record] = []
        functools.update_wrapper(self, fn)
        self._life = [0, 0.0]            # (_gone)
        gone = _short_lived.get(getattr(fn, "__code__", None), 0)
        if gone >= SHORT_LIVED_AT_MOST and not strict:
            self._note_function(SHORT_LIVED_NOTE.format(count=gone))
            self._disabled = True
            self._short_lived = True     # (its source is parsed only if inspected)
            return
        watchers.watch(self)
        from .frontend.source import parse_function

        try:
            self._parsed = parse_function(fn)
        except Exception as exc:  # no source, or one Python's own parser cannot take (too deeply nested)
            if not isinstance(fn, types.FunctionType):   # jit(42) is a mistake, not a fallback
                raise
            reason = exc if isinstance(exc, AstjitError) else SourceUnavailableError(
                f"cannot parse it ({type(exc).__name__})")
            if strict:
                raise strict_error(reason, fn) from None
            self._note_function(f"{reason}: the function runs as Python")
            self._disabled = True

    # -- calling ----------------------------------------------------------------------------------
    def __call__(self, /, *args, **kwargs):    # (self positional-only: f(a, self=1) reaches **kwargs)
        if self._guard():
            return self._function(*args, **kwargs)
        return self._slow_call(args, kwargs)

    @staticmethod
    def _guard():
        return False

    def _slow_call(self, args, kwargs):
        """First call, numpy's error state asks for errors (np.errstate(all="raise")), or a resolved global
        was rebound since: run the original, or transform (again) and call."""
        allowed = self._disabled or fpstate.kernels_allowed()
        if self._disabled or not allowed or getattr(_slow_path, "active", None) is self:
            # (the last: called back from a guard that failed although the slow path found it holds)
            if not self._disabled and not self._noted_error_state and not allowed:
                self._noted_error_state = True
                self._note_function(fpstate.RUNS_AS_PYTHON)
            return self.original(*args, **kwargs)
        if (not (self._transformed is not None and self._names_hold()) and not self._reinstall()
                and self._prepare() is None):
            return self.original(*args, **kwargs)
        outer, _slow_path.active = getattr(_slow_path, "active", None), self
        life = self._life
        life[0] += 1
        started = time.perf_counter()
        try:
            return self._function(*args, **kwargs)
        finally:
            _slow_path.active = outer
            if life[0] == 1:       # (its blocks' compiles, or loads from the disk cache, included)
                life[1] = time.perf_counter() - started

    def _reinstall(self) -> bool:
        """Install an earlier transform whose resolved names hold again (a global function that
        alternates, ``FN = np.sin`` then ``np.cos``), with its compiled Fragments: transforming
        anew at each change cost 10-20 ms a call. Returns whether one did."""
        for version in reversed(self._versions):
            if version["_names_hold"]():
                # (_transformed last: another thread reads the rest once it sees it)
                self.__dict__.update((k, v) for k, v in version.items() if k != "__class__")
                self.__class__ = version["__class__"]
                return True
        return False

    def _configuration_changed(self) -> None:
        """The registered rewrite rules or backends changed: transform again at the next call, so that
        every block specializes with the rules and backends now active."""
        self._versions.clear()
        if self._transformed is None:
            return
        self._transformed = None
        self.__dict__.pop("_guard", None)
        self.__class__ = JitFunction

    def _missing_arguments(self, kwargs, args=()):
        """A guarded function (frontend/guard_prologue) was called without one of its arguments: Python's
        own TypeError from the original, or, where the original was given defaults since, a new
        transform that takes them. ``args``: the positional ones, where ``*args`` took some."""
        from .frontend.guard_prologue import given_arguments

        kwargs = given_arguments(kwargs)
        if self._names_hold():
            return self.original(*args, **kwargs)
        return self._slow_call(args, kwargs)

    def _install_guarded_call(self, function) -> None:
        """The rewritten function, which checks its own guard, as this object's ``__call__``: a call costs
        one Python frame (frontend/guard_prologue)."""
        self.__class__ = type(type(self).__name__, (JitFunction,), {"__call__": staticmethod(function),
                                                                    "__module__": JitFunction.__module__,
                                                                    "__qualname__": JitFunction.__qualname__})

    def _install_call(self, resolver, function) -> None:
        """Give this object a generated ``__call__`` with the original's parameters and the guard
        inline: a call costs about a third of the generic ``*args, **kwargs`` path (which stays for
        signatures with ``*args``, ``**kwargs``, keyword-only or positional-only parameters). A
        parameter with a default takes the default object on the guarded path (the guard holds the
        ``__defaults__`` tuple the call read): with the generic path, ``def f(x, y=2.0)`` cost
        0.25-0.45 us a call more than ``def f(x, y)``."""
        from .frontend.guard_prologue import (
            MISSING,
            given_arguments,
            positional_defaults,
            positional_signature,
        )

        code = self.original.__code__
        params = code.co_varnames[:code.co_argcount]
        if not positional_signature(self.original):  # (set since the last transform: back to the generic call)
            self.__class__ = JitFunction
            return
        defaults = positional_defaults(self.original, params)
        required = params[:len(params) - len(defaults)]
        body, namespace = resolver.guard_expression(
            (self.original.__defaults__, self.original.__kwdefaults__),
            quiet_floating_point=(fpstate.current_state, fpstate.last_quiet))
        namespace["__astjit_function"] = function
        # each parameter defaults to a marker: a default set on the original later (which the guard
        # sees) takes the generic path, by keywords, with only the arguments given
        namespace["__astjit_missing"] = MISSING
        names = ", ".join(params)
        signature = "".join(f", {p}=__astjit_missing" for p in params)
        given = "".join(f" and {p} is not __astjit_missing" for p in required)
        keywords = "{" + ", ".join(f"{p!r}: {p}" for p in params) + "}"
        namespace["__astjit_given"] = given_arguments
        filled = ""
        for k, p in enumerate(params[len(required):]):
            namespace[f"__astjit_default{k}"] = defaults[k]
            filled += f"        if {p} is __astjit_missing:\n            {p} = __astjit_default{k}\n"
        # too many arguments: the original's own TypeError ("takes from 1 to 2 positional arguments")
        packed = f"({names}{',' if params else ''})"
        src = (f"def __call__(__astjit_self{signature}, *__astjit_extra):\n"
               f"    if __astjit_extra:\n        return __astjit_self.original(*{packed}, *__astjit_extra)\n"
               f"    try:\n        __astjit_ok = {body}{given}\n"
               f"    except {GUARD_ERRORS}:\n        __astjit_ok = False\n"
               f"    if __astjit_ok:\n{filled}        return __astjit_function({names})\n"
               f"    return __astjit_self._slow_call((), __astjit_given({keywords}))\n")
        # compiled in the user's module: the guard reads its globals as the function does
        call = resolver.function_in_module(src, "__call__", namespace)
        call.__name__, call.__qualname__ = self.original.__name__, self.original.__qualname__  # its errors
        # its first parameter under a name no keyword can match: f(a, __astjit_self=1) gets Python's
        # "unexpected keyword argument", not "multiple values for argument"
        call.__code__ = call.__code__.replace(co_varnames=("__astjit self",) + call.__code__.co_varnames[1:])
        # a class of its own per jitted function: Python looks special methods up on the type
        self.__class__ = type(type(self).__name__, (JitFunction,), {"__call__": call,
                                                                    "__module__": JitFunction.__module__,
                                                                    "__qualname__": JitFunction.__qualname__})

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return types.MethodType(self, obj)

    def __reduce__(self):
        """Pickle by reference (module and qualified name) where that name resolves to this object, else
        as ``jit(original, strict, backend)`` for cloudpickle to ship by value; nothing compiled is
        pickled (``astjit.pickling``)."""
        from .pickling import reduce_jit_function

        return reduce_jit_function(self)

    def _prepare(self):
        if config.disabled():
            self._note_function("ASTJIT_DISABLE is set: the function runs as Python")
            self._disabled = True
            return None
        from .frontend.transform import transform

        self._transforms += 1
        limit = config.recompile_limit()
        if self._transforms == 1 and limit < 1:
            self._note_function(f"ASTJIT_RECOMPILE_LIMIT is {limit}: nothing is compiled, the function runs as "
                                "Python")
            self._disabled = True
            return None
        if self._transforms > limit:
            self._note_function(f"transformed {self._transforms - 1} times: the globals or attributes it "
                                "resolves (functions, modules, classes, dtypes) keep being rebound to new "
                                "objects; it runs as Python (ASTJIT_RECOMPILE_LIMIT)")
            self._disabled = True
            return None
        try:
            transformed = transform(self.original, self.strict, self.backend, self._parsed, self.rewrites,
                                    self.fastmath, self.device, guard_failed=self._slow_call,
                                    missing_arguments=self._missing_arguments)
        except AstjitError as exc:
            if self.strict:
                raise strict_error(exc, self.original) from None
            self._note_function(f"{exc}: the function runs as Python")
            self._disabled = True
            return None
        except Exception as exc:  # a bug of ours must not break the user's program
            if self.strict:
                raise StrictModeError(f"astjit failed to transform {self.__qualname__}: "
                                      f"{type(exc).__name__}: {exc}") from exc
            self._note_function(f"astjit could not transform this function ({type(exc).__name__}: {exc}): "
                                "it runs as Python")
            self._disabled = True
            return None
        statements = [r for r in transformed.records if r.kind == "statement"]
        if self.strict and statements and not self.statements_may_run_as_python:
            first = statements[0]
            reason = first.message.removesuffix(": the statement runs as Python")
            raise StrictModeError(f"{reason} (strict=True forbids running it as Python)", first.filename,
                                  first.lineno, first.col, first.end_col)
        self._function = transformed.function
        original = self.original
        resolver = transformed.resolver
        self._names_hold = resolver.compiled_guard((original.__defaults__, original.__kwdefaults__))
        self._guard = resolver.compiled_guard((original.__defaults__, original.__kwdefaults__),
                                              quiet_floating_point=(fpstate.current_state, fpstate.last_quiet))
        if transformed.guarded:
            self._install_guarded_call(transformed.function)
        else:
            self._install_call(resolver, transformed.function)
        version = {"_function": self._function, "_names_hold": self._names_hold, "_guard": self.__dict__.get("_guard"),
                   "_transformed": transformed, "__class__": self.__class__}
        if self._transforms == 1:
            self._count_second_call(version)
        # published last: another thread reads _names_hold and _function once it sees _transformed
        self._transformed = transformed
        self._versions = self._versions[-(KEPT_VERSIONS - 1):] + [version]
        return transformed

    def _count_second_call(self, version) -> None:
        """Until a second call, the generic call with a guard that counts it and then installs the fast
        call: a jitted function gone after one short call counts as made and dropped at each call of
        its caller (``_gone``)."""
        life, real = self._life, version["_guard"]
        weakref.finalize(self, _gone, self.original.__code__, life)
        self.__class__ = JitFunction

        def second_call():
            life[0] += 1
            self._guard = real
            self.__class__ = version["__class__"]
            return real()

        self._guard = second_call

    # -- defaults: the original's, so that changing them reaches the next call ----------------------
    @property
    def __defaults__(self):
        return self.original.__defaults__

    @__defaults__.setter
    def __defaults__(self, value):
        self.original.__defaults__ = value        # the guard sees the new tuple: the next call rebuilds

    @property
    def __kwdefaults__(self):
        return self.original.__kwdefaults__

    @__kwdefaults__.setter
    def __kwdefaults__(self, value):
        self.original.__kwdefaults__ = value

    def _note_function(self, message):
        code = getattr(self.original, "__code__", None)
        filename, lineno = (code.co_filename, code.co_firstlineno) if code is not None else ("", None)
        self._records.append(Record("function", filename, lineno, message))

    # -- inspection -------------------------------------------------------------------------------
    def _ensure(self):
        if self._transformed is None and not self._disabled:
            self._prepare()
        return self._transformed

    @property
    def fragments(self) -> list:
        """The Fragments (one per compiled block), in source order; empty if the function runs as Python."""
        t = self._ensure()
        return list(t.fragments) if t is not None else []

    @property
    def source(self) -> str:
        """The transformed Python source: what actually runs."""
        from .frontend.source import as_python_text

        t = self._ensure()
        if t is not None:
            return t.source
        if self._parsed is None and getattr(self, "_short_lived", False):
            from .frontend.source import parse_function

            try:
                self._parsed = parse_function(self.original)
            except Exception:                     # (as __init__ would have found it)
                pass
        return as_python_text(self.original, self._parsed, [r for r in self.records() if r.kind == "function"])

    def cache_info(self) -> dict:
        """Per Fragment name, one dict per specialization: its cache ``key``, ``mode``, ``compile_ms`` and
        ``runs``: "compiled", or "python" where the block's Python measured faster on the first call
        (or the mode is "python").

        A key holds ``(dtype, shape)`` for each array live-in and the type of every other live-in; the
        mode is "tvm", "mixed" (TVM kernels and numpy), "numpy" or "python".
        """
        info = {}
        for frag in self.fragments:
            info[frag.name] = [{"key": e.key, "mode": e.mode, "compile_ms": round(e.compile_seconds * 1e3, 2),
                                "runs": e.runs}
                               for e in frag.entries]
        return info

    def records(self) -> list[Record]:
        """What ``explain()`` reports, as a list of ``Record``s."""
        from .frontend.transform import IN_COMPILED_LOOP

        t = self._ensure()
        out = list(self._records)
        if t is not None:
            # a statement of a loop whose calls all ran its kernel did not run as Python: not reported
            compiled = [frag.lines for frag in t.fragments if frag.block.kind == "loop" and frag.entries
                        and all(e.runs == "compiled" for e in frag.entries)]
            out += [r for r in t.records if not (r.message.endswith(IN_COMPILED_LOOP) and any(
                first <= r.lineno <= last for first, last in compiled))]
            for frag in t.fragments:
                out += frag.records
        return out

    def explain(self) -> "Explanation":
        """Every statement and block that runs as Python, and why; and every recompile (same as
        ``astjit.explain(self)``)."""
        # (blocks whose every specialization runs its Python, numbers only or measured faster so, with
        # no record: explain() would otherwise call them compiled)
        fragments = self.fragments
        settled = sum(1 for f in fragments if f.entries and all(e.runs == "python" for e in f.entries))
        # (not a loop region's inner blocks: they run only where the loop runs as Python)
        waiting = sum(1 for f in fragments if not f.entries and not f.block.in_region)
        return Explanation(self.__qualname__, self.records(), settled, waiting)

    def show(self, file=None, fragments: bool = False) -> None:
        """Print the transformed source, then each Fragment's lines, live-ins, live-outs and cache
        entries, to ``file`` (default: standard output); ``fragments=True`` adds each graph and which
        backend runs each subgraph (and why numpy got what TVM did not take)."""
        from .inspection.text import render_function

        print(render_function(self, fragments=fragments), file=file)

    def _repr_html_(self) -> str:
        from .inspection.html import render_function_html

        return render_function_html(self)


class Explanation:
    """What ``explain`` reports; prints as text, iterates as Records."""

    def __init__(self, name, records, settled=0, waiting=0):
        self.name = name
        self.records = records
        self.settled = settled          # blocks that run their Python with nothing to report
        self.waiting = waiting          # blocks no call has reached yet (nothing specialized)

    def __iter__(self):
        return iter(self.records)

    def __len__(self):
        return len(self.records)

    def __str__(self):
        if not self.records and self.settled:
            blocks = "a block runs" if self.settled == 1 else f"{self.settled} blocks run"
            return (f"{self.name}: nothing fell back; {blocks} as Python, the faster there (work on "
                    "numbers, or measured).")
        if not self.records and self.waiting:
            blocks = "1 block" if self.waiting == 1 else f"{self.waiting} blocks"
            return (f"{self.name}: nothing fell back so far; {blocks} not reached by a call yet (each "
                    "compiles at the first call that runs it).")
        if not self.records:
            return f"{self.name}: every block compiled; nothing fell back."
        lines = [f"{self.name}:"]
        for r in self.records:
            lines.append("  " + r.format().replace("\n", "\n  "))
        return "\n".join(lines)

    __repr__ = __str__


def jit(fn=None, *, strict=False, backend=None, rewrites=(), fastmath=False, device=None):
    """Compile the array code of ``fn``; control flow stays Python. Use as ``@jit`` or ``@jit(...)``.

    Args:
        fn: a function defined with ``def`` or ``lambda`` in a file or notebook cell (also a
            ``staticmethod`` or ``classmethod``). Nothing is compiled until the first call.
        strict: raise ``StrictModeError`` (file, line, caret) instead of falling back to Python.
        backend: "auto" (default; ``None`` means the same: every backend of the device, in order),
            "tvm" (TVM for the device, numpy for the rest), "numpy" (the reference interpreter),
            "python" (no fragments run compiled; useful to compare) or the name of a registered
            backend (``astjit.backends.register``).
        rewrites: rewrite rules for this function's blocks (``astjit.rewrite.Rule`` objects, or names
            of shipped or registered rules, which then run even where they change rounding) and
            function transformations by name (``"push_reductions_into_loops"``). See Rewrites.
        fastmath: also run every shipped and registered rule that changes rounding or special values
            (``exp(log(x)) -> x``, constant chains folded).
        device: None (default: where the arguments live; CuPy arrays and torch CUDA tensors run on
            their GPU), "cuda" (numpy arrays are copied to the GPU for each compiled block and the
            results copied back) or "cpu" (arrays on a GPU are an error). See Devices and backends.

    Returns:
        A ``JitFunction``; without ``fn``, a decorator that makes one.

    Raises:
        ValueError: ``backend`` names no backend, or ``device`` is not None, "cpu" or "cuda".
        RuleError: ``rewrites`` names no known rule or transformation.
        NotAFunctionError: ``fn`` is not a Python function (a builtin such as ``len``, ``np.sum``, a
            ``functools.partial``, a class), with or without ``strict``; it is a ``TypeError``.
        SourceUnavailableError: only with ``strict=True``, when ``fn`` has no readable source
            (``exec``'d code): a ``StrictModeError`` naming the function's file and line. Otherwise
            such a function runs as Python and ``explain`` says why: decorating a Python function
            never fails.
    """
    from .backends import registry
    from .devices import DEVICES

    known = None if backend is None else ["auto", "tvm", "python"] + [n for n in registry.names() if n != "tvm"]
    if backend is not None and backend not in known:
        raise ValueError(f"backend must be one of {', '.join(map(repr, known))}, not {backend!r}")
    if device not in DEVICES:
        raise ValueError(f"device must be None, 'cpu' or 'cuda', not {device!r}")

    def wrap(f):
        if isinstance(f, JitFunction):
            return f
        if isinstance(f, staticmethod | classmethod):
            return type(f)(wrap(f.__func__))
        return JitFunction(f, strict=strict, backend=None if backend == "auto" else backend, rewrites=rewrites,
                           fastmath=fastmath, device=device)

    return wrap if fn is None else wrap(fn)


def explain(f) -> Explanation:
    """Every statement and block of a jitted function that runs as Python, and why; and recompiles.

    Args:
        f: a function decorated with ``jit``, or a method of an object (or class) bound to one.

    Returns:
        An ``Explanation``: prints as text (file, line, reason, source line), iterates as ``Record``s.

    Raises:
        TypeError: ``f`` is not a ``JitFunction``.
    """
    given = f
    if isinstance(f, types.MethodType):          # (``model.forward``, a classmethod read from its class)
        f = f.__func__
    if not isinstance(f, JitFunction):
        raise TypeError(f"explain() takes a function decorated with @astjit.jit, got {type(given).__name__}")
    return f.explain()


__all__ = ["jit", "explain", "JitFunction", "Explanation", "SourceUnavailableError", "render_location"]

"""The on-disk cache of compiled kernels, so a new process skips the compiler (and ``import tvm``).

An entry is a folder named by the SHA-256 of its key: ``meta.json`` (the key's full text, how the
block was partitioned, each kernel's calling convention) and one shared library per kernel. The key is
the typed graph's exact text (graph/fingerprint) plus the code identity: a hash of astjit's own
sources, the TVM version and the host CPU, so an edit to astjit, another TVM or another machine never
reuses an entry. Entries are written in a temporary folder and published with an atomic rename, from a
background thread (linking a library costs about 50 ms); an entry that fails to read or load (corrupt,
truncated, written by another version) is deleted and rebuilt: ``meta.json`` holds each library's size
and SHA-256, checked before the library is loaded. Loading a library runs its code, so a
cache folder that other users can write is refused with a warning.

``ASTJIT_CACHE_DIR`` sets the folder (default ``$XDG_CACHE_HOME/astjit`` or ``~/.cache/astjit``) and
``ASTJIT_CACHE=0`` turns the cache off.
"""

import contextlib
import functools
import hashlib
import json
import os
import platform
import shutil
import stat
import tempfile
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .. import config
from ..errors import CacheDirectoryWarning

FORMAT = 1
_PACKAGE = Path(__file__).resolve().parent.parent


@functools.cache
def code_identity() -> str:
    """What compiled code depends on besides the graph: astjit's sources, TVM's version, the CPU."""
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*.py")):
        digest.update(str(path.relative_to(_PACKAGE)).encode())
        digest.update(path.read_bytes())
    from importlib import metadata

    for dist in ("apache-tvm", "apache-tvm-ffi"):
        try:
            digest.update(f"{dist}={metadata.version(dist)}".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{dist}=?".encode())
    digest.update(_cpu_identity().encode())
    return digest.hexdigest()


def _cpu_identity() -> str:
    """The CPU model and its feature flags (what LLVM's target detection reads), without TVM. Not
    ``platform.processor()``: it runs ``uname -p`` in a subprocess, whose start enters
    ``catch_warnings`` (``os.get_exec_path``), and every warning the program had shown once showed again."""
    text = platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read().split("\n\n")[0]
        text += "".join(line for line in info.splitlines() if line.startswith(("model name", "flags")))
    except OSError:
        pass
    return text


def default_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "astjit"


def active():
    """The DiskCache to use now, or None when it is turned off or its folder is unsafe."""
    if not config.disk_cache_enabled():
        return None
    # (absolute now: a relative folder checked once would follow every later chdir unchecked)
    root = Path(os.path.abspath(os.path.expanduser(os.environ.get("ASTJIT_CACHE_DIR") or default_root())))
    return _open(str(root))


@functools.cache
def _open(root: str):
    problem = _unsafe(Path(root))
    if problem is not None:
        warnings.warn(f"astjit's kernel cache is off: {problem} (set ASTJIT_CACHE_DIR to a private folder, "
                      "or ASTJIT_CACHE=0)", CacheDirectoryWarning, stacklevel=2)
        return None
    return DiskCache(Path(root))


def _unsafe(root: Path) -> str | None:
    """Why ``root`` must not be used (other users could plant libraries there), or None."""
    try:
        # each missing folder private (``parents=True`` makes the others with the umask's mode: under
        # ``umask 000`` a new ``~/.cache`` that everyone could write, refused below)
        for folder in [*reversed(root.parents), root]:
            if not folder.exists():
                folder.mkdir(mode=0o700, exist_ok=True)
        info = root.stat()
    except OSError as exc:
        return f"{root} cannot be created ({exc.strerror})"
    if not stat.S_ISDIR(info.st_mode):
        return f"{root} is not a folder"
    problem = _private(root, info)
    if problem is not None:
        return problem
    # a folder above it that another user owns, or that anyone may write to without the sticky bit
    # (``/tmp`` has it): there the cache folder itself could be renamed away and replaced
    for parent in root.resolve().parents:
        try:
            above = parent.stat()
        except OSError as exc:
            return f"{parent} cannot be read ({exc.strerror})"
        if hasattr(os, "getuid") and above.st_uid not in (0, os.getuid()):
            return f"{parent}, above {root}, belongs to another user"
        if above.st_mode & stat.S_IWOTH and not above.st_mode & stat.S_ISVTX:
            return f"other users can write to {parent}, above {root}"
    return None


def _private(folder: Path, info) -> str | None:
    """Why ``folder`` (its ``stat``) is not private to this user, or None."""
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return f"{folder} belongs to another user"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"other users can write to {folder}"
    return None


class DiskCache:
    def __init__(self, root: Path):
        self.root = root
        self.entries = root / f"v{FORMAT}"

    def path(self, key_text: str) -> Path:
        digest = hashlib.sha256((code_identity() + "\n" + key_text).encode()).hexdigest()
        return self.entries / digest[:2] / digest

    def load(self, key_text: str):
        """(meta, folder) of the entry for this key, or None; a damaged or foreign entry is removed."""
        folder = self.path(key_text)
        try:
            with open(folder / "meta.json") as f:
                meta = json.load(f)
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            self.discard(folder, "unreadable")
            return None
        # the folders below the root, which astjit makes private: another user able to write to one
        # could have put the entry there
        for inner in (folder, folder.parent, self.entries):
            try:
                problem = _private(inner, inner.stat())
            except OSError:
                problem = f"{inner} cannot be read"
            if problem is not None:
                config.log("cache", "not loading %s: %s", folder, problem)
                return None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("key") != key_text \
                or meta.get("identity") != code_identity():
            self.discard(folder, "written for another key or version")
            return None
        if not _files_intact(folder, meta.get("files")):
            # (a library cut short is mapped into memory by the loader, and touching its missing
            # pages killed the process with SIGBUS, in every later run)
            self.discard(folder, "a library is missing, truncated or altered")
            return None
        return meta, folder

    def discard(self, folder: Path, why: str) -> None:
        config.log("cache", "removing %s (%s)", folder, why)
        shutil.rmtree(folder, ignore_errors=True)

    def store(self, key_text: str, meta: dict, modules: list) -> None:
        """Publish an entry from the background thread: ``modules`` are TVM modules to export."""
        _writer().submit(_between_measurements, self._write, key_text,
                         dict(meta, format=FORMAT, key=key_text, identity=code_identity()), list(modules))

    def note(self, key_text: str, name: str, value: dict) -> None:
        """Add a small JSON file to the entry of this key, after its queued write (the first call's
        measured choice); nothing where the entry was not stored."""
        _writer().submit(self._note, key_text, name, value)

    def _note(self, key_text, name, value) -> None:
        folder = self.path(key_text)
        if not (folder / "meta.json").exists():
            return
        try:
            with tempfile.NamedTemporaryFile("w", dir=folder, delete=False, suffix=".tmp") as f:
                json.dump(value, f)
            os.replace(f.name, folder / name)                 # atomic: a reader sees all or nothing
        except OSError as exc:
            config.log("cache", "cannot note %s in %s: %s", name, folder, exc)

    def read_note(self, folder: Path, name: str) -> dict | None:
        try:
            with open(folder / name) as f:
                value = json.load(f)
        except (OSError, ValueError):
            return None
        return value if isinstance(value, dict) else None

    def _write(self, key_text, meta, modules) -> None:
        final = self.path(key_text)
        if (final / "meta.json").exists():
            return
        try:
            self.entries.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._sweep_staging()
            staging = Path(tempfile.mkdtemp(prefix=f".staging-{os.getpid()}-", dir=self.entries))
        except OSError as exc:
            config.log("cache", "cannot write to %s: %s", self.entries, exc)
            return
        try:
            from ..backends.tvm.runtime import export_library

            files = {}
            for k, module in enumerate(modules):
                export_library(module, str(staging / f"kernel{k}.so"))
                files[f"kernel{k}.so"] = _digest(staging / f"kernel{k}.so")
            with open(staging / "meta.json", "w") as f:
                json.dump(dict(meta, files=files), f)
            final.parent.mkdir(mode=0o700, exist_ok=True)
            shutil.rmtree(final, ignore_errors=True)         # a damaged entry that load() refused
            os.rename(staging, final)                         # atomic; fails if another process won
            config.log("cache", "stored %s", final)
        except Exception as exc:   # no C compiler, a full disk, a race: the cache is best effort
            config.log("cache", "not stored (%s: %s)", type(exc).__name__, exc)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _sweep_staging(self) -> None:
        """Remove staging folders of writes that never finished (a process killed while it wrote: a
        Pool's workers terminated at its exit left one each), once per process and cache: those of a
        process no longer running, and any older than an hour (another machine's, on a shared disk)."""
        if self.entries in _swept:
            return
        _swept.add(self.entries)
        now = time.time()
        for staging in self.entries.glob(".staging-*"):
            try:
                if not _writer_alive(staging.name) or now - staging.stat().st_mtime > STALE_STAGING_S:
                    shutil.rmtree(staging, ignore_errors=True)
            except OSError:
                pass


STALE_STAGING_S = 3600
_swept: set = set()


def _writer_alive(name: str) -> bool:
    """Whether the process named in a staging folder's name (``.staging-<pid>-...``) still runs."""
    try:
        pid = int(name.split("-")[1])
    except (IndexError, ValueError):
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:             # another user's process: running
        return True
    return True


def _digest(path: Path) -> list:
    """[size, SHA-256] of a file (a library of a few hundred KB: well under a millisecond to hash)."""
    data = path.read_bytes()
    return [len(data), hashlib.sha256(data).hexdigest()]


def _files_intact(folder: Path, files) -> bool:
    if not isinstance(files, dict):
        return False
    for name, expected in files.items():
        try:
            path = folder / name
            if path.stat().st_size != expected[0] or _digest(path) != list(expected):
                return False
        except (OSError, TypeError, IndexError):
            return False
    return True


_executor = None
_executor_lock = threading.Lock()


def _forget_writer() -> None:
    """In a child made with ``fork``: the parent's writer thread is not there, though its executor says
    it is (a call waiting for the cache's writes never returned); the child makes its own."""
    global _executor, _executor_lock, _measuring
    _executor, _executor_lock = None, threading.Lock()
    _measuring, _paused[0], _exporting[0] = threading.Condition(), 0, False


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_writer)


def _writer() -> ThreadPoolExecutor:
    global _executor
    with _executor_lock:
        if _executor is None:
            # its thread is joined when the interpreter exits: queued entries are still written
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="astjit-cache",
                                           initializer=_lower_priority)
        return _executor


def _lower_priority() -> None:
    """Exporting repeats LLVM's code generation and runs the C compiler: it yields to the program's
    own work (on Linux the priority is per thread, and the compiler inherits it)."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
    except (AttributeError, OSError):
        pass


# Exports yield to measurements: a first call's timing of a kernel against Python waits for the export
# running, if any, and the exports queued after it wait for the timing (``paused``). Waiting for the
# whole queue instead, a first call after 40 kernels compiled with the cache on took 70 s on a loaded
# machine (0.4 s with the cache off).
_measuring = threading.Condition()
_paused = [0]            # timings under way
_exporting = [False]     # an export running


def _between_measurements(write, *args) -> None:
    with _measuring:
        while _paused[0]:
            _measuring.wait()
        _exporting[0] = True
    try:
        write(*args)
    finally:
        with _measuring:
            _exporting[0] = False
            _measuring.notify_all()


@contextlib.contextmanager
def paused():
    """No export runs inside (the one running when it starts is waited for): exporting repeats LLVM's
    code generation and runs the C compiler on one of the cores that a kernel's threads, timed
    against the block's Python, would use (a kernel of two threads measured 4-10x its time and lost
    to Python for good)."""
    with _measuring:
        _paused[0] += 1
        while _exporting[0]:
            _measuring.wait()
    try:
        yield
    finally:
        with _measuring:
            _paused[0] -= 1
            _measuring.notify_all()


def wait() -> None:
    """Block until every entry queued so far is written (for tests)."""
    if _executor is not None:
        _executor.submit(lambda: None).result()

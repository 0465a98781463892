"""A time limit for generated code: a program that never ends must become a report, not a stuck run."""

import signal
import threading
from contextlib import contextmanager


class ProgramTimeout(BaseException):
    """Raised by ``time_limit`` (a BaseException, so that no ``except Exception`` swallows it)."""


@contextmanager
def time_limit(seconds: float):
    """Interrupt the block after ``seconds`` (main thread only; elsewhere, no limit)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise ProgramTimeout(f"no result after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)

"""Run campaign programs in worker processes, so that one that kills its process is a report, not the end.

A TVM error thrown through C++ aborts the whole interpreter ("terminate called after throwing an
instance of 'tvm::ffi::Error'"); a long campaign must survive that and name the program. Each worker
reads seeds on stdin and answers two JSON lines per program (the program, then what its calls gave);
when a worker dies after the first line, that program is reported as an "abort" crash and a fresh
worker takes the remaining seeds.
"""

import json
import os
import queue
import subprocess
import sys
import threading
from dataclasses import dataclass

from .compare import Finding, Outcome, run_program
from .programs import make_program

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@dataclass
class ProgramSummary:
    """What a report needs of a program that ran in another process."""
    seed: int
    function: str
    backend: str | None
    inexact: bool
    fragile: bool


def worker_main() -> None:
    """Seeds in, JSON lines out (on the real stdout; anything else printed goes to stderr)."""
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    for line in sys.stdin:
        program = make_program(int(line))
        summary = ProgramSummary(program.seed, program.function, program.backend, program.inexact,
                                 program.fragile)
        out.write(json.dumps(vars(summary)) + "\n")
        out.flush()
        outcome = run_program(program)
        out.write(json.dumps({"calls": outcome.calls, "skipped": outcome.skipped, "modes": dict(outcome.modes),
                              "findings": [[f.kind, f.call, f.details] for f in outcome.findings]}) + "\n")
        out.flush()


class Worker:
    def __init__(self, env):
        self.process = subprocess.Popen([sys.executable, "-m", "tests.campaign.run", "--worker"], cwd=REPO,
                                        env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def run(self, seed: int) -> tuple[ProgramSummary | None, Outcome | None]:
        """The program of ``seed`` and its outcome; None for what did not come because the process died."""
        try:
            self.process.stdin.write(f"{seed}\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            return None, None
        first = self.process.stdout.readline()
        if not first:
            return None, None
        summary = ProgramSummary(**json.loads(first))
        second = self.process.stdout.readline()
        if not second:
            return summary, None
        data = json.loads(second)
        outcome = Outcome(data["calls"], data["skipped"])
        outcome.modes.update(data["modes"])
        outcome.findings = [Finding(kind, seed, call, details, summary) for kind, call, details in data["findings"]]
        return summary, outcome

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait()


def run_isolated(seeds, jobs: int, record) -> None:
    """Run every seed in ``jobs`` worker processes; ``record(program, outcome)`` gets each result
    (called from one thread at a time)."""
    todo: queue.Queue = queue.Queue()
    for seed in seeds:
        todo.put(seed)
    lock = threading.Lock()
    env = dict(os.environ, TVM_NUM_THREADS="1" if jobs > 1 else os.environ.get("TVM_NUM_THREADS", "2"))

    def feed():
        worker = Worker(env)
        while True:
            try:
                seed = todo.get_nowait()
            except queue.Empty:
                break
            summary, outcome = worker.run(seed)
            if outcome is None:
                code = worker.process.wait()
                summary = summary or ProgramSummary(seed, f"(program of seed {seed})\n", None, False, False)
                outcome = Outcome(1, findings=[Finding("crash", seed, 0, [f"abort: the process died running "
                                                                          f"this program (exit code {code})"],
                                                       summary)])
                worker = Worker(env)
            with lock:
                record(summary, outcome)
        worker.close()

    threads = [threading.Thread(target=feed) for _ in range(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

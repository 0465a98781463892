"""The generated-program campaign, from the command line or from a test.

    python -m tests.campaign.run --programs 10000 --jobs 2   # the long campaign, in 2 worker processes
    python -m tests.campaign.run --programs 200 --seed 7     # another set of programs
    python -m tests.campaign.run --replay 1234567            # rerun one program by its seed, verbosely
    python -m tests.campaign.run --replay 1234567 --reduce   # ... and shrink it to a small repro

``kill -USR1 <pid>`` prints where every thread of a running campaign is (a hang, a deadlock).

It prints the programs generated, the calls compared, the mismatches and the crashes (exceptions raised
by astjit's own code), grouped by category, with the seed and source of a few examples of each.
"""

import argparse
import faulthandler
import os
import signal
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, given, seed, settings

from .compare import PLAIN_LIMIT, Finding, Outcome, run_program
from .isolated import run_isolated, worker_main
from .programs import make_program, program_seeds
from .reduce import reduce_program


@dataclass
class Stats:
    programs: int = 0
    calls: int = 0
    skipped: int = 0
    inexact: int = 0
    fragile: int = 0
    findings: list = field(default_factory=list)
    modes: Counter = field(default_factory=Counter)

    def add(self, program, outcome: Outcome) -> None:
        self.programs += 1
        self.calls += outcome.calls
        self.skipped += outcome.skipped
        self.inexact += program.inexact
        self.fragile += program.fragile
        self.findings += outcome.findings
        self.modes.update(outcome.modes)

    def of_kind(self, kind) -> list[Finding]:
        return [f for f in self.findings if f.kind == kind]

    def summary(self, examples_per_category=2) -> str:
        lines = [f"programs generated: {self.programs} ({self.inexact} compared within tolerances, "
                 f"{self.fragile} where rounding may flip a branch)",
                 f"calls compared: {self.calls}",
                 f"programs skipped (a plain call took over {PLAIN_LIMIT} s): {self.skipped}",
                 "specializations by how they ran: " + ", ".join(f"{k} {v}" for k, v in self.modes.most_common()),
                 f"mismatches: {len(self.of_kind('mismatch'))}", f"crashes: {len(self.of_kind('crash'))}",
                 f"soft differences (rounding may flip a branch): {len(self.of_kind('soft'))}"]
        groups = defaultdict(list)
        for f in self.findings:
            groups[(f.kind, f.category)].append(f)
        for (kind, category), found in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            seeds = sorted({f.seed for f in found})
            lines.append(f"\n== {kind} / {category}: {len(found)} calls in {len(seeds)} programs "
                         f"(seeds {', '.join(map(str, seeds[:30]))}{' ...' if len(seeds) > 30 else ''})")
            shown = set()
            for f in found:
                if f.seed not in shown and len(shown) < examples_per_category:
                    shown.add(f.seed)
                    lines.append(f.report())
        return "\n".join(lines)


def campaign_settings(examples: int, random_mode: bool):
    return settings(max_examples=examples, deadline=None, derandomize=not random_mode, database=None,
                    phases=[Phase.generate], print_blob=False,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def explore(examples: int, seed_value, body) -> None:
    """Call ``body(program_seed)`` for ``examples`` seeds that Hypothesis draws: the same seeds every time
    unless ``seed_value`` is an int (another fixed set) or "random"."""
    @campaign_settings(examples, random_mode=seed_value is not None)
    @given(program_seeds())
    def each(program_seed):
        body(program_seed)

    if isinstance(seed_value, int):
        each = seed(seed_value)(each)
    each()


def run_campaign(examples: int, seed_value=None, progress=None) -> Stats:
    """Run ``examples`` programs in this process (see ``explore``)."""
    stats = Stats()

    def body(program_seed):
        program = make_program(program_seed)
        if progress is not None:
            progress(stats, program)
        stats.add(program, run_program(program))
        if progress is not None:
            progress(stats)

    explore(examples, seed_value, body)
    return stats


def campaign_seeds(examples: int, seed_value=None) -> list:
    """The seeds ``run_campaign`` would run, in order."""
    seeds: list = []
    explore(examples, seed_value, seeds.append)
    return seeds


def seed_from_environment():
    """ASTJIT_CAMPAIGN_SEED: unset for the derandomized CI set, an int, or "random"."""
    value = os.environ.get("ASTJIT_CAMPAIGN_SEED", "").strip()
    if not value:
        return None
    return value if value == "random" else int(value)


def show_program(program) -> None:
    print(program.function)
    for number, call in enumerate(program.calls):
        print(f"call {number}: args={call.args!r}\n    attributes={call.attributes} K={call.global_k!r}"
              + (f" under np.errstate({call.errstate})" if call.errstate else ""))


def replay(program_seed: int, reduce: bool) -> None:
    program = make_program(program_seed)
    show_program(program)
    outcome = run_program(program)
    if outcome.skipped:
        print(f"skipped: a plain call took over {PLAIN_LIMIT} s")
    findings = outcome.findings
    for finding in findings:
        print(finding.report())
    if reduce:
        done = set()
        for finding in findings:
            if finding.kind != "soft" and (finding.kind, finding.category) not in done:
                done.add((finding.kind, finding.category))
                print(f"\n-- reduced, still showing {finding.kind} / {finding.category}:")
                show_program(reduce_program(program, finding))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--programs", type=int, default=500)
    parser.add_argument("--seed", default=None, help='an int for another fixed set of programs, or "random"')
    parser.add_argument("--replay", type=int, default=None, help="rerun the program of this seed")
    parser.add_argument("--reduce", action="store_true", help="with --replay: shrink the program to the "
                        "statements that still show each finding")
    parser.add_argument("--examples", type=int, default=2, help="examples printed per category")
    parser.add_argument("--trace", action="store_true",
                        help="print each program's seed before running it (to find one that aborts the process)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--in-process", action="store_true", help="no worker processes (what the test does): "
                        "faster to start, but a program that aborts the interpreter ends the campaign")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    faulthandler.register(signal.SIGUSR1, all_threads=True)    # kill -USR1 <pid>: where is it stuck?
    if options.worker:
        worker_main()
        return 0
    if options.replay is not None:
        replay(options.replay, options.reduce)
        return 0
    seed_value = options.seed if options.seed in (None, "random") else int(options.seed)
    started = time.perf_counter()

    def progress(stats, program=None):
        if program is not None:
            if options.trace:
                print(f"  running seed {program.seed}", file=sys.stderr, flush=True)
            return
        if stats.programs % 100 == 0:
            print(f"  {stats.programs} programs, {stats.calls} calls, {len(stats.findings)} findings, "
                  f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)

    if options.in_process:
        stats = run_campaign(options.programs, seed_value, progress)
    else:
        stats = Stats()

        def record(program, outcome):
            stats.add(program, outcome)
            progress(stats)

        run_isolated(campaign_seeds(options.programs, seed_value), options.jobs, record)
    print(stats.summary(options.examples))
    print(f"\n{time.perf_counter() - started:.0f} s")
    return 1 if stats.of_kind("mismatch") or stats.of_kind("crash") else 0


if __name__ == "__main__":
    sys.exit(main())

"""The shipped adjoint rules are parsed when first asked for (grad/rules.shipped_adjoint), so a
malformed one would fail only at a user's gradient: parse every one here."""

import astjit
from astjit.grad.rules import ADJOINTS, AdjointRule, rule_for


def test_every_shipped_rule_parses():
    ops = [op for op, _ in list(ADJOINTS.values())]
    assert len(ops) > 50
    for op in ops:
        rule = rule_for(op)
        assert isinstance(rule, AdjointRule), op
        assert rule.operands and rule.results, op


def test_importing_astjit_parses_no_rule():
    """(a new process: the import leaves each shipped rule unparsed)"""
    import subprocess
    import sys

    code = ("import astjit; from astjit.grad.rules import ADJOINTS; "
            "print(sum(not isinstance(r, tuple) for _, r in ADJOINTS.values()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "0"
    assert astjit.grad is not None

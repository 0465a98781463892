"""Environment switches (astjit/config.py) and the inspection counters they complement."""

import logging

import numpy as np
import pytest
from differential import assert_same_as_numpy, jit_unmeasured

from astjit import config, explain, jit


def scaled(a, k):
    b = a * k + 1
    return b.sum()


def unsupported(a):
    return np.linalg.det(a) + a.sum() * 2


@pytest.fixture
def log_all(monkeypatch, caplog):
    monkeypatch.setenv("ASTJIT_LOG", "fragments,recompiles,fallbacks")
    caplog.set_level(logging.INFO, logger="astjit")
    return caplog


def test_astjit_log_reports_fragments_and_recompiles(log_all):
    jf = jit(scaled)
    assert_same_as_numpy(scaled, np.ones(8, np.float32), 2.0, jitted=jf)
    assert_same_as_numpy(scaled, np.ones(9, np.float32), 2.0, jitted=jf)
    text = "\n".join(r.getMessage() for r in log_all.records if r.name == "astjit")
    assert "[fragments]" in text and "specialized for a=float32[8]" in text
    assert "[recompiles]" in text and "'a' dimension 0: 8 -> 9" in text


def test_astjit_log_reports_fallbacks(log_all):
    jf = jit(scaled)
    assert_same_as_numpy(scaled, np.ones(4, np.complex128), 2.0, jitted=jf)
    messages = [r.getMessage() for r in log_all.records if r.name == "astjit"]
    assert any("[fallbacks]" in m and "complex" in m for m in messages), messages


def test_logging_is_quiet_by_default(monkeypatch, caplog):
    monkeypatch.delenv("ASTJIT_LOG", raising=False)
    caplog.set_level(logging.DEBUG)
    jf = jit(scaled)
    jf(np.ones(5), 3)
    jf(np.ones(6), 3)
    assert not [r for r in caplog.records if r.name == "astjit"]


@pytest.mark.parametrize("value, expected", [(None, None), ("auto", None), ("12", 12), ("0", 0), ("many", None)])
def test_tiny_loop_work_is_auto_where_unset_or_not_an_integer(monkeypatch, value, expected):
    if value is None:
        monkeypatch.delenv("ASTJIT_TINY_LOOP", raising=False)
    else:
        monkeypatch.setenv("ASTJIT_TINY_LOOP", value)
    assert config.tiny_loop_work() == expected


def test_unknown_backend_name_is_an_error(monkeypatch):
    monkeypatch.setenv("ASTJIT_BACKEND", "cuda-please")
    jf = jit(scaled)
    with pytest.raises(ValueError, match="ASTJIT_BACKEND must be one of"):
        jf(np.ones(3), 1)


@pytest.mark.parametrize("backend", ["numpy", "python", "tvm"])
def test_forced_backends_give_numpys_answer(monkeypatch, backend):
    monkeypatch.setenv("ASTJIT_BACKEND", backend)
    jf = assert_same_as_numpy(scaled, np.arange(7, dtype=np.float64), 3)
    expected = {"numpy": {"numpy"}, "python": {"python"}, "tvm": {"tvm", "mixed"}}[backend]
    assert {e.mode for f in jf.fragments for e in f.entries} <= expected


def test_fragments_count_their_calls():
    jf = jit_unmeasured(scaled)
    for n in (4, 4, 4, 5):
        jf(np.ones(n), 1.5)
    (frag,) = jf.fragments
    assert frag.calls == 4
    assert [e.key[0][1] for e in frag.entries] == [(4,), (5,)]
    info = jf.cache_info()[frag.name]
    assert [i["key"][0][1] for i in info] == [(4,), (5,)] and all(i["compile_ms"] > 0 for i in info)


def test_explain_names_unsupported_call_and_line():
    jf = jit(unsupported)
    assert_same_as_numpy(unsupported, np.eye(3) * 2, jitted=jf)
    text = str(explain(jf))
    assert "np.linalg.det" in text and "not supported yet" in text
    assert f"test_config.py:{unsupported.__code__.co_firstlineno + 1}" in text

"""The Graph mutation API the passes use: clone, insert_before, replace_all_uses, remove_dead, verify."""

import pytest

from astjit.graph.ir import Graph, GraphError


def small_graph():
    g = Graph("g")
    x = g.input("x")
    one = g.const(1)
    y = g.add("multiply", [x, one])
    z = g.add("negative", [y])
    g.outputs = [("z", z)]
    return g, x, one, y, z


def test_clone_is_independent():
    g, x, one, y, z = small_graph()
    c = g.clone()
    assert [n.op for n in c.nodes] == [n.op for n in g.nodes]
    assert all(a is not b for a, b in zip(c.nodes, g.nodes))
    assert c.inputs[0] is c.nodes[0] and c.outputs[0][1] is c.nodes[3]
    c.replace_all_uses(c.nodes[2], c.nodes[0])
    assert z.args == [y], "the original changed with its clone"
    c.verify()
    g.verify()


def test_insert_replace_and_remove_keep_order_and_ids():
    g, x, one, y, z = small_graph()
    two = g.insert_before(y, "const", value=2)
    w = g.insert_before(y, "add", [x, two])
    assert [n.id for n in g.nodes] == list(range(len(g.nodes)))
    assert w.lineno == y.lineno
    g.replace_all_uses(y, w)
    assert z.args == [w]
    removed = g.remove_dead([y, one])
    assert set(removed) == {y, one}
    assert y not in g.nodes and one not in g.nodes
    g.verify()
    assert [n.id for n in g.nodes] == list(range(len(g.nodes)))


def test_remove_dead_keeps_outputs_inputs_read_nodes_and_non_candidates():
    g, x, one, y, z = small_graph()
    unread = g.add("negative", [x])          # the user's own dead temporary: not a candidate
    assert g.remove_dead([z, y, x]) == []     # z is an output, y is read by z, x is an input
    assert g.remove_dead([unread], keep=lambda n: n is unread) == []
    assert unread in g.nodes


def test_verify_finds_broken_graphs():
    g, x, one, y, z = small_graph()
    g.nodes[2], g.nodes[3] = g.nodes[3], g.nodes[2]
    with pytest.raises(GraphError):
        g.verify()
    g, x, one, y, z = small_graph()
    g.outputs = [("z", Graph("other").input("q"))]
    with pytest.raises(GraphError, match="output z"):
        g.verify()
    g, x, one, y, z = small_graph()
    z.args = [Graph("other").input("q")]
    with pytest.raises(GraphError, match="not before it"):
        g.verify()

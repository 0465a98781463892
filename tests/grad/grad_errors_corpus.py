"""Functions astjit.grad must refuse, each at a known line (the tests find it by its marker comment)."""

import numpy as np


def no_rule(x):
    return np.sum(np.sort(x))                      # marker: no_rule


def updates_argument(x):
    x += 1.0                                       # marker: updates_argument
    return np.sum(x)


def writes_element(x):
    y = x * 2.0
    y[0] = 5.0                                     # marker: writes_element
    return np.sum(y)


def aliased_update(x):
    y = x * 2.0
    z = y
    y += 1.0                                       # marker: aliased_update
    return np.sum(z * y)


def returns_in_loop(x, n):
    for i in range(n):
        if i > 2:
            return np.sum(x)                       # marker: returns_in_loop
    return np.sum(x * 2.0)


def loops_over_a_list(w, xs):
    total = 0.0
    for x in xs:                                   # marker: loops_over_a_list
        total = total + np.sum(x * w)
    return total


def returns_an_array(x):
    return x * 2.0


def may_not_return(x):                             # marker: may_not_return
    if np.sum(x) > 0:
        return np.sum(x)


def calls_a_keyword_only_helper(x):
    return np.sum(keyword_only_helper(x, k=2.0))   # marker: calls_a_keyword_only_helper


def keyword_only_helper(x, *, k):
    return x * k


def calls_a_helper_without_a_rule(x):
    return np.sum(sorting_helper(x) * 2.0)


def sorting_helper(x):
    y = x * 3.0
    return np.sort(y)                              # marker: calls_a_helper_without_a_rule


def calls_itself(x, n):
    if n == 0:
        return np.sum(x)
    return calls_itself(x * 2.0, n - 1)            # marker: calls_itself


def joins_too_many(x):
    return np.sum(np.concatenate((x, x, x, x, x, x, x, x, x)))          # marker: joins_too_many


def appends_in_a_loop(x):
    hs = []
    for i in range(3):
        hs.append(x * i)                           # marker: appends_in_a_loop
    return np.sum(np.stack(hs))


def appends_in_a_while_loop(x):
    hs = []
    while len(hs) < 3:
        hs.append(x * len(hs))                     # marker: appends_in_a_while_loop
    return np.sum(np.concatenate(hs))


def fills_a_dict_in_a_loop(x):
    d = {}
    for i in range(2):
        d[i] = x * i                               # marker: fills_a_dict_in_a_loop
    return np.sum(d[1])


def sums_a_list_comprehension(x):
    return sum([v ** 2 for v in x])                # marker: sums_a_list_comprehension


def sums_a_generator(x):
    return np.sum(np.array(list(v ** 2 for v in x)))          # marker: sums_a_generator


def comprehension_into_a_name(x):
    squares = [v ** 2 for v in x]                  # marker: comprehension_into_a_name
    return squares[0] + squares[1]


def assignment_expression_in_a_test(x):
    if (y := np.sum(x * 3.0)) > -100:              # marker: assignment_expression_in_a_test
        return y * 2.0
    return 0.0


def assignment_expression_in_a_loop(x, n):
    s = 0.0
    for i in range(n):
        if (y := x[i] * 2.0) > 0:                  # marker: assignment_expression_in_a_loop
            s = s + 1.0
    return s + y


def updates_a_row_in_place(x):
    y = x * 2.0
    for row in y:
        row += 1.0                                 # marker: updates_a_row_in_place
    return np.sum(y * y)


def zips_with_a_list(x, names):
    s = 0.0
    for a, name in zip(x, names):                  # marker: zips_with_a_list
        s = s + a * len(name)
    return s


def updates_a_conditional_alias(x, k):
    z = x * 1.5
    w = z if k else z * 1.0
    w += 1.0                                       # marker: updates_a_conditional_alias
    return np.sum(z ** 2)


def updates_an_unpacked_alias(x):
    z = x * 1.5
    a, b = z, z
    a += 1.0                                       # marker: updates_an_unpacked_alias
    return np.sum(b ** 2)


def updates_an_astype_alias(x):
    y = x * 1.5
    z = y.astype(np.float64, copy=False)           # y itself for a float64 y
    z += 1.0                                       # marker: updates_an_astype_alias
    return np.sum(y ** 2)


def updates_an_unknown_result(x):
    z = x * 1.5
    w = np.asarray(z)
    w += 1.0                                       # marker: updates_an_unknown_result
    return np.sum(z ** 2)


def updates_a_chained_target(x):
    a = b = np.zeros(3)
    a += x                                         # marker: updates_a_chained_target
    return np.sum(a * b)


def updates_an_einsum_view(x):
    m = np.eye(3)
    d = np.einsum("ii->i", m)
    d += x                                         # marker: updates_an_einsum_view
    return np.sum(m * x)


def updates_a_diff_of_order_zero(x):
    m = np.ones(3)
    d = np.diff(m, n=0)
    d += x                                         # marker: updates_a_diff_of_order_zero
    return np.sum(m * x)


def writes_into_out(x):
    buf = np.empty_like(x)
    np.exp(x, out=buf)                             # marker: writes_into_out
    return np.sum(buf * 2.0)


def writes_into_a_positional_out(x):
    buf = np.zeros_like(x)
    y = np.multiply(x, 3.0, buf)                   # marker: writes_into_a_positional_out
    return np.sum(buf * x + y)


def reduces_into_a_positional_out(x):
    buf = np.zeros(3)
    y = np.sum(x, 0, None, buf)                    # marker: reduces_into_a_positional_out
    return np.sum(buf * x) + np.sum(y)


def writes_into_an_active_out(x, c):
    y = x * 2.0
    np.exp(c, out=y)                               # marker: writes_into_an_active_out
    return np.sum(y)


def makes_a_list(x):
    v = x.tolist()                                 # marker: makes_a_list
    return v[0] * v[1]


def spaces_with_a_step(x):
    s = np.linspace(0.0, x[0], 3, retstep=True)    # marker: spaces_with_a_step
    return np.sum(s[0])


def solves_a_system(x, a):
    y = np.linalg.solve(a, np.ones(3))             # marker: solves_a_system
    return np.sum(x * y)

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


def calls_a_user_function(x):
    return np.sum(helper(x))                       # marker: calls_a_user_function


def helper(x):
    return x * x


def joins_too_many(x):
    return np.sum(np.concatenate((x, x, x, x, x, x, x, x, x)))          # marker: joins_too_many

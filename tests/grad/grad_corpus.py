"""Functions the gradient tests differentiate: every shipped rule, broadcasting, reductions with axis
and keepdims, indexing, and each control-flow form. Each entry: (function, argument makers by shape
seed, the argnums to differentiate)."""

import numpy as np


def elementwise(x, y):
    a = np.exp(x) * np.log(y) + np.sqrt(y) / (1.0 + x * x)
    b = np.sin(x) - np.cos(y) * np.tanh(x) + np.arctan(x) ** 2
    c = np.log1p(y) + np.expm1(x * 0.5) + np.square(x) - np.reciprocal(y) + np.cbrt(y)
    d = np.sinh(x * 0.3) + np.cosh(x * 0.2) + np.arcsinh(x) + np.exp2(x) + np.log2(y) + np.log10(y)
    e = -x + (+y) + abs(x) * np.fabs(y) + np.arctan2(x, y) + np.hypot(x, y)
    return np.sum(a + b + c + d + e)


def powers(x, y):
    return np.sum(x ** 3 + y ** x + np.power(y, 0.5) + x ** 2.0 / y)


def inverse_trig(x):
    z = x * 0.4
    return np.sum(np.arcsin(z) + np.arccos(z) * z + np.arctanh(z) + np.tan(z) + np.arccosh(2.0 + x * x))


def broadcasting(x, row, col, s):
    return np.sum((x * row + col) ** 2 - x / (row * row + 1.0) + s * x)


def reductions(x):
    a = np.sum(x, axis=0)
    b = x.mean(axis=1, keepdims=True)
    c = np.var(x, axis=1) + x.std(axis=0, ddof=1).sum()
    d = np.max(x, axis=1) + x.min(axis=0).mean() + np.max(x)
    return np.sum(a * a) + np.sum(b * x) + np.sum(c) + np.sum(d)


def running_sums(x):
    a = np.cumsum(x, axis=1)
    b = np.cumsum(x * x)                   # axis=None: over the flattened array
    c = x.cumsum(axis=0)
    return np.sum(a * a) + np.sum(b * np.arange(b.size)) + np.sum(np.tanh(c))


def joins(x, y):
    a = np.concatenate((x, y * 2.0), axis=1)
    b = np.concatenate([x, np.tanh(x)])
    c = np.stack((x, y, x * y), axis=-1)
    d = np.concatenate((x, y), axis=None)
    return np.sum(a * a * np.arange(a.shape[1])) + np.sum(b ** 3) + np.sum(np.sin(c) * c) + np.sum(np.cumsum(d) * d)


def products_of_elements(x):
    # rows with no zero, one zero and two zeros (the test sets them)
    return np.sum(np.prod(x, axis=1) * 2.0) + x[0].prod() + np.prod(x, axis=0, keepdims=True).sum()


def ties(x):
    # equal elements: the adjoint of max/min is shared evenly between them
    y = np.floor(x * 2.0) / 2.0
    return np.max(y * x) + np.sum(np.maximum(y, 0.5) * x) + np.sum(np.minimum(x, y + 0.0))


def selections(x, y):
    a = np.where(x > 0, x * y, y * y)
    b = np.clip(x, -0.5, 0.5) + np.clip(y, None, 0.3)
    return np.sum(a * b)


def indexing(x, idx):
    first = x[0]
    rows = x[1:3, :]
    picked = x[idx]                      # repeated indices add up
    masked = x[x > 0]
    return np.sum(first * 2.0) + np.sum(rows ** 2) + np.sum(picked) * 3.0 + np.sum(masked)


def views(x, w):
    a = x.reshape(-1)
    b = np.transpose(x) @ w.T
    c = x.T.ravel()
    d = np.reshape(x, (x.shape[1], x.shape[0])).transpose(1, 0)
    return np.sum(a * c) + np.sum(b * b) + np.sum(d * x)


def products(a, b, v):
    m = a @ b            # 2-D @ 2-D
    u = b @ v            # 2-D @ 1-D
    w = u @ b            # 1-D @ 2-D
    return np.sum(m * m) + np.dot(u, u) + np.sum(np.tanh(w)) + np.dot(v, w) + np.sum(np.dot(a, u))


def batched(a, b):
    return np.sum(np.tanh(a @ b))


def casts(x):
    y = x.astype(np.float32)
    return float(np.sum(y.astype(np.float64) * x))


def branches(x, k):
    if np.sum(x) > 0:
        y = x * 2.0
    elif k > 1:
        y = np.sin(x)
    else:
        y = x * x
    return np.sum(y * x)


def early_return(x):
    s = np.sum(x)
    if s > 1.0:
        return s * s
    z = np.exp(x)
    return np.sum(z)


def for_loop(x, w, n):
    h = x
    for i in range(n):
        h = np.tanh(h * w + 0.1 * i)
    return np.sum(h)


def loop_with_scalar(x, n):
    total = 0.0
    for i in range(1, n, 2):
        total = total + np.sum(x ** i) / i
    return total


def nested_loops(x, n):
    acc = x
    for i in range(n):
        for j in range(i):
            acc = acc * 0.9 + np.sin(acc) * (j + 1)
    return np.sum(acc * acc)


def while_loop(x):
    y = x
    steps = 0
    while np.max(np.abs(y)) > 0.1 and steps < 50:
        y = y * 0.5 + 0.01 * np.tanh(y)
        steps += 1
    return np.sum(y * y)


def break_and_continue(x, n):
    y = x
    for i in range(n):
        if i % 3 == 1:
            continue
        y = np.sin(y) + y * 0.5
        if np.sum(y) < -0.5 * y.size:
            break
        y = y + 0.1
    return np.sum(y)


def time_steps(u0, c, dt, steps):
    u = u0
    for _ in range(steps):
        lap = u[:-2] - 2.0 * u[1:-1] + u[2:]
        u = u * 0.99 + 0.01 * np.mean(u[1:-1] + dt * c * lap)
    return np.sum(u * u)


def accumulate(x, w):
    loss = 0.0
    h = x
    for _ in range(4):
        h = np.tanh(h @ w)
        loss += np.mean(h * h)
    return loss


def mlp_loss(w1, b1, w2, b2, x, y):
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    m = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - m)
    p = e / e.sum(axis=1, keepdims=True)
    return -np.mean(np.sum(y * np.log(p), axis=1))


def rnn_loss(w, u, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(h @ w + xs[t] @ u)
    return np.sum(h * h)


def over_elements(x):
    s = 0.0
    for v in x:
        s = s + v ** 2
    return s


def over_rows(xs, w):
    total = 0.0
    for row in xs:
        for v in np.tanh(row @ w):
            total = total + v * v * v
    return total


def enumerated(x):
    s = 0.0
    for i, v in enumerate(x, 2):
        s = s + v * i
    return s


def zipped(x, y):
    s = 0.0
    for a, b in zip(x, y[1:]):               # stops at the shorter one
        if s > 2.0:
            break
        s = s + a * b * a
    return s


def iterable_rebound(x):
    s = 0.0
    for v in x:                              # iterates the x of before the loop
        x = x * 2.0
        s = s + v * np.sum(x)
    return s


def updates_new_arrays(x, k):
    a, b = x * 2.0, np.tanh(x)                     # new arrays: `+=` rebinds them
    a += b
    c = np.exp(x) if k else x * 3.0
    c += a
    d = x.astype(np.float64)
    d *= c
    s = d.sum()
    s += np.sum(np.maximum(d, 0.1))
    return s


def guarded_sqrt(x):
    # np.where(x > 0, np.sqrt(x), 0.0) would give NaN at x < 0 (docs/gradients.md): the inner where keeps
    # the unused branch in sqrt's domain
    return np.sum(np.where(x > 0, np.sqrt(np.where(x > 0, x, 1.0)), 0.0))


def updates_inactive_arrays(x):
    m = np.ones(np.shape(x))
    y = x * m
    m += 1.0                                 # the backward pass of x * m reads m of before
    z = np.sin(x * m)
    m[:] = 3.0
    s = np.sum(y * m) + np.sum(z)
    w = m[1:]                                # a view of m: updated with it
    t = x[1:] * w
    for i in range(len(m)):
        s = s + np.sum(x * m) * 0.1
        m[i] = 2.0 + i
    return s + np.sum(t) + np.sum(w * x[1:])


def updates_a_data_argument(x, data):
    y = np.sum(x * data)
    data[0] = 0.0
    return y * np.sum(data)


def updates_through_calls(x):
    m = np.ones(np.shape(x))
    y = x * m
    r = np.copyto(m, 3.0)                    # its result assigned: m is still written
    k = np.ones(np.shape(x)) * 0.5
    z = np.sin(x * k)
    c = np.cumsum(k, 0, None, k)             # out by position, on a function that is not a ufunc
    return np.sum(y * m) + np.sum(z * c) + (0.0 if r is None else 1.0)


def filled_and_spaced_as_ints(x, a, b):
    # integer results are step functions of the fill value and the endpoints: no gradient through them
    f = np.full(np.shape(x), a, dtype=np.int64) * x + np.full_like(np.zeros(3, np.int64), b).sum()
    s = np.linspace(a, b, 4, dtype=np.int64) * a
    return np.sum(f) + np.sum(s)


def filled_and_spaced(x, a, b):
    f = np.full(np.shape(x), a) * x + np.full_like(x, b) ** 2
    g = np.full((2, 3), x[:3]) * a                 # an array fill value, broadcast
    s = np.linspace(a, b, 5) ** 2 + np.linspace(x[:2], b, 5, endpoint=False, axis=1).sum(axis=0)
    return np.sum(f) + np.sum(g) + np.sum(s * np.arange(5.0))


def remainders(x, c):
    return np.sum((x % 1.0) ** 2 + np.mod(x * 3.0, c) * x + np.remainder(c, x + 3.0))


def accumulates_in_float32(x, w):
    acc = np.zeros(2, dtype=np.float32)
    for i in range(x.shape[0]):
        acc += x[i] * w                      # stays float32, as numpy's in-place add
    return np.sum(acc * acc)


def accumulates_in_int(x):
    acc = np.zeros(3, dtype=np.int64)
    acc += x                                 # numpy refuses to cast float into the int array
    return np.sum(acc * 1.0)


def loop_target_after_the_loop(x):
    for v in x:
        if v > 0:
            break
    for w in x[1:]:
        pass
    return v * 3.0 + v * v + w * w


def enumerated_from_a_float(x):
    s = 0.0
    for i, v in enumerate(x, 1.5):
        s = s + v * i
    return s


def rebound_to_a_new_shape(x, w):
    # each statement reads x and binds x to a result of another shape: the adjoint of the x it read is
    # summed back to that x's shape
    x = np.mean(x * 2.0 + x[0], axis=0, keepdims=True)
    v = np.sum(w * x[0, 0], keepdims=True)
    v = np.sum(v * w, keepdims=True)
    y = w
    for i in range(2):
        y = np.concatenate((y, y * w[i]))
    return np.sum(x ** 2) + np.sum(v * v) + np.sum(y ** 2)


def ravel_orders(x):
    # x is (n, 3); x.T is Fortran-ordered, so 'K' and 'A' read it in x's memory order
    weights = np.arange(x.size) + 1.0
    a = np.ravel(x, "F") * weights + x.flatten("F") ** 2 + x.ravel(order="C") * 0.5
    b = x.T.ravel("K") * weights + x.T.ravel("A") ** 2 + x[:, ::-1].T.ravel("K") * weights[::-1]
    c = np.squeeze(x[:1], axis=0) * 2.0 + np.expand_dims(x, axis=0)[0, 1] + x[:, :1].squeeze(axis=1).sum()
    return np.sum(a * a) + np.sum(np.tanh(b)) + np.sum(c ** 3)


def clipped_by_keyword(x, hi):
    # the method's own keywords: ReLU as x.clip(min=0.0), a bound the gradient flows into as max=
    return np.sum(x.clip(min=0.0) ** 2) + np.sum(x.clip(max=hi) * 3.0) + np.sum(x.clip(min=-0.5, max=hi))


def clipped_between_bounds(x, lo, hi):
    # with lo < hi, np.clip(x, hi, lo) returns lo everywhere (numpy returns a_max where a_min > a_max)
    weights = np.arange(x.size) + 1.0
    inside = np.clip(x, lo, hi) * weights + np.clip(x, lo, None) ** 2 + x.clip(None, hi) * 0.5
    crossed = np.clip(x, hi, lo) * weights + np.clip(x * 2.0, hi + 0.5, lo) ** 2
    return np.sum(inside) + np.sum(crossed)


def chosen_by_or_and(x, a, b):
    # `or` and `and` return one of their operands, which gets the adjoint (a is 0.0 or not: a switch)
    s = (a and b) or x[0]
    t = a or b or 2.0
    u = b and x[1] * 3.0
    return np.sum(x) * s + t * x[1] + u * u + (x[2] or b) ** 2


def powers_at_zero(x, k):
    # x ** 0 has slope 0, also at x == 0
    return np.sum(x ** k + np.power(x, np.array([0.0, 2.0, 1.0, 0.0])) + x ** 0.0 * x)


def reductions_by_position(x):
    # numpy's positional parameters: (a, axis, dtype, out, ddof, keepdims) for var and std, (a, axis,
    # dtype, out, keepdims) for sum, mean and prod, (a, axis, out, keepdims) for max and min
    a = np.var(x, 0, None, None, 1).sum() + np.std(x, None, None, None, 1) + x.var(1, None, None, 0, True).sum()
    b = np.sum(x, 0, None, None, True) * np.mean(x, -1, None, None, True) + np.prod(x, 1, None, None, True)
    c = np.max(x, 0, None, True) + x.min(1, None, True) + np.cumsum(x, 0, None, None)
    return a + np.sum(b ** 2) + np.sum(c * c)


def dots_with_a_scalar(x, v, a):
    # np.dot with a 0-d operand scales the other one (a is a 0-d array, np.sum(x) a numpy scalar)
    s = np.sum(x)
    return np.sum(np.dot(s, v) ** 2) + np.sum(np.dot(v, a) * v) + np.dot(a, 2.0) * np.dot(x[0], a)

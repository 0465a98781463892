"""Loop programs that astjit compiles into one kernel each: scalar-indexed nests, `while` loops, row and
slice statements, calls of your own functions, sums and dot products of rows. See how one runs with
``astjit show examples/loop_programs.py:heat``; ``benchmarks/loops.py`` times them against plain Python
and numba, and the tests check them against plain Python.
"""

import math

import numpy as np


def recurrence(x, y, a):
    for i in range(1, len(x)):
        y[i] = a * y[i - 1] + (1 - a) * x[i]
    return y


def jacobi(u, v):
    n, m = u.shape
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            v[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
    return v


def pairwise(points, d):
    n = points.shape[0]
    for i in range(n):
        for j in range(n):
            acc = 0.0
            for k in range(points.shape[1]):
                diff = points[i, k] - points[j, k]
                acc += diff * diff
            d[i, j] = math.sqrt(acc)
    return d


def histogram(values, counts, lo, width):
    for i in range(len(values)):
        b = int((values[i] - lo) / width)
        if 0 <= b < len(counts):
            counts[b] += 1
    return counts


def forward_substitution(L, b, x):
    n = L.shape[0]
    for i in range(n):
        s = b[i]
        for j in range(i):
            s -= L[i, j] * x[j]
        x[i] = s / L[i, i]
    return x


def convolve(signal, taps, out):
    n, k = len(signal), len(taps)
    for i in range(n - k + 1):
        acc = 0.0
        for j in range(k):
            acc += signal[i + j] * taps[j]
        out[i] = acc
    return out


def life(grid, new):
    n, m = grid.shape
    for i in range(n):
        for j in range(m):
            alive = (grid[(i - 1) % n, (j - 1) % m] + grid[(i - 1) % n, j] + grid[(i - 1) % n, (j + 1) % m]
                     + grid[i, (j - 1) % m] + grid[i, (j + 1) % m]
                     + grid[(i + 1) % n, (j - 1) % m] + grid[(i + 1) % n, j] + grid[(i + 1) % n, (j + 1) % m])
            if grid[i, j] == 1 and (alive == 2 or alive == 3) or grid[i, j] == 0 and alive == 3:
                new[i, j] = 1
            else:
                new[i, j] = 0
    return new


def life_offsets(grid, new):
    n, m = grid.shape
    for i in range(n):
        for j in range(m):
            alive = 0
            for di in (-1, 0, 1):
                for dj in (-1, 0, 1):
                    if di != 0 or dj != 0:
                        alive += grid[(i + di) % n, (j + dj) % m]
            new[i, j] = 1 if alive == 3 or (alive == 2 and grid[i, j] == 1) else 0
    return new


def decay(y, h, t_end):
    t = 0.0
    while t < t_end:
        y = y + h * (-0.5 * y + math.sin(t))
        t += h
    return y


def bisect_rows(m, x, out):
    for r in range(m.shape[0]):
        lo, hi = 0, m.shape[1]
        while lo < hi:
            mid = (lo + hi) // 2
            if m[r, mid] < x[r]:
                lo = mid + 1
            else:
                hi = mid
        out[r] = lo
    return out


def newton(x0, target, tol):
    x = x0
    while abs(x * x - target) > tol:
        x = x - (x * x - target) / (2.0 * x)
    return x


def affine_rows(a, out):
    for i in range(a.shape[0]):
        out[i] = a[i] * 2.0 + 1.0
    return out


def scatter_rows(a, w, c):
    for i in range(a.shape[0]):
        c[i % c.shape[0], :] += w[i] * np.sqrt(np.abs(a[i])) - a[i] ** 2
    return c


def dist(x1, y1, x2, y2):
    dx = x2 - x1
    dy = y2 - y1
    return math.sqrt(dx * dx + dy * dy)


def total_distance(x, y):
    total = 0                                  # an int, then floats
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            total += dist(x[i], y[i], x[j], y[j])
    return total


def weighted_sum(a, w):
    total = 0
    for i in range(a.shape[0]):
        total += a[i] * w
    return total


def heat(u, steps, alpha):
    for _ in range(steps):
        u[1:-1] = u[1:-1] + alpha * (u[:-2] - 2 * u[1:-1] + u[2:])
    return u


def heat2d(u, steps, c):
    for _ in range(steps):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + c * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                                             - 4 * u[1:-1, 1:-1])
    return u


def moving_sums(a, w, out):
    for i in range(a.shape[0] - w + 1):
        out[i] = a[i:i + w].sum()
    return out


def oscillators(x, v, dt, steps):
    for _ in range(steps):                   # whole arrays rebound each step: local arrays of the kernel
        acc = -x - 0.1 * v
        v = v + dt * acc
        x = x + dt * v
    return x + v


def oscillators_in_place(x, v, dt, steps):
    for _ in range(steps):                   # the caller's x and v updated in place
        acc = -x - 0.1 * v
        v += dt * acc
        x += dt * v
    return x


def leapfrog(x, v, dt, steps):
    for _ in range(steps):                   # every value first, then both names rebound
        x, v = x + dt * v, v - dt * x
    return x, v


def row_sums(a, out):
    for i in range(a.shape[0]):
        out[i] = a[i].sum()
    return out


def exp_rows(a, out):
    for i in range(a.shape[0]):
        out[i] = np.exp(a[i])
    return out


def bucket_rows(a, width, out):
    for i in range(a.shape[0]):
        out[i] = a[i] // width
    return out


def row_peaks(a, at, top):
    for i in range(a.shape[0]):
        at[i] = np.argmax(a[i])
        top[i] = a[i].max()
    return at, top


def first_above(a, v):
    """A search that returns from inside the loop."""
    for i in range(len(a)):
        if a[i] > v:
            return i
    return -1


def is_sorted(a):
    for i in range(1, len(a)):
        if a[i - 1] > a[i]:
            return False
    return True


def item_sum(a):
    """A loop over an array's items."""
    s = 0.0
    for x in a:
        s += x
    return s


def zip_dot(a, b):
    s = 0.0
    for i, (x, y) in enumerate(zip(a, b)):
        s += x * y * (i % 3)
    return s


def escape(cr, ci, max_iter):
    """Escape time of one point of the Mandelbrot set: a helper with a loop and a return inside it."""
    zr = 0.0
    zi = 0.0
    for n in range(max_iter):
        if zr * zr + zi * zi > 4.0:
            return n
        zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
    return max_iter


def mandelbrot(img, max_iter):
    h, w = img.shape
    for y in range(h):
        for x in range(w):
            img[y, x] = escape(-2.0 + 3.0 * x / w, -1.5 + 3.0 * y / h, max_iter)
    return img


def crc16(data):
    """CRC-16 of bytes, bit by bit: shifts and masks of a Python int."""
    crc = 0xFFFF
    for b in data:
        cur = 0xFF & b
        for _ in range(8):
            if (crc & 0x0001) ^ (cur & 0x0001):
                crc = (crc >> 1) ^ 0x8408
            else:
                crc >>= 1
            cur >>= 1
    return crc


def bubble_sort(a):
    """Element swaps: every value first, then each target, left to right."""
    n = len(a)
    for i in range(n):
        for j in range(n - 1 - i):
            if a[j] > a[j + 1]:
                a[j], a[j + 1] = a[j + 1], a[j]
    return a


def sieve(n):
    """A ``while`` whose trips run a loop of their own: the kernel runs from the first trip."""
    is_prime = np.ones(n + 1, dtype=np.bool_)
    is_prime[:2] = False
    i = 2
    while i * i <= n:
        if is_prime[i]:
            for j in range(i * i, n + 1, i):
                is_prime[j] = False
        i += 1
    return is_prime


def clip_items(a, lo, hi, out):
    """``x.size`` as the range."""
    for i in range(a.size):
        v = a[i]
        if v < lo:
            v = lo
        elif v > hi:
            v = hi
        out[i] = v
    return out


def angle_bins(x, y, counts):
    """``math.atan2``, ``math.pi`` and ``math.floor``: the C library's functions, as CPython's."""
    nbins = counts.shape[0]
    for i in range(len(x)):
        k = math.floor((math.atan2(y[i], x[i]) + math.pi) / (2 * math.pi) * nbins)
        counts[min(k, nbins - 1)] += 1
    return counts


def peaks(a):
    """Indices collected in a list: the kernel keeps them and the runner appends them after the loop."""
    found = []
    for i in range(1, len(a) - 1):
        if a[i] > a[i - 1] and a[i] > a[i + 1]:
            found.append(i)
    return found


def clip_and_collect(a, lo):
    """A list that only counts what it collected."""
    kept = []
    total = 0.0
    for i in range(len(a)):
        v = a[i] * 2.0
        if v < lo:
            v = lo
        total = total + v
        kept.append(i)
    return total, len(kept)


def running_max(a):
    """``max`` of a Python float and numpy elements: the result's type is the winner's."""
    m = -math.inf
    for i in range(len(a)):
        m = max(m, a[i])
    return m


def positive_sum(a):
    """A conditional sum from a Python float: ``s`` becomes a numpy float64 at the first element added,
    on a branch random data cannot predict."""
    s = 0.0
    for i in range(a.shape[0]):
        if a[i] > 0.0:
            s += a[i]
    return s


def reciprocals(a, out):
    """A Python float divided: a zero raises ZeroDivisionError, so each position checks its value."""
    for i in range(a.shape[0]):
        out[i] = 1.0 / float(a[i])
    return out


def back_substitution(upper, b):
    """``reversed(range(n))``: counting down in the kernel."""
    n = upper.shape[0]
    x = np.zeros(n)
    for i in reversed(range(n)):
        s = b[i]
        for j in range(i + 1, n):
            s -= upper[i, j] * x[j]
        x[i] = s / upper[i, i]
    return x


def quantize(a, step, out):
    """``round``, ``divmod`` and a ``np.float32`` cast, with a helper defined in the function."""
    def wrap(v):
        return v - 2.0 * step if v > step else v

    for i in range(len(a)):
        q, r = divmod(round(a[i] / step), 16)
        out[i] = np.float32(wrap(q * step + r))
    return out


def cholesky(a):
    """Dot products of rows (``np.dot``): numpy's own BLAS function, called from the kernel."""
    a[0, 0] = np.sqrt(a[0, 0])
    for i in range(1, a.shape[0]):
        for j in range(i):
            a[i, j] -= np.dot(a[i, :j], a[j, :j])
            a[i, j] /= a[j, j]
        a[i, i] -= np.dot(a[i, :i], a[i, :i])
        a[i, i] = np.sqrt(a[i, i])
    return a


def lower_solve(lower, b, x):
    """``@`` of part of a row and part of a vector: a triangular solve."""
    for i in range(x.shape[0]):
        x[i] = (b[i] - lower[i, :i] @ x[:i]) / lower[i, i]
    return x


def gauss_seidel(a, b, x, sweeps):
    """``.dot`` of the parts of a row before and after the diagonal."""
    n = len(b)
    for _ in range(sweeps):
        for i in range(n):
            s = a[i, :i].dot(x[:i]) + a[i, i + 1:].dot(x[i + 1:])
            x[i] = (b[i] - s) / a[i, i]
    return x


def wave(u_prev, u, u_next, c2, steps):
    """A three-way rotation of array names at the end of each time step: no array is copied."""
    for _ in range(steps):
        u_next[1:-1] = 2 * u[1:-1] - u_prev[1:-1] + c2 * (u[2:] - 2 * u[1:-1] + u[:-2])
        u_prev, u, u_next = u, u_next, u_prev
    return u


def heat_swap(u, v, alpha, steps):
    """Ping-pong buffers in a scalar loop nest."""
    n = u.shape[0]
    for _ in range(steps):
        for i in range(1, n - 1):
            v[i] = u[i] + alpha * (u[i - 1] - 2 * u[i] + u[i + 1])
        u, v = v, u
    return u


def horner(coeffs, x, out):
    """A tuple of coefficients, read by the kernel."""
    for k in range(x.shape[0]):
        acc = 0.0
        for c in coeffs:
            acc = acc * x[k] + c
        out[k] = acc
    return out


def rhs(t, y):
    return -0.5 * y + math.sin(t)


def rk4(y0, t0, t1, n):
    """Four calls of a helper per step, each reading the last one's result."""
    h = (t1 - t0) / n
    y = y0
    t = t0
    for _ in range(n):
        k1 = rhs(t, y)
        k2 = rhs(t + h / 2, y + h / 2 * k1)
        k3 = rhs(t + h / 2, y + h / 2 * k2)
        k4 = rhs(t + h, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t = t + h
    return y


def pairwise_rows(X, D):
    """A difference of two rows bound to a name: the kernel computes its elements as they are read."""
    for i in range(X.shape[0]):
        for j in range(X.shape[0]):
            d = X[i] - X[j]
            D[i, j] = np.sqrt(np.sum(d * d))
    return D


def row_norms(a, out):
    """np.linalg.norm of each row as it lies: numpy hands a contiguous row to BLAS without a copy."""
    for i in range(a.shape[0]):
        out[i] = np.linalg.norm(a[i])
    return out


def pairwise_norms(X, D):
    """np.linalg.norm of a difference of rows: numpy's BLAS dot of the row with itself, square-rooted."""
    for i in range(X.shape[0]):
        for j in range(i + 1, X.shape[0]):
            d = np.linalg.norm(X[i] - X[j])
            D[i, j] = d
            D[j, i] = d
    return D


def slice_sieve(n):
    """Crossing out multiples by slices, up to the square root of ``n`` (a Python int's float power)."""
    is_prime = np.ones(n + 1, dtype=np.bool_)
    is_prime[:2] = False
    for i in range(2, int(n ** 0.5) + 1):
        if is_prime[i]:
            is_prime[i * i::i] = False
    return is_prime


def scaled_int32_rows(a, k, out):
    """int32 rows beside a Python int: numpy checks the int fits int32, then computes in int32."""
    for i in range(a.shape[0]):
        out[i] = a[i] * k + 1
    return out


def rows_over(a, t, out):
    """Which rows hold an element above ``t`` and which are all nonzero: numpy bools per row."""
    for i in range(a.shape[0]):
        out[i] = np.any(a[i] > t) and a[i].all()
    return out


def nbody_step(pos, vel, mass, dt, steps):
    """Rows of positions, their differences and a power of a distance, in a time loop."""
    acc = np.zeros_like(pos)
    for _ in range(steps):
        acc[:] = 0.0
        for i in range(pos.shape[0]):
            for j in range(pos.shape[0]):
                if i != j:
                    d = pos[j] - pos[i]
                    r = math.sqrt(d[0] ** 2 + d[1] ** 2 + d[2] ** 2)
                    acc[i] += mass[j] * d / r ** 3
        vel += dt * acc
        pos += dt * vel
    return pos


def density(xs, ys, points, radius):
    """A loop over the rows of an array (``for p in points``), each read by index."""
    out = np.zeros((len(xs), len(ys)))
    for i in range(len(xs)):
        for j in range(len(ys)):
            for p in points:
                dist = math.sqrt((xs[i] - p[0]) ** 2 + (ys[j] - p[1]) ** 2)
                if dist < radius:
                    out[i, j] += p[2] / (1.0 + dist)
    return out


def distance(a, b):
    d = a - b
    return math.sqrt(np.dot(d, d))


def nearest_center(X, C, out):
    """Rows passed to a helper, whose dot product of their difference goes to BLAS."""
    for i in range(X.shape[0]):
        best = math.inf
        for c in range(C.shape[0]):
            dist = distance(X[i], C[c])
            if dist < best:
                best = dist
                out[i] = c
    return out


def count_true(mask):
    """A count under a test (a Python int) and a sum of bools (a Python int, then a numpy int64)."""
    c = 0
    t = 0
    for i in range(len(mask)):
        if mask[i]:
            c += 1
        t += mask[i]
    return c, t


class Rod:
    """State kept on an object, as a simulation class keeps it."""

    def __init__(self, u, alpha):
        self.n = len(u)
        self.alpha = alpha
        self.u = u
        self.v = np.zeros_like(u)


def rod_step(rod):
    """A loop reading the attributes of an object (``rod.alpha``, ``rod.u[i]``)."""
    for i in range(1, rod.n - 1):
        rod.v[i] = rod.u[i] + rod.alpha * (rod.u[i - 1] - 2 * rod.u[i] + rod.u[i + 1])
    return rod.v


def polar_bins(x, y, counts):
    """math.isnan, math.hypot and np.clip on elements, an int() index."""
    for i in range(len(x)):
        if math.isnan(x[i]) or math.isnan(y[i]):
            continue
        r = np.clip(math.hypot(x[i], y[i]), 0.0, 3.5)
        counts[int(r)] += 1
    return counts


def hash_codes(a):
    """Shifts, xor and ~ of Python ints, kept to 32 bits."""
    h = 0
    for i in range(len(a)):
        h = ((h << 5) ^ int(a[i]) ^ ~i) & 0xFFFFFFFF
    return h


def alternating_pi(n):
    """An int power of -1 to a counter's power."""
    s = 0.0
    for k in range(n):
        s += (-1) ** k / (2 * k + 1)
    return 4 * s


def pivot_rows(A, p):
    """The index of a column's largest magnitude below the diagonal, as a pivoting step finds it."""
    for k in range(A.shape[0]):
        p[k] = np.argmax(np.abs(A[k:, k])) + k
    return p


def dtw(s, t):
    """Dynamic time warping: ``min`` of three neighbours, a choice on random data (a select, not a branch)."""
    n, m = len(s), len(t)
    D = np.full((n + 1, m + 1), np.inf)
    D[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            D[i, j] = abs(s[i - 1] - t[j - 1]) + min(D[i - 1, j], D[i, j - 1], D[i - 1, j - 1])
    return D[n, m]


def lorenz(x, y, z):
    return 10.0 * (y - x), x * (28.0 - z) - y, x * y - 8.0 / 3.0 * z


def euler_lorenz(x, y, z, h, n):
    """A helper returning a tuple, unpacked at the call."""
    for _ in range(n):
        dx, dy, dz = lorenz(x, y, z)
        x, y, z = x + h * dx, y + h * dy, z + h * dz
    return x, y, z


def lorenz_of_state(s):
    x, y, z = s
    return (10.0 * (y - x), x * (28.0 - z) - y, x * y - 8.0 / 3.0 * z)


def rk4_lorenz(s0, h, n, out):
    """A state carried as a tuple held in a name, its items read by constant indices: RK4."""
    s = s0
    for i in range(n):
        k1 = lorenz_of_state(s)
        k2 = lorenz_of_state((s[0] + h / 2 * k1[0], s[1] + h / 2 * k1[1], s[2] + h / 2 * k1[2]))
        k3 = lorenz_of_state((s[0] + h / 2 * k2[0], s[1] + h / 2 * k2[1], s[2] + h / 2 * k2[2]))
        k4 = lorenz_of_state((s[0] + h * k3[0], s[1] + h * k3[1], s[2] + h * k3[2]))
        s = (s[0] + h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]),
             s[1] + h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1]),
             s[2] + h / 6 * (k1[2] + 2 * k2[2] + 2 * k3[2] + k4[2]))
        out[i, 0], out[i, 1], out[i, 2] = s
    return s[0], s[1], s[2]


class SingularMatrix(ValueError):
    pass


def solve_in_place(A, b):
    """Gaussian elimination with partial pivoting that raises on a zero pivot, then back substitution."""
    n = A.shape[0]
    for k in range(n):
        p = k
        for r in range(k + 1, n):
            if abs(A[r, k]) > abs(A[p, k]):
                p = r
        if A[p, k] == 0.0:
            raise SingularMatrix(f"no pivot in column {k}")
        for c in range(n):
            A[k, c], A[p, c] = A[p, c], A[k, c]
        b[k], b[p] = b[p], b[k]
        for r in range(k + 1, n):
            f = A[r, k] / A[k, k]
            for c in range(k, n):
                A[r, c] -= f * A[k, c]
            b[r] -= f * b[k]
    for k in range(n - 1, -1, -1):
        s = b[k]
        for c in range(k + 1, n):
            s -= A[k, c] * b[c]
        b[k] = s / A[k, k]
    return b


def neumaier_sum(x):
    """A compensated sum: ``abs`` of a float that is a Python float first and numpy's after."""
    s = 0.0
    c = 0.0
    for i in range(len(x)):
        t = s + x[i]
        if abs(s) >= abs(x[i]):
            c += (s - t) + x[i]
        else:
            c += (x[i] - t) + s
        s = t
    return s + c


def int_horner(coef, x):
    """An int that is a Python int until the first ``+ c`` makes it numpy's int64."""
    acc = 0
    for c in coef:
        acc = acc * x + c
    return acc


def mandelbrot_complex(xs, ys, limit, out):
    """Escape times of the Mandelbrot set with Python's complex numbers (pairs of floats in the kernel)."""
    for i in range(len(ys)):
        for j in range(len(xs)):
            c = complex(xs[j], ys[i])
            z = 0j
            n = 0
            while abs(z) <= 2.0 and n < limit:
                z = z * z + c
                n += 1
            out[i, j] = n
    return out


def power_spectrum(x, power):
    """|DFT|^2 of a real signal, bin by bin: a sum that is a Python complex first and numpy's after."""
    n = len(x)
    for k in range(len(power)):
        s = 0j
        for t in range(n):
            angle = -2.0 * math.pi * k * t / n
            s += x[t] * complex(math.cos(angle), math.sin(angle))
        power[k] = s.real * s.real + s.imag * s.imag
    return power


def event_times(x0, rates, rnd, tmax):
    """A Gillespie simulation of a birth-death process: a while loop appending to a list, with a time
    that is a Python float until the first step makes it numpy's."""
    x = x0
    t = 0.0
    k = 0
    times = []
    while t < tmax and k < len(rnd) // 2:
        a1 = rates[0] * x
        a0 = a1 + rates[1]
        if a0 <= 0:
            break
        t += -math.log(rnd[2 * k]) / a0
        x += -1 if rnd[2 * k + 1] * a0 < a1 else 1
        times.append(t)
        k += 1
    return times


def last_below(a, limit):
    """A search whose variable is read after the loop (unbound for an empty array, as in Python)."""
    for i in range(len(a)):
        if a[i] >= limit:
            break
    return i


def primes_for_else(n, out):
    """Trial division with ``for ... else``: the else runs where no divisor broke the loop."""
    k = 0
    for m in range(2, n):
        for d in range(2, m):
            if d * d > m:
                break
            if m % d == 0:
                break
        else:
            out[k] = m
            k += 1
    return k


def scaled(x, scale=2.0, shift=0.0):
    return x * scale + shift


def matmul_chained(A, B, C):
    """Chained indexing ``A[i][k]`` and a helper called with a keyword and a default."""
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            s = 0.0
            for k in range(A.shape[1]):
                s += A[i][k] * B[k][j]
            C[i][j] = scaled(s, shift=1.0)
    return C


def list_total(xs):
    """A cheap loop over a Python list of floats: it runs as written (converting the list for a kernel
    costs more than the loop's own Python)."""
    tot = 0.0
    for v in xs:
        if v > 0.5:
            tot += v * 2.0
        else:
            tot -= v
    return tot


def tanh_steps(u, steps):
    """A whole-array float64 tanh at each step: numpy's vectorized tanh, where a kernel would call the C
    library per element, keeps the loop in Python on CPUs where numpy's loop is vectorized."""
    for _ in range(steps):
        u = np.tanh(u) * 0.9 + 0.1
    return u

"""Control flow on tensors.

* tt.while_loop with a single loop variable and with a nested structure (a tuple holding a
  namedtuple) as its state;
* tt.cond choosing between two branch functions;
* Python `for`/`continue` and `while`/`if` over tensors inside a tt.function, converted by
  autograph (tt.autograph.to_code shows the converted source);
* a tt.TensorArray of dynamic size filled in a loop and stacked.

The values asserted for the documented inputs (10; 32 and 64; 34; 42; 111 steps for 27;
the first seven Fibonacci numbers) are those TensorFlow's guides and API reference give;
other inputs are checked against plain Python versions of the same loops.
"""

import collections

import numpy as np

import tracer as tt

# a counter
(count,) = tt.while_loop(lambda n: tt.less(n, 10), lambda n: (tt.add(n, 1),), [tt.constant(0)])
assert count.numpy() == 10

# a nested loop state: a step counter and a pair updated as (a + b, a - b)
Pair = collections.namedtuple("Pair", ["a", "b"])


def pair_loop(start_a, start_b, steps):
    def keep_going(step, pair):
        return step < steps

    def update(step, pair):
        return step + 1, Pair(pair.a + pair.b, pair.a - pair.b)

    state = (tt.constant(0), Pair(tt.constant(start_a), tt.constant(start_b)))
    _, final = tt.while_loop(keep_going, update, state)
    assert isinstance(final, Pair)  # the structure comes back as it went in
    return int(final.a.numpy()), int(final.b.numpy())


def pair_loop_python(a, b, steps):
    for _ in range(steps):
        a, b = a + b, a - b
    return a, b


assert pair_loop(1, 2, 10) == (32, 64)
for a, b, steps in [(3, -1, 4), (0, 5, 7)]:
    assert pair_loop(a, b, steps) == pair_loop_python(a, b, steps)


# tt.cond picks one of two functions by a tensor predicate
def pick(left, right):
    lhs, rhs = tt.constant(left), tt.constant(right)
    return tt.cond(tt.less(lhs, rhs), lambda: tt.multiply(lhs, 17), lambda: tt.add(rhs, 23))


assert pick(2, 5).numpy() == 34
assert pick(9, 5).numpy() == 5 + 23


# Python loops inside tt.function, run on tensors
@tt.function
def even_total(values):
    """The sum of the even entries, and how many there were; odd ones are skipped."""
    total, found = 0, 0
    for item in values:
        if item % 2 == 1:
            continue
        total += item
        found += 1
    return total, found


total, found = even_total(tt.constant([10, 12, 15, 20]))
assert total.numpy() == 42 and found.numpy() == 3
for values in ([1, 3, 5], [4, -6, 7, -3, 8, 0]):
    evens = [v for v in values if v % 2 == 0]
    total, found = even_total(tt.constant(values))
    assert (total.numpy(), found.numpy()) == (sum(evens), len(evens))


@tt.function
def hailstone_length(n):
    """How many halving or 3n+1 steps take n down to 1."""
    count = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        count += 1
    return count


def hailstone_length_python(n):
    count = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        count += 1
    return count


assert hailstone_length(tt.constant(27)).numpy() == 111
for n in [1, 6, 97]:
    assert hailstone_length(tt.constant(n)).numpy() == hailstone_length_python(n)
converted = tt.autograph.to_code(hailstone_length.python_function)
assert isinstance(converted, str) and "def hailstone_length" in converted


# a TensorArray that grows as the loop writes to it
@tt.function
def fibonacci_prefix(length):
    seq = tt.TensorArray(tt.float32, size=0, dynamic_size=True)
    seq = seq.unstack([0.0, 1.0])
    for k in range(2, length):
        seq = seq.write(k, seq.read(k - 2) + seq.read(k - 1))
    return seq.stack()


def fibonacci_prefix_python(length):
    seq = [0.0, 1.0]
    while len(seq) < length:
        seq.append(seq[-2] + seq[-1])
    return seq


np.testing.assert_array_equal(fibonacci_prefix(7).numpy(), [0.0, 1.0, 1.0, 2.0, 3.0, 5.0, 8.0])
np.testing.assert_array_equal(fibonacci_prefix(12).numpy(), fibonacci_prefix_python(12))
print("control flow: ok")

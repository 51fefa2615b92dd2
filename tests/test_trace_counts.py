"""How many times a branch's Python body runs while a function is traced (issue 46).

TensorFlow 2.21 traces each branch of a tensor `if` once, also when it holds a `tf.print`,
however deep the nesting, and a `for i in tf.range(n)` body once. Observed with
`/tmp/tfenv/bin/python` on the functions below (tracer's `tt` replaced by `tensorflow`):
every count is 1, and fizzbuzz runs 5 bodies in all (the loop's and its 4 branches').
Before the fix tracer traced a branch that prints once more to carry the print stream,
so the counts doubled with each level (fizzbuzz: 46).
"""

import collections

import tracer as tt

counts = collections.Counter()


def hit(key):
    counts[key] += 1  # a call: autograph does not make the counter a loop or branch variable


@tt.function
def one(x):
    if x > 0:
        hit("true")
        tt.print("pos", x)
    else:
        hit("false")
        tt.print("neg", x)
    return x


@tt.function
def two(x):
    if x > 0:
        hit("outer")
        if x > 5:
            hit("inner.true")
            tt.print("big", x)
        else:
            hit("inner.false")
            tt.print("small", x)
    else:
        hit("else")
        tt.print("neg", x)
    return x


@tt.function
def three(x):
    if x > 0:
        hit("l1")
        if x > 5:
            hit("l2")
            if x > 10:
                hit("l3.true")
                tt.print("huge", x)
            else:
                hit("l3.false")
                tt.print("big", x)
        else:
            hit("l2.false")
            tt.print("small", x)
    else:
        hit("else")
        tt.print("neg", x)
    return x


@tt.function
def buzz(n):
    for i in tt.range(n):
        hit("body")
        if i % 6 == 0:
            hit("six")
            tt.print("SixSix")
        elif i % 2 == 0:
            hit("two")
            tt.print("Two")
        elif i % 3 == 0:
            hit("three")
            tt.print("Three")
        else:
            hit("other")
            tt.print(i)
    return n


def _run(function, *arguments):
    counts.clear()
    for argument in arguments:
        function(tt.constant(argument))
    return dict(counts)


def test_if_with_print_traces_each_branch_once(capsys):
    assert _run(one, 3, -3) == {"true": 1, "false": 1}
    assert capsys.readouterr().err == "pos 3\nneg -3\n"


def test_two_levels(capsys):
    assert _run(two, 7, 2, -1) == {"outer": 1, "inner.true": 1, "inner.false": 1, "else": 1}
    assert capsys.readouterr().err == "big 7\nsmall 2\nneg -1\n"


def test_three_levels(capsys):
    expected = {"l1": 1, "l2": 1, "l3.true": 1, "l3.false": 1, "l2.false": 1, "else": 1}
    assert _run(three, 11, 7, 1, -1) == expected
    assert capsys.readouterr().err == "huge 11\nbig 7\nsmall 1\nneg -1\n"


def test_fizzbuzz_like_loop(capsys):
    expected = {"body": 1, "six": 1, "two": 1, "three": 1, "other": 1}
    assert _run(buzz, 8) == expected
    assert sum(expected.values()) == 5
    assert capsys.readouterr().err == "SixSix\n1\nTwo\nThree\nTwo\n5\nSixSix\n7\n"
    buzz(tt.constant(8))  # traced once: runs again without tracing, printing again
    assert capsys.readouterr().err == "SixSix\n1\nTwo\nThree\nTwo\n5\nSixSix\n7\n"

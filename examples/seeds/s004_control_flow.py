"""Python loops and branches around recorded operations: the tape sees only the operations that
actually ran (seed 004, the older eager-mode tutorial, "Recording control flow").

In the seed the `return` sits inside the loop by mistake, which would make both gradients None
instead of the 12.0 and 4.0 it asserts; here the product is returned after the loop.
"""

import tracer as tt


def repeated_product(base, steps):
    """base multiplied in once for each of the steps numbered 2, 3 and 4 that run."""
    product = 1.0
    for step in range(steps):
        if step in (2, 3, 4):
            product = tt.multiply(product, base)
    return product


def slope(point, steps):
    with tt.GradientTape() as tape:
        tape.watch(point)
        value = repeated_product(point, steps)
    return tape.gradient(value, point)


two = tt.convert_to_tensor(2.0)

assert slope(two, 6).numpy() == 12.0  # two**3: 3 * 2**2
assert slope(two, 4).numpy() == 4.0  # two**2: 2 * 2

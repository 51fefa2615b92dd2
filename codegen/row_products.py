"""The C of a loop kernel that computes the product in its body (tracer/passes/row_products.py)
a block of rows at a time (templates/row_products.c.j2).

Each block's product is made by what makes the product standing alone, on those rows: the
installed `blocked_products` where codegen/blocked_products.py gives it the product, else
the BLAS's GEMM, else the plain loops of templates/matmul.c.j2. The installed kernel and the
loops sum an element's terms in the same order whatever rows they are given; a GEMM does
where the first row is a multiple of its kernel's block of rows (OpenBLAS's on x86: 4 to 32
rows, 24 for float32 on AVX2), so the blocks start at multiples of ROWS_STEP, and the
product's values are those of the product in one GEMM call (on one thread: the parts of
templates/gemm_parts.c.j2, cut at multiples of 16 rows, are not always so). The kernel's
loops then read the block while it is in the cache, and the whole product is never written.

The blocks are handed out one at a time to as many parts as the module may use threads,
each with its block's buffer: a thread that another process keeps off its core takes fewer.
"""

from codegen import templates
from codegen.ctypes import storage
from codegen.loops import BLOCK_END, BLOCK_FIRST, PRODUCT, body_product
from tracer.ir import format_location

# the bytes of a block's product: it stays in the second-level cache while the loops read it
BLOCK_BYTES = 1 << 19
ROWS_STEP = 96  # a block's rows are a multiple of this: of each GEMM kernel's block of rows


def kernel_text(node, name, rows_kernel, lowering):
    """(the C of `node`'s kernel `name`, which returns an error code): `rows_kernel` (a
    LoopNest over a block's rows, reading PRODUCT) and the function that computes each
    block's product and calls it."""
    product = body_product(node)
    body = node.attrs["kernel"].body
    a, b = (f"p{body.inputs.index(operand)}" for operand in product.inputs)
    ta = product.attrs.get("transpose_a", False)
    tb = product.attrs.get("transpose_b", False)
    k = product.inputs[0].shape[0 if ta else 1]
    m, n = product.shape
    rows = max(ROWS_STEP, BLOCK_BYTES // (n * product.dtype.itemsize) // ROWS_STEP * ROWS_STEP)
    T = storage(product.dtype)
    params = list(rows_kernel.params)
    rows_kernel.name = f"{name}_rows"
    rows_kernel.dim_params += f"const int64_t {BLOCK_FIRST}, const int64_t {BLOCK_END}, "
    rows_kernel.params = [(T, PRODUCT), *params]
    where = format_location(product.location)
    where = f" (at {where})" if where else ""
    error = lowering.plan.error(MemoryError, f"matmul: no memory for a block of its rows{where}")
    values = dict(
        name=name,
        rows_kernel=templates.render("loops.c.j2", k=rows_kernel),
        comment=rows_kernel.comment,
        dim_params=lowering.dim_params,
        dims=lowering.dim_args,
        params=params,
        outs=rows_kernel.outs,
        T=T,
        m=m,
        n=n,
        k=k,
        rows=min(rows, m),
        a=a,
        b=b,
        error=error,
        first=BLOCK_FIRST,
        end=BLOCK_END,
        product=PRODUCT,
        call=_block_product(product, a, b, ta, tb, m, n, k, lowering),
    )
    return templates.render("row_products.c.j2", **values), True


def _block_product(product, a, b, ta, tb, m, n, k, lowering):
    """The C statement that computes the product's rows BLOCK_FIRST to BLOCK_END into
    PRODUCT (C-contiguous, n columns), on the calling thread, as the product standing alone
    computes them."""
    rows = f"{BLOCK_END} - {BLOCK_FIRST}"
    form = lowering.target.form_for(product.op)
    if form.template_for(product) == "installed_kernel.c.j2":
        call = form.context(product, lowering.blas)
        geometry = list(call["geometry"])
        geometry[0] = rows
        geometry[7] = "INT64_MAX"  # (the multiply-adds from which it uses threads: none)
        step = geometry[3]  # between op(a)'s rows
        variable, index = call["variable"], call["index"]
        return (
            f"{{ const int64_t geometry[{len(geometry)}] = {{ {', '.join(geometry)} }}; "
            f"(({call['function_type']}){variable}[{index}])"
            f"(geometry, {a} + {BLOCK_FIRST} * {step}, {b}, {PRODUCT}); }}"
        )
    context = form.default.context(product, lowering.blas)
    a_rows = f"{BLOCK_FIRST}" if ta else f"{BLOCK_FIRST} * {k}"
    if context.get("blas") and not context.get("split_k"):
        gemm = f"{lowering.cblas['cblas']}{context['blas']}gemm"
        op_a, op_b = ("CblasTrans" if t else "CblasNoTrans" for t in (ta, tb))
        return (
            f"{gemm}(CblasRowMajor, {op_a}, {op_b}, {rows}, {n}, {k}, 1, {a} + {a_rows}, "
            f"{context['lda']}, {b}, {context['ldb']}, 0, {PRODUCT}, {n});"
        )
    left = f"{a}[p * {m} + i]" if ta else f"{a}[i * {k} + p]"
    right = f"{b}[j * {k} + p]" if tb else f"{b}[p * {n} + j]"
    return (
        f"for (int64_t i = {BLOCK_FIRST}; i < {BLOCK_END}; i++) {{ "
        f"{storage(product.dtype)} *row = {PRODUCT} + (i - {BLOCK_FIRST}) * {n}; "
        f"for (int64_t j = 0; j < {n}; j++) row[j] = 0; "
        f"for (int64_t p = 0; p < {k}; p++) {{ const {storage(product.dtype)} left = {left}; "
        f"for (int64_t j = 0; j < {n}; j++) row[j] += left * {right}; }} }}"
    )

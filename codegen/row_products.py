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
    block's product and calls it. Its sizes are the C variables m, n and k, known when the
    module runs where the graph's are not."""
    product = body_product(node)
    body = node.attrs["kernel"].body
    a, b = (f"p{body.inputs.index(operand)}" for operand in product.inputs)
    ta = product.attrs.get("transpose_a", False)
    tb = product.attrs.get("transpose_b", False)
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
        m=product.shape[0],
        n=product.shape[1],
        k=product.inputs[0].shape[0 if ta else 1],
        block_bytes=BLOCK_BYTES,
        step=ROWS_STEP,
        error=error,
        first=BLOCK_FIRST,
        end=BLOCK_END,
        product=PRODUCT,
        call=_block_product(product, a, b, ta, tb, lowering),
    )
    return templates.render("row_products.c.j2", **values), True


def _block_product(product, a, b, ta, tb, lowering):
    """The C statements that compute the product's rows BLOCK_FIRST to BLOCK_END into
    PRODUCT (C-contiguous, n columns), on the calling thread, as the product standing alone
    computes them: where its sizes are known only when the module runs, the installed
    kernel where codegen/blocked_products.py's rule takes them then, else the others."""
    form = lowering.target.form_for(product.op)
    template = form.template_for(product)
    if template == "installed_kernel.c.j2":
        call = form.context(product, lowering.blas)
        function = f"{call['variable']}[{call['index']}]"
        return _installed(call["geometry"], function, product, a, b)
    own_form = getattr(form, "default", form)  # (the C module's is `_InstalledOrTemplate`)
    own = _own(own_form.context(product, lowering.blas), product, a, b, ta, tb, lowering)
    if template != "blocked_product_at_run_time.c.j2":
        return own
    chosen = form.context(product, lowering.blas)
    function = "kernel"
    installed = _installed(chosen["geometry"], function, product, a, b)
    return (
        f"void *const kernel = {chosen['variable']}[{chosen['index']}]; "
        f"if (kernel != NULL && {chosen['condition']}) {{ {installed} }} else {{ {own} }}"
    )


def _installed(geometry, function, product, a, b):
    """The call of the installed `blocked_products` (`function`, a C pointer) on the block's
    rows, on the calling thread, from the whole product's `geometry`."""
    geometry = [str(value) for value in geometry]
    geometry[0] = f"{BLOCK_END} - {BLOCK_FIRST}"
    geometry[7] = "INT64_MAX"  # (the multiply-adds from which it uses threads: none)
    T = storage(product.dtype)
    kind = f"void (*)(const int64_t *, const {T} *, const {T} *, {T} *)"
    return (
        f"const int64_t geometry[{len(geometry)}] = {{ {', '.join(geometry)} }}; "
        f"(({kind}){function})(geometry, {a} + {BLOCK_FIRST} * ({geometry[3]}), {b}, {PRODUCT});"
    )


def _own(context, product, a, b, ta, tb, lowering):
    """The product's rows as its own template computes them: the BLAS's GEMM, or its GEMV
    for a product of one row or one column (templates/gemm_parts.c.j2's rule), else plain
    loops (the same order of terms)."""
    if context.get("blas") and not context.get("split_k"):
        blas = f"{lowering.cblas['cblas']}{context['blas']}"
        op_a, op_b = ("CblasTrans" if t else "CblasNoTrans" for t in (ta, tb))
        rows, rows_a = f"{BLOCK_END} - {BLOCK_FIRST}", f"{a} + {BLOCK_FIRST}{'' if ta else ' * k'}"
        lda, ldb = (
            f"({size} > 1 ? {size} : 1)" for size in ("m" if ta else "k", "k" if tb else "n")
        )
        one_row = (
            f"{blas}gemv(CblasRowMajor, {'CblasNoTrans' if tb else 'CblasTrans'}, "
            f"{'n, k' if tb else 'k, n'}, 1, {b}, {ldb}, {rows_a}, {lda if ta else 1}, 0, "
            f"{PRODUCT}, 1);"
        )
        one_column = (
            f"{blas}gemv(CblasRowMajor, {op_a}, {f'k, {rows}' if ta else f'{rows}, k'}, 1, "
            f"{rows_a}, {lda}, {b}, {1 if tb else ldb}, 0, {PRODUCT}, 1);"
        )
        gemm = (
            f"{blas}gemm(CblasRowMajor, {op_a}, {op_b}, {rows}, n, k, 1, {rows_a}, {lda}, {b}, "
            f"{ldb}, 0, {PRODUCT}, n > 1 ? n : 1);"
        )
        return f"if (m == 1) {one_row} else if (n == 1) {one_column} else {gemm}"
    T = storage(product.dtype)
    left = f"{a}[p * m + i]" if ta else f"{a}[i * k + p]"
    right = f"{b}[j * k + p]" if tb else f"{b}[p * n + j]"
    return (
        f"for (int64_t i = {BLOCK_FIRST}; i < {BLOCK_END}; i++) {{ "
        f"{T} *row = {PRODUCT} + (i - {BLOCK_FIRST}) * n; "
        f"for (int64_t j = 0; j < n; j++) row[j] = 0; "
        f"for (int64_t p = 0; p < k; p++) {{ const {T} left = {left}; "
        f"for (int64_t j = 0; j < n; j++) row[j] += left * {right}; }} }}"
    )

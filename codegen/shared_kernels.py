"""Kernels a loaded module lends to the modules built after it, in its process and, through
the cache's index, in later ones.

A loss and its gradient (GradBench's objective, then its gradient), a model's training and
evaluation steps: the second function's module computes much of what the first one's does,
and its C repeats the first module's kernels word for word but for their names (GradBench
gmm's gradient: 11 of its 35 kernels are its objective's). So a module offers the kernels
it keeps in blocks of their own (functions the entry point calls, codegen/units.py) through
its table `tracer_kernels`; a module lowered later in the process, where one of its kernels
would be such a function too and a loaded module offers one of the same C, calls that one
through the table the runtime gives it (`tracer_borrowed_kernels`), and compiles only the
others.

The same C: the kernel's text without `/* */` comments (which name the graph's nodes and
the user's lines), its name (and the names made from it) read as one word, compiled by the
same compiler with the same switches for the same CPU, linked with the same BLAS
(`identity`), by the same tracer code (`codegen.version.CODE_VERSION`: in another process,
the prologue's helpers a kernel calls are those of the code that wrote it). What else a
kernel's C names is the same C wherever it has the same name: the prologue's helpers,
and the functions a module writes once for its products and solves (`tr_gemm_parts_d`,
`tr_solve_halves_s`, ...), which depend on their type alone. Both modules compile that text
as a function of its own, under -ffp-contract=off, so a borrowed kernel gives the bits the
module's own would (tests/test_shared_kernels.py). A kernel that returns an error code
returns the one its C names, which is the one the borrower's plan gives that check (its own
kernel's C is the same). A kernel that names another of its module's kernels (`k<N>_...`)
is neither offered nor borrowed, nor is one that calls a function its module borrows
offered (`offered`). Not in the key: what the rest of the module declares, as the
`omp declare simd` of a libm function another op's form adds (codegen/forms.py,
`vector_declaration`); every libm call a lent kernel makes today comes from its own nodes,
whose forms declare it in every module that holds them.

A module built or loaded also writes the keys of the kernels it offers into the cache's
index (codegen/kernel_index.py): a module lowered in a later process whose C is not in the
cache, where no module it has loaded offers a kernel, loads the cached module that does (a
program edited and run again: most of its kernels are those of its last run's module).
Its C without those is tried first (`codegen.lower.lower`'s `widen`, `widened` here), so
that a module built before, which borrowed what its process offered then, is found again.

A module that borrows names the keys of what it borrows in its code (`TR_BORROWED_KEYS`),
so two modules that borrow different kernels under the same names are two modules in the
cache. A later process that finds its stored plan reads the keys from that code and uses
the plan only where modules it has loaded, or loads from the cache by its index, offer
them all; elsewhere it lowers the function again, borrowing what is offered there (or
nothing: the module then compiles every kernel, and its plan takes the stored one's place).
"""

import contextlib
import functools
import hashlib
import re
import struct
import threading

import numpy as np

from codegen import build, elf, kernel_index, templates
from codegen import units as module_units
from codegen.version import CODE_VERSION
from runtime import installed_kernels, interrupts

OFFERED = "tracer_kernels"  # a module's table of the kernels it lends
BORROWED = "tracer_borrowed_kernels"  # the table a borrowing module calls through
KEY = re.compile(r"[0-9a-f]{64}\Z")

_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_DEFINITION = re.compile(r"^TR_PART TR_NOINLINE (\w+) (\w+)\(", re.M)
_OTHER_KERNEL = re.compile(r"\bk[0-9]+_")
_offered = {}  # kernel key -> its address in a loaded module
# the arrays of addresses modules' tables point at, by their addresses: never freed
_kept = {}
_offering = set()  # id of each loaded module whose kernels are offered
_lock = threading.Lock()


def identity():
    """What a lent kernel compiles and links with (`codegen.build.build_identity`), the BLAS
    included whatever its module calls: a lent product calls the BLAS its module links."""
    return build.build_identity(uses_blas=True)


@functools.lru_cache(maxsize=1024)  # a module's kernels are read when lowered and loaded
def key(name, block, identity):
    """The key of the kernel `name` whose block of C is `block` (`units.block_text`),
    compiled under `identity`, or None where it is not lent (see the module's docstring)."""
    code = _COMMENT.sub("", block)
    definition = next((d for d in _DEFINITION.finditer(code) if d[2] == name), None)
    if definition is None or definition[1] not in ("void", "int"):
        return None
    code = code.replace(name, "KERNEL").strip()
    if _OTHER_KERNEL.search(code):
        return None
    return hashlib.sha256(f"{identity}\0{CODE_VERSION}\0{code}".encode()).hexdigest()


def borrowing(kernels, identity, from_cache=False, only=None, other_than=None):
    """(`kernels` [(C name, C text)] with each kernel a loaded module offers replaced by a
    call through the borrowed table, the keys of those kernels in the table's order, the
    array of their addresses the table is to point at: None where it borrows none). With
    `from_cache`, the cached modules that offer kernels no loaded module does are loaded
    first (`_borrow_from_cache`). With `only` (keys), only the kernels of those keys are
    borrowed, where every one of them is offered. None where the keys borrowed would be
    `other_than`'s."""
    definitions = [module_units.not_inlined(name, text) for name, text in kernels]
    keys = [
        key(name, module_units.block_text(text, definition), identity)
        if definition is not None
        else None
        for (name, text), definition in zip(kernels, definitions)
    ]
    if only is not None and not set(only) <= set(keys):
        only = None  # not this module's kernels (another BLAS: other keys)
    if from_cache and only is not None:  # their lenders first, none crowded out by others
        _borrow_from_cache(only)
    if only is not None and not all(k in _offered for k in only):
        only = None
    if from_cache and only is None:
        _borrow_from_cache(keys)
    chosen = None if only is None else set(only)
    addresses = [_offered.get(k) if chosen is None or k in chosen else None for k in keys]
    borrowed = [k for k, address in zip(keys, addresses) if address is not None]
    if borrowed == other_than:
        return None
    texts, first, slot = [], None, 0
    for (name, text), definition, address in zip(kernels, definitions, addresses):
        if address is None:
            texts.append((name, text))
            continue
        first = len(texts) if first is None else first
        texts.append((name, _call_through(name, text, definition, slot)))
        slot += 1
    if not borrowed:
        return texts, borrowed, None
    # the table's declaration before the first call through it (which is in every unit)
    declaration = templates.render("borrowed_kernels.c.j2", keys=borrowed)
    texts[first] = (texts[first][0], declaration + texts[first][1])
    return texts, borrowed, _kept_alive([a for a in addresses if a is not None])


def widened(kernels, source, borrowed, uses_blas):
    """(`borrowing` of `kernels` from the cache's modules too, the cache key of `source`),
    or None where the module of `source` (their C borrowing from this process's modules
    alone: the kernels of the keys `borrowed`) is in the cache, or where it would borrow
    nothing more. Where a module was built before for `source` borrowing from the cache's
    modules, the kernels it borrowed are borrowed again where they are offered still
    (`kernel_index.borrowed_for`): the same C, the module found again."""
    key_of_source = build.cache_key(source, uses_blas)
    if build.is_cached(key_of_source):
        return None
    before = kernel_index.borrowed_for(key_of_source)
    wider = borrowing(kernels, identity(), True, only=before, other_than=borrowed)
    return None if wider is None else (wider, key_of_source)


def _call_through(name, text, definition, slot):
    """The C of the kernel `name` (whose C is `text`, its definition `definition`) calling
    the borrowed kernel in `slot` of the table, under the comments above its definition."""
    parameters = definition[3]
    return templates.render(
        "borrowed_kernel.c.j2",
        comments=_COMMENT.findall(text[: definition.start()]),
        result=definition[1],
        name=name,
        parameters=parameters,
        slot=slot,
        arguments=[re.search(r"(\w+)\s*$", p)[1] for p in parameters.split(",")],
    )


def borrowed_in(source):
    """The keys of the kernels the module of `source` borrows, in its table's order, read
    from its code; None where they are not keys, or fewer than the table's slots it reads
    (a stored plan's source that tracer's lowering did not make)."""
    code = _COMMENT.sub("", source)
    slots = [int(slot) for slot in _SLOT.findall(code)]
    declared = _KEYS.search(code)
    keys = declared[1].split() if declared is not None else []
    if not all(map(KEY.match, keys)) or max(slots, default=-1) >= len(keys):
        return None
    return keys


_SLOT = re.compile(rf"\b{BORROWED}\[([0-9]+)\]")
_KEYS = re.compile(r'^#define TR_BORROWED_KEYS "([0-9a-f ]*)"$', re.M)


def offered(layout, identity):
    """(name, key) of each kernel a module of `layout` (codegen/units.py) offers, in the
    order of its table: those in blocks that are lent, but those that call a kernel the
    module borrows (a product's `tr_gemm_parts_d`), whose table a module loaded from the
    cache only to lend has not set."""
    calls_borrowed = _calls_borrowed([text for text, _ in layout.kernels])
    found = []
    for text, block in layout.kernels:
        definition = _DEFINITION.search(text) if block is not None else None
        if definition is not None and not calls_borrowed(text):
            lent = key(definition[2], text, identity)
            if lent is not None:
                found.append((definition[2], lent))
    return found


# a call through the borrowed table: its function's name (templates/borrowed_kernel.c.j2)
_BORROWED_CALL = re.compile(
    rf"TR_INLINE \w+ (\w+)\([^{{]*\{{\s*(?:return )?\(\(\w+ \(\*\)\([^;]*?\)\){BORROWED}\["
)


def _calls_borrowed(texts):
    """A test of a kernel's C: whether it calls a function of `texts` (a module's C, in
    parts) that calls through the borrowed table."""
    code = _COMMENT.sub("", "\n".join(t for t in texts if f"{BORROWED}[" in t))
    names = _BORROWED_CALL.findall(code)
    if not names:
        return lambda text: False
    calls = re.compile(rf"\b(?:{'|'.join(names)})\b")

    def calls_one(text):
        if not any(name in text for name in names):
            return False
        return calls.search(_COMMENT.sub("", text)) is not None

    return calls_one


def offer(module, plan, meta, uses_blas):
    """Lend the kernels of the loaded `module` of `plan` (`meta`: its build's, which names
    its cache key) to modules lowered later in this process, and through the cache's index
    to those of later processes: those its lowering listed, or for a stored plan, those its
    C's table names."""
    keys = plan.offered if plan.offered is not None else _read_offered(plan.source)
    # an index not written (unwritable, or not a file) costs compiles, nothing more
    if keys and _offer_table(module, keys) and meta.get("key") is not None:
        with contextlib.suppress(OSError, ValueError):
            kernel_index.record(meta["key"], keys, uses_blas)
    if plan.borrowed_for is not None:
        with contextlib.suppress(OSError, ValueError):
            kernel_index.record_borrowing(plan.borrowed_for, plan.borrowed)


def _offer_table(module, keys):
    """Lend the kernels of `module`'s table, whose keys are `keys`; whether it has the
    table."""
    with _lock:
        if id(module) in _offering:
            return True
        _offering.add(id(module))
    try:
        addresses = module.read_table(OFFERED, len(keys))
    except KeyError:  # no such table: a module of a source that tracer did not lower
        return False
    with _lock:
        for found, address in zip(keys, addresses):
            _offered.setdefault(found, address)
    return True


def _borrow_from_cache(keys):
    """Load the cached modules that the cache's index says offer kernels of `keys` that no
    loaded module offers, and lend theirs (codegen/kernel_index.py)."""
    with _lock:
        missing = [k for k in keys if k is not None and k not in _offered]
    for module_key, uses_blas, kernels in kernel_index.lenders(missing):
        module = build.cached(module_key, uses_blas)
        if (
            module is None
            or not _holds_table(module, len(kernels))
            or not _set_up(module)
            or not _offer_table(module, kernels)
        ):
            kernel_index.leave_out(module_key)


def _holds_table(module, length):
    """Whether the table of the loaded `module` holds `length` addresses (its symbol's
    size: an index that says more would have its table read past its end)."""
    try:
        size = elf.defined_size(module.path, OFFERED)
    except (OSError, ValueError, struct.error, IndexError, UnicodeDecodeError):
        return False
    return size == length * module.ffi.sizeof("void *")


def _set_up(module):
    """Whether `module`, loaded for its kernels alone, has what they read, as
    runtime/compiled.py sets it for a module it runs: the function its long loops call
    back (Ctrl-C), and the table of the kernels installed with tracer, where it declares
    them. A lent kernel calls no borrowed kernel (`offered`), so the module's borrowed
    table is not needed."""
    with contextlib.suppress(KeyError):  # no loop of its calls back
        module.set_watch(interrupts.watch_function(module.ffi))
    address = installed_kernels.address()
    try:
        module.set_table(installed_kernels.VARIABLE, address)
    except KeyError:  # its kernels do not call them
        return True
    return bool(address)


_TABLE = re.compile(rf"^void \*const {OFFERED}\[\] = \{{ (.*)\}};$", re.M)


def _read_offered(source):
    """The keys of the kernels in the table of `source`, read from its code (comments left
    out), or [] where one is not a kernel in a block that is lent."""
    code = _COMMENT.sub("", source)
    table = _TABLE.search(code)
    if table is None:
        return []
    blocks, compiled_with = _blocks(code), identity()
    names = re.findall(_ENTRY, table[1])
    calls_borrowed = _calls_borrowed([code])
    if any(calls_borrowed(blocks.get(name, "")) for name in names):
        return []
    keys = [key(name, blocks.get(name, ""), compiled_with) for name in names]
    return [] if None in keys else keys


_ENTRY = re.compile(r"\(void \*\)(\w+)")


def _blocks(code):
    """{name: C text} of the kernels in blocks of `code` (a module's, without comments)."""
    lines, found = code.split("\n"), {}
    k = 0
    while k < len(lines):
        if not lines[k].startswith("#if TR_IN_UNIT"):
            k += 1
            continue
        start, depth = k + 1, 1
        while depth and k + 1 < len(lines):
            k += 1
            depth += lines[k].startswith("#if") - lines[k].startswith("#endif")
        text = "\n".join(lines[start:k])
        definition = _DEFINITION.search(text)
        if definition is not None:
            found[definition[2]] = text
    return found


def lend(module, plan):
    """Point the table of the loaded `module` of `plan` at the kernels it borrows."""
    if plan.borrowed:
        module.set_table(BORROWED, plan.borrowed_table.ctypes.data)


def table_of(keys):
    """The array of the addresses of the kernels of `keys` (a stored plan's, read from its
    code), loading the cached modules that offer them where no loaded one does, or None
    where no module offers one of them."""
    _borrow_from_cache(keys)
    addresses = [_offered.get(k) for k in keys]
    return None if None in addresses else _kept_alive(addresses)


def _kept_alive(addresses):
    """The array of `addresses`, one for each such list, kept for the process: a loaded
    module, which stays loaded, may read it."""
    with _lock:
        return _kept.setdefault(tuple(addresses), np.array(addresses, np.uintp))


def forget():
    """Offer nothing loaded so far, and nothing cached (the tests: a module's C then does not
    depend on what an earlier test loaded, or other tests cached)."""
    with _lock:
        _offered.clear()
        _offering.clear()
    kernel_index.read_none()

"""How a module's C is split into translation units compiled at once.

The module marks its blocks `#if TR_IN_UNIT  /* work w at a of t */` ... `#endif`: the parts
of a long entry point, each kernel that is not inlined where it is called (TR_NOINLINE:
called from many steps), and the entry point, last. `w` is the block's estimated compile
work (about a character of a kernel's C at -O3, comments counted), `a` the middle of its
share of the module's work and `t` all of it. Compiled as u units, a block goes to unit
`a * u // t` (the cut by position), or, where that leaves the largest unit at least
PACKING_GAIN more work, the blocks are packed by size: the largest first, each to the unit with
the least work so far (a module of one heavy kernel and a few light ones: GradBench's
k-means, whose fused product-and-minimum the cut by position put with the final sum and the
entry point). Each unit's file holds only its own blocks (TR_IN_UNIT is 1: the cut is made
here). A kernel in a block is declared before every block, so that a part or a kernel
in one unit can call it from another; what is in no block (the prologue, the kernels
inlined where they are called, the step functions of compacted calls) is in every unit and
compiled where it is used. The numbers are in comments: the cache key hashes the code
without comments, so the length of the user's file name and line numbers, which the
weights count, does not change it.

The weights were measured with GCC 12 at -O3, each block of eight of the suite's modules
compiled alone after its prologue (`weight`): a character of a kernel costs about 3 us, and
on top of its length, each parallel loop (which OpenMP outlines into a function of its own)
costs as much as 1,700 characters, each reduction clause 1,000 and each loop 500; a line of
the entry point, which only calls kernels, a third of a character per character
(ENTRY_SHARE). Measured in a unit among others (the unit's time with and without it), not
alone, where the unit's first function costs 5 ms whatever it is, a light kernel (TR_LIGHT:
-O1, codegen/lower.py) costs a little over half of what the same C costs at -O3
(LIGHT_SHARE), and each kernel, a function of its own, KERNEL_WORK besides: weighed as -O3's,
GradBench gmm's objective, seven light kernels and the heavy ones, had its heavy kernels put
together in one unit (81 ms against 59). Weighed by length alone, a module's loops over
reductions (a layer norm's, a softmax's) were each taken for a third of their cost and the
twice-written loops of an optimizer's update (templates/grid_mode.c.j2) for twice theirs.
Each unit also costs the compiler's start (reading the prologue, setting up code
generation) on a core that would otherwise wait, so each unit more must take at least
UNIT_GAIN off the largest unit's work. A module whose kernels are each called from a few
steps (inlined into the entry point) stays one unit; long modules are split among the
free cores (`free_cores`: those the process may run on, less the other threads ready to run
now). On a machine busy with other work a second unit would wait for a core and cost its
compiler's start for nothing: there a module compiles as one unit.
"""

import itertools
import os
import re

from runtime import thread_pools

ENTRY_SHARE = 3  # a character of the entry point's calls: this share of a kernel's
UNIT_GAIN = 2000  # the least work (a compiler's start) a unit more must take off the largest
# the least work the packing by size must take off the largest unit: the weights are
# estimates, and smaller gains measured a loss or nothing (B2's 839, B9u's 1,000, B20's
# 1,381, B9b's 1,394 before KERNEL_WORK and LIGHT_SHARE), B31's 2,058 a gain (2,572 now);
# B20's 2,296 now measures level (benchmarks/RESULTS.md)
PACKING_GAIN = 1500
MAX_UNITS = 8
# what a kernel's C costs the compiler beyond its length, in characters' worth: a parallel
# loop, a reduction clause (OpenMP's or a vector loop's), a loop
PARALLEL_WORK, REDUCTION_WORK, LOOP_WORK = 1700, 1000, 500
LIGHT_SHARE = 0.55  # a light kernel's work, as a share of the same C's at -O3
KERNEL_WORK = 500  # a kernel's function, whatever its length

BLOCK = re.compile(r"^#if TR_IN_UNIT  /\* work (\d+) at (\d+) of (\d+) \*/$", re.M)
# a kernel's definition that `layout` puts in a block: its type, name and parameters
_NOT_INLINED = re.compile(r"^static TR_NOINLINE (\w+) (\w+)\(([^{]*)\)\s*\{", re.M)


def weight(text):
    """The compile work of a kernel's C `text`, in characters' worth (see above)."""
    work = (
        len(text)
        + PARALLEL_WORK * text.count("#pragma omp parallel")
        + REDUCTION_WORK * text.count(" reduction(")
        + LOOP_WORK * text.count("for (")
    )
    return int(work * LIGHT_SHARE) if "TR_LIGHT\n" in text else work


def function_weight(text):
    """The compile work of a kernel's C `text` compiled as a function of its own (in a block,
    not inlined where it is called: a borrowed kernel's call is a line of the entry point)."""
    return KERNEL_WORK + weight(text)


class Layout:
    """Where each block of a module goes: `declarations` (C prototypes of the kernels in
    blocks), `kernels` [(C text, the line opening its block, or None where it is in no
    block)], `parts` [the line opening each part's block] and `entry` (the entry point's)."""

    def __init__(self, declarations, kernels, parts, entry):
        self.declarations = declarations
        self.kernels = kernels
        self.parts = parts
        self.entry = entry


def layout(kernels, parts):
    """The Layout of a module whose kernels are `kernels` [(C name, C text)] and whose entry
    point has `parts` [(offsets, statements)]. A kernel whose definition reads
    `static TR_NOINLINE <type> <name>(` goes in a block of its own, defined TR_PART (hidden,
    not static, when compiled in units) and declared for every unit."""
    declarations, texts, blocked = [], [], []  # blocked: the positions in texts of blocks
    inlined = 0  # the work of the kernels in no block, compiled with the steps that call them
    for name, text in kernels:
        definition = not_inlined(name, text)
        if definition is None:
            texts.append(text)
            inlined += weight(text)
            continue
        declarations.append(f"TR_PART {definition[1]} {name}({definition[3]});")
        blocked.append(len(texts))
        texts.append(block_text(text, definition))
    calls = [sum(map(len, lines)) // ENTRY_SHARE for _, lines in parts]
    # each block's work, in order: the entry point's parts where it has several (it then
    # only calls them); the kernels in blocks; the entry point, last (often the largest: its
    # calls and the kernels inlined into it)
    work = list(calls) if len(parts) > 1 else []
    work += [function_weight(texts[k]) for k in blocked]
    work.append(0 if len(parts) > 1 else calls[0] + inlined)
    total = max(1, sum(work))
    starts = itertools.accumulate([0, *work[:-1]])
    # a block is marked with the middle of its work (the cut by position puts it in unit
    # middle * units // total); the entry point that only calls its parts, with none, in the
    # last unit
    markers = [
        f"#if TR_IN_UNIT  /* work {w} at {min(start + w // 2, total - 1)} of {total} */"
        for start, w in zip(starts, work)
    ]
    parts_at = markers[: len(work) - 1 - len(blocked)]
    kernels_at = dict(zip(blocked, markers[len(parts_at) : -1]))
    placed = [(text, kernels_at.get(k)) for k, text in enumerate(texts)]
    return Layout(declarations, placed, parts_at, markers[-1])


def not_inlined(name, text):
    """The match of the definition `static TR_NOINLINE <type> <name>(<parameters>) {` in
    a kernel's C `text` (its groups: type, name, parameters), or None where it has none."""
    return next((d for d in _NOT_INLINED.finditer(text) if d[2] == name), None)


def block_text(text, definition):
    """A kernel's C `text` as its block holds it: its `definition` (`not_inlined`'s match)
    TR_PART, not static."""
    start = definition.start()
    return text[:start] + text[start:].replace("static ", "TR_PART ", 1)


def count(source):
    """How many translation units to compile `source` in: one per free core at most, no
    more than its blocks or MAX_UNITS, and each unit more only where it takes at least
    UNIT_GAIN off the largest unit's work."""
    blocks = [tuple(map(int, block)) for block in BLOCK.findall(source)]
    best, largest = 1, sum(work for work, _, _ in blocks)
    most_units = min(MAX_UNITS, len(blocks))
    if most_units > 1:  # (the machine is looked at only for a module that could be split)
        most_units = min(most_units, free_cores())
    for units in range(2, most_units + 1):
        most = max(_loads(blocks, placement(blocks, units), units))
        if most <= largest - UNIT_GAIN * (units - best):
            best, largest = units, most
    return best


def free_cores():
    """The cores this process may run on (its affinity, bounded by its cgroup's CPU quota:
    runtime/thread_pools.py), less the threads of other processes that are ready to run now
    (the kernel's count in /proc/loadavg, less this process's own), at least one. A unit
    more compiles at the same time as the others only on a core that would otherwise wait:
    where other work takes the cores, it waits its turn, and costs its compiler's start for
    nothing (a quarter more of the compiler's time on B20's module). Where the count cannot
    be read, every core counts as free."""
    return max(1, thread_pools.usable_cores() - _others_running())


def _others_running():
    """Threads of other processes ready to run now: the machine's, less this process's own
    (the calling thread, and tracer's pool workers still spinning after a call); 0 where
    /proc/loadavg cannot be read (a system without it, or a sandbox that hides it)."""
    try:
        with open("/proc/loadavg") as handle:
            running = int(handle.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return 0
    return max(0, running - _own_running())


def _own_running():
    """This process's threads that are running or ready to run (state R in each thread's
    /proc stat, read after the name in parentheses, which may hold spaces), at least one:
    the calling thread."""
    running = 0
    try:
        threads = os.listdir("/proc/self/task")
    except OSError:
        return 1
    for thread in threads:
        try:
            with open(f"/proc/self/task/{thread}/stat") as handle:
                state = handle.read().rpartition(")")[2].split()[0]
        except (OSError, IndexError):
            continue
        running += state == "R"
    return max(running, 1)


def placement(blocks, units):
    """The unit of each block of `blocks` [(work, at, total)] compiled as `units` units: the
    cut by position, or the packing by size where its largest unit has at least PACKING_GAIN
    less work."""
    by_position = [at * units // total for _, at, total in blocks]
    by_size, loads = [0] * len(blocks), [0] * units
    for k in sorted(range(len(blocks)), key=lambda k: -blocks[k][0]):  # ties: in order
        by_size[k] = loads.index(min(loads))
        loads[by_size[k]] += blocks[k][0]
    packed = max(loads) <= max(_loads(blocks, by_position, units)) - PACKING_GAIN
    return by_size if packed else by_position


def _loads(blocks, units_of, units):
    """Each unit's work where block k goes to unit units_of[k]."""
    loads = [0] * units
    for (work, _, _), unit in zip(blocks, units_of):
        loads[unit] += work
    return loads


def sources(source, units):
    """The C of each of `units` translation units: `source` without the blocks that fall in
    other units (from their `#if TR_IN_UNIT` to its `#endif`), so that each compiler run
    reads only its own share."""
    lines = source.split("\n")
    units_of = placement([tuple(map(int, b)) for b in BLOCK.findall(source)], units)
    texts = []
    for unit in range(units):
        kept, skipping, depth, seen = [], False, 0, 0
        for line in lines:
            if skipping:
                depth += line.startswith("#if") - line.startswith("#endif")
                skipping = depth > 0
                continue
            if BLOCK.fullmatch(line):
                seen += 1
                if units_of[seen - 1] != unit:
                    skipping, depth = True, 1
                    continue
            kept.append(line)
        texts.append("\n".join(kept))
    return texts

"""A long entry point's kernel calls, with their operands in a table: compile time of unrolled loops.

An unrolled loop of 10^4 steps lowers to as many kernel calls, each passing 5 to 10
pointers (`(const float *)(workspace + w1186)`), and GCC spends much of a first call's
compile time on code that only calls. From COMPACT_FROM calls on, a call whose
operands are all inputs, outputs or workspace blocks at known offsets becomes a row of its
function's table of steps, and consecutive rows one loop:

    static const int64_t tr_operands[] = {0,1152,0,64,4,448,...};
    static const struct tr_step tr_steps[] = {
        {k44_step, 0},  /* fused f32[14] # model.py:12 */
        ...
    };
    TR_STEPS(0, 212);

`k44_step`, written once per kernel, finds each operand from a pair of `tr_operands` at its
row's position (TR_OPERAND in the prologue: where the pointer starts, 0 for the workspace
and k + 1 for args[k], and its byte offset there) and calls `k44`. GCC reads the tables as
data, where a statement per call costs it optimisation work, even at -O0.
"""

import re

COMPACT_FROM = 4096  # kernel calls in the entry point, from which they are compacted


class KernelCall(str):
    """The C statement of a kernel call, and what its compact form needs: the kernel's name,
    its operands as (C pointer type, pointer expression), and the statement's comment."""

    def __new__(cls, text, kernel, operands, comment):
        call = super().__new__(cls, text)
        call.kernel, call.operands, call.comment = kernel, operands, comment
        return call


def worthwhile(groups):
    """Whether the entry point's statements (a list per step) hold enough calls to compact."""
    return sum(isinstance(line, KernelCall) for group in groups for line in group) >= COMPACT_FROM


def compacted(lines, offsets, signatures):
    """`lines` (the statements of one function of the entry point) with each run of
    KernelCalls whose operands all resolve made one loop over a table of steps, after the
    lines declaring the tables. `offsets`: the byte offset of each workspace block (w0, w1,
    ...); the pointer types of each kernel called from a table go into `signatures` (name ->
    types), for `step_functions`."""
    operands, steps, result = [], [], []
    for line in lines:
        pairs = _pairs(line, offsets) if isinstance(line, KernelCall) else None
        if pairs is None:
            result.append(line)
            continue
        signatures[line.kernel] = [ctype for ctype, _ in line.operands]
        if not (result and isinstance(result[-1], _Run)):
            result.append(_Run(len(steps)))
        result[-1].count += 1
        steps.append(f"    {{{line.kernel}_step, {len(operands)}}},  /* {line.comment} */")
        operands += [number for pair in pairs for number in pair]
    if not steps:
        return lines
    tables = [
        f"static const int64_t tr_operands[] = {{{','.join(map(str, operands))}}};",
        "static const struct tr_step tr_steps[] = {",
        *steps,
        "};",
    ]
    return tables + [str(line) for line in result]


class _Run:
    """Consecutive steps of the table: one loop statement."""

    def __init__(self, first):
        self.first, self.count = first, 0

    def __str__(self):
        return f"TR_STEPS({self.first}, {self.count});"


def step_functions(signatures):
    """The C of each kernel's step function, which calls it on the operands of a table."""
    return [
        f"static void {name}_step(char **args, char *workspace, const int64_t *o) {{\n"
        f"    {name}({', '.join(f'({ctype})TR_OPERAND(o, {k})' for k, ctype in enumerate(types))});\n"
        "}"
        for name, types in signatures.items()
    ]


_ARGUMENT = re.compile(r"args\[(\d+)\]")
_BLOCK = re.compile(r"\(workspace \+ w(\d+)\)")
_PLUS = re.compile(r"\((.+) \+ (\d+)\)")


def _pairs(call, offsets):
    """[(start, byte offset)] of the call's operands, or None if one is not a known place."""
    pairs = []
    for _, pointer in call.operands:
        offset = 0
        while (plus := _PLUS.fullmatch(pointer)) and not _BLOCK.fullmatch(pointer):
            pointer, offset = plus[1], offset + int(plus[2])
        if argument := _ARGUMENT.fullmatch(pointer):
            pairs.append((int(argument[1]) + 1, offset))
        elif (block := _BLOCK.fullmatch(pointer)) and isinstance(offsets[int(block[1])], int):
            pairs.append((0, offsets[int(block[1])] + offset))
        else:
            return None
    return pairs

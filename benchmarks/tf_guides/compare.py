"""Which cells of a guide give the same output on tracer as on TensorFlow.

The records are execute.py's: one list per run, {"cell", "source", "output", "error"}.
The counting rules:

* Both the output and the error are normalized before they are compared: `tracer.Tensor`,
  `tracer.Variable` and `tracer.RaggedTensor` read as `tf.Tensor`, `tf.Variable` and
  `tf.RaggedTensor`, a `tt.` prefix (as in
  `tt.float32`) as `tf.`, the module path in class and object reprs and in a traceback's
  last line is dropped (`<class 'Name'>`, `<Name object>`, `XError: ...`), hex addresses are
  dropped, a module named in a message is named by its path in TensorFlow (`module
  'tracer.compat.v1'` reads `module 'tensorflow.compat.v1'`, tracer's Keras `module
  'keras.utils'`, as Keras 3's), a temporary folder's random name reads `/tmp/tmpXXXXXXXX`
  (`tempfile.mkdtemp()`'s names differ from run to run), a warning raised in a library's
  file reads without its path, line number and code line, TensorFlow's log lines (absl, oneDNN, CUDA, cpu_feature_guard, timestamps) and
  traceback caret lines are dropped, and of a traceback only the frames in notebook cells
  are kept, without their function names; frames inside library files go, with their code
  line.
* A cell matches when its normalized output and error equal TensorFlow's.
* TensorFlow runs each guide twice. A cell whose output differs between those two runs
  (random numbers, timings) is not reproducible by TensorFlow itself; it counts as matching
  when neither engine raised in it.
* Excluded, not counted: cells with no code (licence headers), cells that print TensorFlow's
  internals (a GraphDef, AutoGraph's generated code), cells that import or use matplotlib
  (not installed; stubbed by execute.py) including through functions defined in a plotting
  cell, and cells that fail in TensorFlow 2.21 itself (Keras 3 API changes).
"""

import ast
import re

LOG_LINE = re.compile(
    r"^\s*(WARNING|W0000|I0000|E0000|W\d{4} |I\d{4} |E\d{4} |\d{4}-\d\d-\d\d"
    r"|To enable the following instructions)"
    r"|oneDNN|cuda|absl|cpu_feature_guard|TF_ENABLE_ONEDNN_OPTS"
)
CARET_LINE = re.compile(r"\s*[~^]+\s*")
FRAME_LINE = re.compile(r'^\s*File "([^"]*)", line \d+')
LIBRARIES = r"(?:tracer|tensorflow|keras|tf_keras)"
INTERNALS = (("as_graph_def", "prints GraphDef"), ("autograph.to_code", "prints AutoGraph code"))
TF_BROKEN = re.compile(r"weights\.h5|keras\.losses' has no attribute|must call `compile\(\)`")
PLOT_NAMES = ("plt", "mpl", "matplotlib")
NOT_RUN = {"output": "", "error": "NOT RUN (notebook timeout or crash)"}


def _rename(text):
    """The textual renamings: tracer's names as TensorFlow's, module paths and addresses gone."""
    text = re.sub(r"\btracer\.(Tensor|Variable|RaggedTensor)\b", r"tf.\1", text)
    text = re.sub(rf"<class '{LIBRARIES}(?:\.\w+)*\.(\w+)'>", r"<class '\1'>", text)
    text = re.sub(rf"<{LIBRARIES}(?:\.\w+)*\.(\w+) object", r"<\1 object", text)
    text = re.sub(r"(?m)^(?:tracer|tensorflow|keras)(?:\.\w+)*\.(\w+): ", r"\1: ", text)
    text = re.sub(r"\btt\.(?=\w)", "tf.", text)
    # a warning from a library's file (Keras's `input_shape` warning): its path, line number
    # and code line are the library's own, as a traceback's library frames are
    text = re.sub(rf"(?m)^\S*/{LIBRARIES}/\S*\.py:\d+: (\w*Warning: .*)(?:\n  \S.*)?$", r"\1", text)
    text = re.sub(r"\bmodule 'tracer\.keras\b", "module 'keras", text)
    text = re.sub(r"\bmodule 'tracer\b", "module 'tensorflow", text)
    text = re.sub(r"/tmp/tmp[a-z0-9_]{8}\b", "/tmp/tmpXXXXXXXX", text)
    return re.sub(r"0x[0-9a-fA-F]+", "", text)


def normalize(text):
    """`text` (a cell's output or error) in the form the two engines are compared in."""
    if text is None:
        return None
    kept, skip_code_line = [], False
    for line in _rename(text).split("\n"):
        if skip_code_line:
            skip_code_line = False
            if line.startswith("    "):
                continue
        if LOG_LINE.search(line) or CARET_LINE.fullmatch(line):
            continue
        frame = FRAME_LINE.match(line)
        if frame:
            if not frame.group(1).startswith("<cell-"):
                skip_code_line = True  # a library frame, and the code line under it
                continue
            line = re.sub(r", in .*", "", line)
        kept.append(line.rstrip())
    while kept and kept[-1] == "":
        kept.pop()
    return "\n".join(kept)


def has_code(source):
    """Whether the cell has a statement once shell/magic lines are dropped."""
    lines = [line for line in source.split("\n") if not line.lstrip().startswith(("!", "%"))]
    try:
        return bool(ast.parse("\n".join(lines)).body)
    except SyntaxError:
        return True


def _plotting_names(cells):
    """matplotlib's names, and the functions defined in cells that use them."""
    names = set(PLOT_NAMES)
    for cell in cells:
        if any(re.search(rf"\b{re.escape(n)}\b", cell["source"]) for n in names):
            names.update(re.findall(r"^def (\w+)", cell["source"], re.M))
    return names


def exclusions(cells):
    """{cell index: reason} for the cells of TensorFlow's run that are not counted."""
    plot_names = _plotting_names(cells)
    excluded = {}
    for cell in cells:
        index, source = cell["cell"], cell["source"]
        if not has_code(source):
            excluded[index] = "no code (license/comment only)"
            continue
        for marker, why in INTERNALS:
            if marker in source:
                excluded[index] = "TF internals: " + why
        if cell.get("error") and TF_BROKEN.search(cell["error"]):
            excluded[index] = "TF 2.21 itself fails (Keras 3 API change): " + cell["error"][:70]
        if "import matplotlib" in source:
            excluded[index] = "imports matplotlib (not installed; stubbed)"
        elif any(re.search(rf"\b{re.escape(n)}\b", source) for n in plot_names):
            excluded.setdefault(index, "plotting (matplotlib stubbed)")
    return excluded


def _first_difference(a, b):
    """The first pair of differing lines of two texts ("<end>" past the shorter one)."""
    left, right = a.split("\n"), b.split("\n")
    for k in range(max(len(left), len(right))):
        x = left[k] if k < len(left) else "<end>"
        y = right[k] if k < len(right) else "<end>"
        if x != y:
            return x, y
    return "", ""


def _mismatch_reason(tf_out, tf_err, tt_out, tt_err):
    """One line saying how tracer's cell differs from TensorFlow's."""
    if tt_err and tt_err != tf_err:
        reason = "tracer raised " + tt_err.split("\n")[0][:200]
        return reason if tf_err is None else reason + " | TF raised " + tf_err.split("\n")[0][:120]
    if tf_err and tf_err != tt_err:
        return "TF raised " + tf_err.split("\n")[0][:160] + " ; tracer did not"
    x, y = _first_difference(tf_out, tt_out)
    return f"TF: {x[:110]!r}  vs  tracer: {y[:110]!r}"


def compare_cell(tf_cell, tt_cell, tf_again=None):
    """("match" | "match-nonrepro" | "mismatch", reason, reproducible) for one counted cell.
    `tf_again` is the same cell from TensorFlow's second run, or None."""
    tf_out, tt_out = normalize(tf_cell["output"]), normalize(tt_cell["output"])
    tf_err, tt_err = normalize(tf_cell["error"]), normalize(tt_cell["error"])
    reproducible = tf_again is None or (
        normalize(tf_again["output"]) == tf_out and normalize(tf_again["error"]) == tf_err
    )
    if tf_out == tt_out and tf_err == tt_err:
        return "match", "", reproducible
    if not reproducible and tf_err is None and tt_err is None:
        return "match-nonrepro", "", reproducible
    reason = _mismatch_reason(tf_out, tf_err, tt_out, tt_err)
    return "mismatch", reason + ("" if reproducible else "  [TF nonreproducible]"), reproducible


def compare_guide(tf_cells, tt_cells, tf_again=None):
    """{"match", "counted", "rows"} for one guide; a cell tracer never reached is a mismatch."""
    excluded = exclusions(tf_cells)
    rows, matched, counted = [], 0, 0
    for k, tf_cell in enumerate(tf_cells):
        index = tf_cell["cell"]
        if index in excluded:
            rows.append({"cell": index, "status": "excluded", "why": excluded[index]})
            continue
        tt_cell = tt_cells[k] if k < len(tt_cells) else NOT_RUN
        again = tf_again[k] if tf_again and k < len(tf_again) else None
        status, why, reproducible = compare_cell(tf_cell, tt_cell, again)
        counted += 1
        matched += status.startswith("match")
        rows.append({"cell": index, "status": status, "why": why, "reproducible": reproducible})
    return {"match": matched, "counted": counted, "rows": rows}

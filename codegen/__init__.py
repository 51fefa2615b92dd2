"""IR -> C: the C forms of the primitives (`forms.py`, filled in by each op's record), the
lowering of an optimized graph to loop nests and kernels (`lower.py`, `loops.py`), rendering
from `templates/`, the cffi build (`build.py`) and the on-disk cache (`cache.py`). It reads
the IR through `tracer.ir` and node attributes only, and never imports tracer's front end
(tensors, tapes, ops)."""

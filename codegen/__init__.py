"""IR -> C: lowering of fused graphs to loop nests, rendering from `templates/`, the cffi build
and the on-disk cache. Like `runtime`, it reads the IR through node attributes only and never
imports tracer's front end. (The compiler is not built yet: see the compiler issue.)"""

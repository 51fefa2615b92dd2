"""Where the modules above the base classes plug into them, so that the base classes need
not import those modules and the imports have no circle.

`Layer.__call__` hands a call on KerasTensors to `symbolic_call`, `Model(inputs, outputs)`
makes a `functional_model`, a KerasTensor's operators (`x[:, -1]`) call `operate`, and
`Model.save`, `save_weights`, `load_weights` and `tt.keras.models.load_model` use `saving`.
`tracer.keras.functional` (which imports `tracer.keras.operations`) and
`tracer.keras.saving` set them when they are imported, which `tracer.keras` (the package,
imported before any of its modules) does.
"""

symbolic_call = None  # tracer.keras.functional.call_symbolic
functional_model = None  # tracer.keras.functional.Functional
saving = None  # the module tracer.keras.saving
operate = None  # tracer.keras.operations.apply: Python's operators on KerasTensors

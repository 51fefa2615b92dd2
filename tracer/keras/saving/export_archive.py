"""Keras 3's `model.export(path)`: the model's inference as a SavedModel whose `serve` endpoint
takes its inputs (batch size unknown) and gives its outputs, for `tt.saved_model.load`.

    model.export("served")
    tt.saved_model.load("served").serve(x)

The model's variables travel with the endpoint; the file is tracer's SavedModel
(tracer/saved_model/), not TensorFlow's.
"""

from tracer.module import Module
from tracer.signature import TensorSpec


def export(model, filepath, format="tf_saved_model", verbose=True, input_signature=None, **kwargs):
    """Save `model`'s `serve` endpoint (its call with training=False) in `filepath`, for the
    inputs `input_signature` gives (a list of TensorSpecs), by default the model's own."""
    from tracer import saved_model
    from tracer.function import function

    if format != "tf_saved_model":
        raise NotImplementedError(
            f"model.export: format={format!r}; tracer writes 'tf_saved_model'"
        )
    if kwargs:
        raise TypeError(f"model.export: unexpected arguments {sorted(kwargs)}")
    signature = list(input_signature) if input_signature is not None else _signature(model)

    def serve(*inputs):
        return model(inputs[0] if len(inputs) == 1 else list(inputs), training=False)

    archive = Module(name="export_archive")
    archive.model = model  # (its variables go with the endpoint)
    archive.serve = function(serve, input_signature=signature)
    saved_model.save(archive, filepath)
    if verbose:
        print(f"Saved artifact at '{filepath}'. The following endpoints are available:\n")
        print("* Endpoint 'serve'")
        for k, spec in enumerate(signature):
            print(f"  args_{k} (POSITIONAL_ONLY): {spec!r}")


def _signature(model):
    """The specs of the model's inputs: a functional model's Inputs, else the shape it was
    built for (a Sequential's input shape, a subclassed model's first call), batch unknown."""
    inputs = getattr(model, "inputs", None)
    if isinstance(inputs, list) and inputs:
        return [TensorSpec((None, *tuple(t.shape)[1:]), t.dtype) for t in inputs]
    shape = getattr(model, "_input_shape", None) or getattr(model, "_build_input_shape", None)
    if shape is None:
        raise ValueError(
            "model.export: the model is not built, so its inputs are unknown: call it on data "
            "first, or give input_signature"
        )
    dtype = getattr(model, "_build_input_dtype", None) or "float32"
    return [TensorSpec((None, *tuple(shape)[1:]), dtype)]

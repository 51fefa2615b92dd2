"""The lookup layers' vocabularies that Keras keeps in a `.keras` file's assets.

Keras writes a vocabulary learnt by `adapt` to `assets/<the layer's path>/vocabulary.txt`,
one token a line, the special tokens first, and leaves the config's `vocabulary` None
(tracer writes it into the config instead). The paths are the weights file's
(`weights_file.saveables`): a TextVectorization's lookup is its `_lookup_layer`, as in
Keras.
"""

from tracer.keras.layers.lookup import IndexLookup
from tracer.keras.saving.weights_file import saveables


def restore(model, texts):
    """Give each lookup layer of `model` that has no vocabulary the one `texts` (from
    `archive.vocabularies`) holds at its path."""
    for path, layer in saveables(model):
        if not isinstance(layer, IndexLookup) or layer.vocabulary_size() > layer._token_start():
            continue
        text = texts.get(path)
        if text is None:
            continue
        if layer.output_mode == "tf_idf":
            raise ValueError(
                f"the file's lookup layer at {path} keeps its tf_idf weights in Keras's own "
                "variables, which tracer does not read; save the model from tracer, or give "
                "the layer its vocabulary and idf_weights"
            )
        lines = text.splitlines()
        while lines and lines[-1] == "":
            lines.pop()
        layer.set_vocabulary(lines if layer._key_dtype.is_string else [int(t) for t in lines])

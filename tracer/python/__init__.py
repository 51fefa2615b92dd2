"""The internal module paths of TensorFlow that programs import from
(`from tensorflow.python.framework.ops import disable_eager_execution`), as aliases of
tracer's public names, so that such programs run with `tensorflow` changed to `tracer`."""

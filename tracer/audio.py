"""`tt.audio`: TensorFlow's `tf.audio`, WAV files to audio and back (tracer/ops/wav_ops.py)."""

from tracer.ops.wav_ops import decode_wav, encode_wav

__all__ = ["decode_wav", "encode_wav"]

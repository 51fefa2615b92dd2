"""tt.io.encode_base64 and decode_base64 against the outputs and errors TensorFlow 2.21
printed for the same strings, eagerly and compiled."""

import pytest

import tracer as tt

PLAIN = [b"", b"f", b"fo", b"foo", b"foob", b"\xfb\xff\xfe", b"hello world!?"]
# tf.io.encode_base64(PLAIN), and with pad=True
WEB_SAFE = [b"", b"Zg", b"Zm8", b"Zm9v", b"Zm9vYg", b"-__-", b"aGVsbG8gd29ybGQhPw"]
PADDED = [b"", b"Zg==", b"Zm8=", b"Zm9v", b"Zm9vYg==", b"-__-", b"aGVsbG8gd29ybGQhPw=="]


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_encode_and_decode_are_tensorflows(compiled):
    run = tt.function if compiled else (lambda f: f)
    assert run(lambda x: tt.io.encode_base64(x))(tt.constant(PLAIN)).numpy().tolist() == WEB_SAFE
    padded = run(lambda x: tt.io.encode_base64(x, pad=True))(tt.constant(PLAIN))
    assert padded.numpy().tolist() == PADDED
    for encoded in (WEB_SAFE, PADDED):
        decoded = run(lambda x: tt.io.decode_base64(x))(tt.constant(encoded))
        assert decoded.numpy().tolist() == PLAIN
    square = tt.io.decode_base64(tt.constant([[b"Zg", b"Zm8="]]))
    assert square.shape == (1, 2) and square.numpy().tolist() == [[b"f", b"fo"]]


@pytest.mark.parametrize(
    "text, message",
    [
        (b"+/+/", "Invalid character found in base64"),  # the standard alphabet's
        (b"Z", "length cannot be 1 modulo 4"),
        (b"Zm9v!", "length cannot be 1 modulo 4"),  # (the whole group read first)
        (b"Zm 9v", "Invalid character found in base64"),
        (b"Zg=", "Invalid character found in base64"),  # padding short of a group
        (b"Zg==Zg==", "Invalid character found in base64"),  # padding inside
    ],
)
def test_decode_refuses_what_tensorflow_refuses(text, message):
    with pytest.raises(tt.errors.InvalidArgumentError, match=message):
        tt.io.decode_base64(tt.constant([text]))
    with pytest.raises(TypeError, match="expects tt.string tensors"):
        tt.io.encode_base64(tt.constant([1]))

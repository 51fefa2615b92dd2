"""tt.data.experimental.CsvDataset and make_csv_dataset against TensorFlow 2.21's printed
outputs for the same files (each expected value below is what TensorFlow printed, except the
shuffle and ignore_errors test, which check what they must give; the errors' classes and
first words are TensorFlow's, tracer adds the file and record)."""

import collections
import gzip

import numpy as np
import pytest

import tracer as tt
from tracer.errors import InvalidArgumentError, NotFoundError

FILES = {
    "missing.csv": "1,2,3,4\n,2,3,4\n1,,3,4\n1,2,,4\n1,2,3,\n,,,\n",
    "quoted.csv": 'a,"b, c",1\n"x ""y""",z,2\n"multi\nline",w,3\n',
    "crlf.csv": "1,2\r\n3,4\r\n",
    "spaces.csv": " 5 , a ,1.5 \n6,b , 2\n",
    "na.csv": "1,NA,3\nNA,2,NA\n",
    "floats.csv": "1e5,inf\n-2.5,nan\n.5,1E-3\n",
    "noeol.csv": "1,2\n3,4",
    "titanic.csv": (
        "survived,sex,age,n_siblings_spouses,parch,fare,class,deck,embark_town,alone\n"
        "0,male,22.0,1,0,7.25,Third,unknown,Southampton,n\n"
        "1,female,38.0,1,0,71.2833,First,C,Cherbourg,n\n"
        "1,female,26.0,0,0,7.925,Third,unknown,Southampton,y\n"
        "1,female,35.0,1,0,53.1,First,C,Southampton,n\n"
        "0,male,28.0,0,0,8.4583,Third,unknown,Queenstown,y\n"
    ),
    "types.csv": "i,big,f,d,s,e\n1,3000000000,1.5,1e39,a,\n2,4,2,3,b,\n",
}


@pytest.fixture
def folder(tmp_path, monkeypatch):
    for name, text in FILES.items():
        (tmp_path / name).write_bytes(text.encode())
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _rows(dataset):
    return [[v.numpy() for v in element] for element in dataset]


def test_missing_fields_take_defaults_as_the_data_guide(folder):
    dataset = tt.data.experimental.CsvDataset("missing.csv", [999, 999, 999, 999])
    dataset = dataset.map(lambda *items: tt.stack(items))
    assert repr(dataset) == (
        "<_MapDataset element_spec=TensorSpec(shape=(4,), dtype=tt.int32, name=None)>"
    )
    got = np.stack([line.numpy() for line in dataset])
    want = [[1, 2, 3, 4], [999, 2, 3, 4], [1, 999, 3, 4], [1, 2, 999, 4], [1, 2, 3, 999]]
    np.testing.assert_array_equal(got, want + [[999] * 4])
    picked = tt.data.experimental.CsvDataset("missing.csv", [999, 999], select_cols=[1, 3])
    want = [[2, 4], [2, 4], [999, 4], [2, 4], [2, 999], [999, 999]]
    assert _rows(picked) == want
    assert _rows(tt.data.experimental.CsvDataset("missing.csv", [9, 9], exclude_cols=[0, 2])) == [
        [2, 4], [2, 4], [9, 4], [2, 4], [2, 9], [9, 9]
    ]  # fmt: skip


def test_required_field_missing(folder):
    dataset = tt.data.experimental.CsvDataset("missing.csv", [tt.int32] * 4)
    iterator = iter(dataset)
    assert [v.numpy() for v in next(iterator)] == [1, 2, 3, 4]
    with pytest.raises(InvalidArgumentError, match=r"^Field 0 is required but missing in record!"):
        next(iterator)


def test_quotes_line_ends_spaces_and_na(folder):
    quoted = tt.data.experimental.CsvDataset("quoted.csv", [tt.string, tt.string, tt.int32])
    assert _rows(quoted) == [[b"a", b"b, c", 1], [b'x "y"', b"z", 2], [b"multi\nline", b"w", 3]]
    assert _rows(tt.data.experimental.CsvDataset("crlf.csv", [0, 0])) == [[1, 2], [3, 4]]
    assert _rows(tt.data.experimental.CsvDataset("noeol.csv", [0, 0])) == [[1, 2], [3, 4]]
    spaces = _rows(tt.data.experimental.CsvDataset("spaces.csv", [0, "", 0.0]))
    assert spaces == [[5, b" a ", 1.5], [6, b"b ", 2.0]]
    na = tt.data.experimental.CsvDataset("na.csv", [0, 0, 0], na_value="NA")
    assert _rows(na) == [[1, 0, 3], [0, 2, 0]]


def test_float_columns(folder):
    for dtype in (tt.float32, tt.float64):
        rows = _rows(tt.data.experimental.CsvDataset("floats.csv", [dtype, dtype]))
        assert [r[0] for r in rows] == [1e5, -2.5, 0.5]
        assert rows[0][1] == np.inf and np.isnan(rows[1][1])
        assert rows[2][1] == np.array(1e-3, dtype.as_numpy_dtype)
        assert rows[0][0].dtype == dtype.as_numpy_dtype


def test_defaults_given_as_tensors_and_header(folder):
    defaults = [tt.constant([0.0]), tt.constant([], tt.int64), tt.constant(7, tt.int64), 1.5]
    dataset = tt.data.experimental.CsvDataset("missing.csv", defaults)
    assert [s.dtype for s in dataset.element_spec] == [tt.float32, tt.int64, tt.int64, tt.float32]
    iterator = iter(dataset)
    assert [v.numpy() for v in next(iterator)] == [1.0, 2, 3, 4.0]
    assert [v.numpy() for v in next(iterator)] == [0.0, 2, 3, 4.0]
    with pytest.raises(InvalidArgumentError, match="Field 1 is required"):
        next(iterator)
    titanic = [tt.int32, tt.string, tt.float32, tt.int32, tt.int32, tt.float32] + [tt.string] * 4
    rows = _rows(tt.data.experimental.CsvDataset("titanic.csv", titanic, header=True))
    assert len(rows) == 5 and rows[1][:3] == [1, b"female", 38.0] and rows[4][-1] == b"y"


@pytest.mark.parametrize(
    "name, text, defaults, select, message",
    [
        ("bad.csv", "1,x\n", [0, 0], None, r"^Field 1 in record is not a valid int32: x"),
        ("short.csv", "1,2,3\n4,5\n", [0, 0, 0], None, "^Expect 3 fields but have 2 in record"),
        ("short.csv", "1,2,3\n4,5\n", [0, 0], [1, 2], "^Expect 2 fields but have 1 in record"),
        ("four.csv", "1,2,3,4\n", [0, 0, 0], None, "^Expect 3 fields but have more in record"),
        ("blank.csv", "1,2\n\n3,4\n", [0, 0], None, "^Expect 2 fields but have 1 in record"),
        ("quote.csv", 'a"b,1\n', [tt.string, 0], None, "^Unquoted fields cannot have quotes"),
        ("open.csv", '"a""b",c\n"open,x\n', ["", ""], None, "^Reached end of file without"),
        ("after.csv", '"x"y,2\n', [tt.string, 0], None, "^Quote inside a string has to be"),
    ],
)
def test_records_that_do_not_parse(folder, name, text, defaults, select, message):
    (folder / name).write_text(text)
    dataset = tt.data.experimental.CsvDataset(name, defaults, select_cols=select)
    with pytest.raises(InvalidArgumentError, match=message) as error:
        _rows(dataset)
    assert name in str(error.value)


def test_missing_file_and_compression(folder):
    with pytest.raises(NotFoundError, match="nope.csv; No such file or directory"):
        _rows(tt.data.experimental.CsvDataset("nope.csv", [0]))
    (folder / "z.csv.gz").write_bytes(gzip.compress(b"7,8\n"))
    zipped = tt.data.experimental.CsvDataset("z.csv.gz", [0, 0], compression_type="GZIP")
    assert _rows(zipped) == [[7, 8]]


def test_make_csv_dataset_as_the_data_guide(folder):
    batches = tt.data.experimental.make_csv_dataset(
        "titanic.csv", batch_size=2, label_name="survived", shuffle=False, num_epochs=1
    )
    features, label = batches.element_spec
    assert isinstance(features, collections.OrderedDict) and label.shape == (None,)
    assert list(features) == [
        "sex", "age", "n_siblings_spouses", "parch", "fare", "class", "deck", "embark_town",
        "alone",
    ]  # fmt: skip
    assert [features[k].dtype for k in ("sex", "age", "parch", "fare")] == [
        tt.string, tt.float32, tt.int32, tt.float32
    ]  # fmt: skip
    got = list(batches)
    assert [label.numpy().tolist() for _, label in got] == [[0, 1], [1, 1], [0]]
    assert got[0][0]["sex"].numpy().tolist() == [b"male", b"female"]
    np.testing.assert_array_equal(got[1][0]["fare"].numpy(), np.float32([7.925, 53.1]))
    picked = tt.data.experimental.make_csv_dataset(
        "titanic.csv", batch_size=4, label_name="survived",
        select_columns=["class", "fare", "survived"], shuffle=False,
    )  # fmt: skip
    features, label = picked.element_spec
    assert list(features) == ["fare", "class"] and label.shape == (4,)  # endless: whole batches
    first, second = list(picked.take(2))
    assert first[1].numpy().tolist() == [0, 1, 1, 1] and second[1].numpy().tolist() == [0, 0, 1, 1]
    assert second[0]["class"].numpy().tolist() == [b"Third", b"Third", b"First", b"Third"]


def test_make_csv_dataset_infers_types_and_takes_names(folder):
    spec = tt.data.experimental.make_csv_dataset(
        "types.csv", batch_size=2, shuffle=False, num_epochs=1
    ).element_spec
    assert [(k, s.dtype) for k, s in spec.items()] == [
        ("i", tt.int32), ("big", tt.int64), ("f", tt.float32), ("d", tt.float64),
        ("s", tt.string), ("e", tt.string),
    ]  # fmt: skip
    named = tt.data.experimental.make_csv_dataset(
        "missing.csv", batch_size=3, column_names=["a", "b", "c", "d"], header=False,
        shuffle=False, num_epochs=1, column_defaults=[0, 0, 0, 0],
    )  # fmt: skip
    first, second = list(named)
    assert first["a"].numpy().tolist() == [1, 0, 1] and second["c"].numpy().tolist() == [0, 3, 0]
    with pytest.raises(ValueError, match="must be one of the columns: .* Received: nope."):
        tt.data.experimental.make_csv_dataset("titanic.csv", batch_size=2, label_name="nope")
    with pytest.raises(ValueError, match="No files match `file_pattern` zzz"):
        tt.data.experimental.make_csv_dataset("zzz*.csv", batch_size=2)


def test_make_csv_dataset_shuffles_each_epoch_and_ignores_errors(folder):
    (folder / "many.csv").write_text("x\n" + "".join(f"{i}\n" for i in range(50)))
    data = tt.data.experimental.make_csv_dataset(
        "many.csv", batch_size=50, num_epochs=2, shuffle_seed=3
    )
    first, second = [f["x"].numpy() for f in data]
    assert sorted(first) == list(range(50)) == sorted(second)
    assert not np.array_equal(first, np.arange(50))
    (folder / "some_bad.csv").write_text("x\n1\nbad\n3\n")
    kept = tt.data.experimental.make_csv_dataset(
        "some_bad.csv", batch_size=5, column_defaults=[0], shuffle=False, num_epochs=1,
        ignore_errors=True,
    )  # fmt: skip
    assert [f["x"].numpy().tolist() for f in kept] == [[1, 3]]


def test_decode_csv_splits_records_as_tensorflow():
    """tt.io.decode_csv against TensorFlow 2.21's printed outputs: one tensor a column, of
    the records' shape and the defaults' dtypes; quotes, empty fields, select_cols,
    field_delim and na_value; its errors' words (tracer names the record's place)."""
    records = tt.constant(["1,2.5,a", "0,,b", '2,3,"x,y"'])
    label, value, text = tt.io.decode_csv(records, record_defaults=[[0], [-1.0], [""]])
    assert label.dtype == tt.int32 and label.numpy().tolist() == [1, 0, 2]
    assert value.dtype == tt.float32 and value.numpy().tolist() == [2.5, -1.0, 3.0]
    assert text.numpy().tolist() == [b"a", b"b", b"x,y"]
    seven, half = tt.io.decode_csv("7,1.5", record_defaults=[[0], [0.0]])
    assert seven.shape == () and int(seven) == 7 and float(half) == 1.5
    wide, other = tt.io.decode_csv(
        tt.constant([["1,2"], ["3,4"]]), record_defaults=[tt.constant([], tt.int64), [0.0]]
    )
    assert wide.dtype == tt.int64 and wide.numpy().tolist() == [[1], [3]]
    assert other.numpy().tolist() == [[2.0], [4.0]]
    first, last = tt.io.decode_csv(records, record_defaults=[[0], [""]], select_cols=[0, 2])
    assert first.numpy().tolist() == [1, 0, 2] and last.numpy().tolist() == [b"a", b"b", b"x,y"]
    assert [int(t) for t in tt.io.decode_csv(["1;2"], [[0], [0]], field_delim=";")] == [1, 2]
    assert [int(t) for t in tt.io.decode_csv(["1,NA"], [[0], [5]], na_value="NA")] == [1, 5]
    for bad, defaults, words in [
        (["1,2,3"], [[0], [0]], "Expect 2 fields but have more in record"),
        (["1"], [[0], [0]], "Expect 2 fields but have 1 in record"),
        (["a,1"], [[0], [0]], "Field 0 in record is not a valid int32: a"),
        ([",1"], [tt.constant([], tt.int32), [0]], "Field 0 is required but missing in record"),
        (["1.5,1"], [[0], [0]], "Field 0 in record is not a valid int32: 1.5"),
    ]:
        with pytest.raises(InvalidArgumentError, match=words):
            tt.io.decode_csv(bad, record_defaults=defaults)[0].numpy()
    with pytest.raises(TypeError, match="a column's default must be one of"):
        tt.io.decode_csv(["1"], record_defaults=[[True]])


def test_decode_csv_parses_a_text_line_datasets_lines(tmp_path):
    """The custom training walkthrough's pattern: TextLineDataset, skip(1), map(decode_csv)."""
    path = tmp_path / "penguins.csv"
    path.write_text("species,a,b\n2,0.5,0.25\n0,1.5,2\n")

    def parse(line):
        fields = tt.io.decode_csv(line, record_defaults=[[0], [0.0], [0.0]])
        return tt.stack(fields[1:]), fields[0]

    batches = list(tt.data.TextLineDataset(str(path)).skip(1).map(parse).batch(2))
    features, labels = batches[0]
    assert features.numpy().tolist() == [[0.5, 0.25], [1.5, 2.0]]
    assert labels.numpy().tolist() == [2, 0]

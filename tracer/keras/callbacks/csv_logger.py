"""`CSVLogger`, which writes each epoch's logs as a row of a CSV file."""

import collections
import csv
import os

import numpy as np

from tracer.keras.callbacks.base import Callback


class CSVLogger(Callback):
    """Writes one CSV row per epoch to `filename`: a header `epoch,<keys>` with the log keys
    of the first epoch, sorted (and "val_" copies of them when there are none, so that a
    later validation fits in), then `epoch,<values>` with "NA" for missing ones and lists
    written as "[a, b]". Rows end in "\\r\\n", as the csv module's excel dialect writes them.
    With `append`, rows go after those of an existing file, without a second header.
    """

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.sep = separator
        self.filename = os.fspath(filename)
        self.append = append
        self.writer = None
        self.keys = None
        self.append_header = True
        self.csv_file = None

    def on_train_begin(self, logs=None):
        if self.append and os.path.exists(self.filename):
            with open(self.filename) as f:
                self.append_header = not f.readline()
        if self.csv_file and not self.csv_file.closed:
            self.csv_file.close()
        self.csv_file = open(self.filename, "a" if self.append else "w", newline="")
        self.writer = None
        self.keys = None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
            if self.keys and not any(key.startswith("val_") for key in self.keys):
                self.keys += [f"val_{key}" for key in self.keys]
        if self.writer is None:
            self.writer = csv.DictWriter(
                self.csv_file, fieldnames=["epoch", *self.keys], delimiter=self.sep
            )
            if self.append_header:
                self.writer.writeheader()
        row = collections.OrderedDict(epoch=epoch)
        row.update((key, _csv_value(logs.get(key, "NA"))) for key in self.keys)
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        if self.csv_file and not self.csv_file.closed:
            self.csv_file.close()
        self.writer = None


def _csv_value(value):
    """Lists and arrays as one quoted "[a, b]" field; everything else as csv writes it."""
    if isinstance(value, str) or np.ndim(value) == 0:
        return value
    return f'"[{", ".join(map(str, value))}]"'

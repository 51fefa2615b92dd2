"""`tt.train.CheckpointManager`: numbered checkpoints in one directory, the oldest deleted
past `max_to_keep`, the list kept in the directory so that a new process finds the latest.

The manager reads and deletes inside its directory only: the list's entries are confined to
it (see tracer/train/files.py), and it deletes only files it names itself,
`checkpoint_name-N.npz`, never another file a tampered list names.
"""

import os
import re
import warnings

from tracer.train import files


class CheckpointManager:
    """Saves `checkpoint` as `directory/checkpoint_name-N`, keeping the last `max_to_keep`
    (all when None).

    >>> manager = tt.train.CheckpointManager(checkpoint, "/tmp/run", max_to_keep=3)
    >>> checkpoint.restore(manager.latest_checkpoint)   # nothing on the first run
    """

    def __init__(self, checkpoint, directory, max_to_keep, checkpoint_name="ckpt", init_fn=None):
        if max_to_keep is not None and int(max_to_keep) < 1:
            raise ValueError(f"max_to_keep must be at least 1 or None, not {max_to_keep}")
        if not files.plain_name(checkpoint_name):
            raise ValueError(
                f"checkpoint_name must be a file name without a directory, not {checkpoint_name!r}"
            )
        self._checkpoint = checkpoint
        self._given = os.fspath(directory)  # the paths it returns start so, as TensorFlow's
        self._directory = os.path.abspath(self._given)
        self._max_to_keep = None if max_to_keep is None else int(max_to_keep)
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._own = re.compile(re.escape(checkpoint_name) + r"-[0-9]+")
        self._init_fn = init_fn
        os.makedirs(self._directory, exist_ok=True)
        self._paths = [p for p in files.read_state(self._directory) if files.exists(p)]

    @property
    def directory(self):
        return self._given

    @property
    def checkpoints(self):
        """The kept checkpoints, oldest first."""
        return [self._shown(path) for path in self._paths]

    @property
    def latest_checkpoint(self):
        return self._shown(self._paths[-1]) if self._paths else None

    def _shown(self, path):
        """A checkpoint's path in the directory as it was given (`./run/ckpt-3`, as
        TensorFlow returns it); the manager itself reads and writes its absolute path."""
        return os.path.join(self._given, os.path.basename(path))

    def save(self, checkpoint_number=None):
        """Write `checkpoint_name-N` (N: `checkpoint_number`, else the checkpoint's save
        counter), delete the oldest past `max_to_keep`, and return the new path. When the
        save fails, the counter, the directory and its list are as they were."""
        if checkpoint_number is None:
            number = int(self._checkpoint.save_counter.numpy()) + 1
        else:
            number = int(checkpoint_number)
        path = f"{self._prefix}-{number}"
        kept = [p for p in self._paths if p != path] + [path]
        stale = []
        if self._max_to_keep is not None:
            stale, kept = kept[: -self._max_to_keep], kept[-self._max_to_keep :]
        self._checkpoint._save_recorded(path, lambda: files.write_state(self._directory, kept))
        self._paths = kept
        for old in stale:  # after the list no longer names them
            self._delete(old)
        return self._shown(path)

    def restore_or_initialize(self):
        """Restore the latest checkpoint and return its path; with none, run `init_fn`."""
        if self._paths:
            self._checkpoint.restore(self._paths[-1])
            return self.latest_checkpoint
        if self._init_fn is not None:
            self._init_fn()
        return None

    def _delete(self, path):
        """Delete a checkpoint past `max_to_keep`, when it is one of this manager's names.

        NOTE: the save is already recorded, so a file that cannot be deleted is a warning,
        not an error that would read as a failed save.
        """
        name = os.path.basename(path)
        if os.path.dirname(path) != self._directory or not self._own.fullmatch(name):
            return
        try:
            files.remove(path)
        except OSError as error:
            warnings.warn(
                f"could not delete the old checkpoint {path + files.SUFFIX!r}: {error}",
                stacklevel=3,
            )

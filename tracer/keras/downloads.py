"""`tt.keras.utils.get_file`: a file fetched from a URL into Keras's cache folder (once; later
calls find it there), checked against a hash where one is given, and extracted where asked.

It behaves as Keras 3's `get_file` that TensorFlow 2.21 ships: the cache is `cache_dir`
(`$KERAS_HOME`, or `~/.keras`, or `/tmp/.keras` where that cannot be written), the file goes
into its `cache_subdir` ("datasets") under the name `fname` (or the URL's last part), it
prints `Downloading data from URL` before a download, a download that fails raises
`Exception("URL fetch failure on URL: CODE -- REASON")` and leaves no partial file, and an
archive extracted with `extract=True` (or `untar=True`) goes to a folder beside it whose path
is returned (docs/keras_downloads.md).

What the URL sends is never trusted: a name that would leave the cache folder (`fname` with a
path separator, "." or "..") is refused before anything is fetched, and an archive is
extracted only when every member stays inside the extraction folder (no absolute names, no
"..", no links leading out, no devices); otherwise nothing of it is written and the error
names the member.
"""

import contextlib
import hashlib
import os
import shutil
import tempfile
import urllib.parse
import warnings

_HASH_CHUNK = 1 << 16  # bytes hashed at a time


def get_file(
    fname=None,
    origin=None,
    untar=False,
    md5_hash=None,
    file_hash=None,
    cache_subdir="datasets",
    hash_algorithm="auto",
    extract=False,
    archive_format="auto",
    cache_dir=None,
    force_download=False,
):
    """The path of the file fetched from `origin` (or of the folder its archive was
    extracted to), fetched only where the cache does not hold it already (or `file_hash`
    says the cached copy is not the file, or `force_download`)."""
    if origin is None:
        raise ValueError('get_file: give the "origin" argument (the URL of the file to fetch)')
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    folder = os.path.join(_writable_home(cache_dir), cache_subdir)
    os.makedirs(folder, exist_ok=True)
    name = _file_name(fname, origin)
    target, extraction = _places(folder, name, given=bool(fname), archive=extract or untar)
    cached = not force_download and os.path.exists(target)
    if cached and file_hash is not None and not _hash_matches(target, file_hash, hash_algorithm):
        print(
            f"A local file was found, but it seems to be incomplete or outdated because the "
            f"{_algorithm(hash_algorithm, file_hash)} file hash does not match the original "
            f"value of {file_hash} so we will re-download the data."
        )
        cached = False
    if not cached:
        _download(origin, target)
        _check_hash(target, file_hash, hash_algorithm)
    if extraction is None:
        return target
    if not extract_archive(target, extraction, "tar" if untar else archive_format):
        warnings.warn("Could not extract archive.", stacklevel=2)
    return extraction


def keras_home():
    """Keras's folder: `$KERAS_HOME`, else `~/.keras`."""
    return os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")


def _writable_home(cache_dir):
    """`cache_dir` (Keras's folder where None), made where it is not yet, or `/tmp/.keras`
    where it cannot be written."""
    home = os.path.expanduser(keras_home() if cache_dir is None else os.fspath(cache_dir))
    with contextlib.suppress(OSError):  # (not ours to make: the fallback below)
        os.makedirs(home, exist_ok=True)
    if os.access(home, os.W_OK):
        return home
    return os.path.join("/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir(), ".keras")


def _file_name(fname, origin):
    """`fname`, or the last part of the URL's path; ValueError for a name that is a path."""
    if fname:
        name = os.fsdecode(os.fspath(fname))
        separators = [s for s in (os.sep, os.altsep) if s]
        if any(s in name for s in separators) or name in (".", ".."):
            raise ValueError(
                f"get_file: fname must be a file's name, not a path ({name!r}); the folder "
                f"it goes to is cache_dir/cache_subdir"
            )
        return name
    name = os.path.basename(urllib.parse.urlsplit(origin).path)
    if not name or name in (".", ".."):
        raise ValueError(f"get_file: the URL {origin!r} names no file; give the fname argument")
    return name


def _places(folder, name, given, archive):
    """(where the download goes, where its archive is extracted or None), as Keras 3 names
    them: a given name with a dot keeps it for the archive and extracts to
    `<name up to the dot>_extracted`; otherwise the archive is `<name>_archive` and the
    folder `<name>`."""
    if not archive:
        return os.path.join(folder, name), None
    if given and "." in name:
        stem = name[: name.index(".")]
        return os.path.join(folder, name), os.path.join(folder, f"{stem}_extracted")
    return os.path.join(folder, f"{name}_archive"), os.path.join(folder, name)


def _download(origin, target):
    """`origin` into `target` through a temporary file beside it, so that a failed or
    interrupted download leaves neither a partial file nor an older copy half-replaced."""
    import urllib.error  # (here: with urllib.request they take tt.keras's import 13 ms)
    import urllib.request

    print(f"Downloading data from {origin}")
    handle, partial = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".download-")
    os.close(handle)
    try:
        try:
            urllib.request.urlretrieve(origin, partial)
        except urllib.error.HTTPError as error:
            raise Exception(
                f"URL fetch failure on {origin}: {error.code} -- {error.msg}"
            ) from error
        except urllib.error.URLError as error:
            raise Exception(
                f"URL fetch failure on {origin}: {error.errno} -- {error.reason}"
            ) from error
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def _algorithm(hash_algorithm, file_hash):
    if hash_algorithm in ("sha256", "md5"):
        return hash_algorithm
    if hash_algorithm != "auto":
        raise ValueError(
            f"get_file: hash_algorithm must be 'auto', 'sha256' or 'md5', not {hash_algorithm!r}"
        )
    return "sha256" if len(str(file_hash)) == 64 else "md5"


def _hash_matches(path, file_hash, hash_algorithm):
    digest = hashlib.new(_algorithm(hash_algorithm, file_hash))
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(_HASH_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest() == str(file_hash)


def _check_hash(path, file_hash, hash_algorithm):
    """ValueError, the fetched file at `path` removed, where it is not the file the hash says."""
    if file_hash is None or _hash_matches(path, file_hash, hash_algorithm):
        return
    os.remove(path)
    raise ValueError(
        f"Incomplete or corrupted file detected. The {_algorithm(hash_algorithm, file_hash)} "
        f"file hash does not match the provided value of {file_hash}."
    )


def extract_archive(path, folder, archive_format="auto"):
    """Extract the tar or zip archive at `path` into `folder`; whether it was one of the
    formats asked ("auto": tar then zip; "tar", "zip", or a list of them; None: none).
    ValueError, with nothing written, where a member would land outside `folder`."""
    import tarfile  # (here, as urllib.request is in _download)
    import zipfile

    if archive_format is None:
        return False
    formats = ["tar", "zip"] if archive_format == "auto" else archive_format
    formats = [formats] if isinstance(formats, str) else list(formats)
    for kind in formats:
        if kind not in ("tar", "zip"):
            raise ValueError(f"get_file: archive_format {kind!r} is not 'tar' or 'zip'")
        if kind == "tar" and tarfile.is_tarfile(path):
            _extract_into(folder, lambda: _extract_tar(path, folder))
            return True
        if kind == "zip" and zipfile.is_zipfile(path):
            _extract_into(folder, lambda: _extract_zip(path, folder))
            return True
    return False


def _extract_tar(path, folder):
    import tarfile

    with tarfile.open(path) as archive:
        members, links = archive.getmembers(), set()
        for member in members:
            _check_tar_member(member, folder, path, links)
        if hasattr(tarfile, "data_filter"):  # (Python's own check too, where it has one)
            archive.extractall(folder, members=members, filter="data")
        else:
            archive.extractall(folder, members=members)


def _extract_zip(path, folder):
    import zipfile

    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            _inside(folder, name, path)
        archive.extractall(folder)


def _extract_into(folder, extract):
    """Run `extract`; where it fails, remove what it wrote (a folder it made) and raise."""
    existed = os.path.exists(folder)
    try:
        extract()
    except BaseException:
        if not existed and os.path.isdir(folder):
            shutil.rmtree(folder)
        raise


def _inside(folder, name, archive):
    """ValueError unless the member `name` of `archive` lands inside `folder`."""
    base = os.path.realpath(folder)
    landing = os.path.realpath(os.path.join(base, name))
    if os.path.isabs(name) or os.path.commonpath([base, landing]) != base:
        raise ValueError(
            f"get_file: {archive}: the member {name!r} would be written outside {folder}; "
            f"nothing was extracted"
        )
    return landing


def _check_tar_member(member, folder, archive, links):
    """ValueError unless `member` lands inside `folder`, and a link's target too, without
    passing through an earlier member that is a link (`links`, their paths in the archive,
    which this adds to): a chain of links, each inside on its own, can lead out."""
    landing = _inside(folder, member.name, archive)
    paths = [os.path.relpath(landing, os.path.realpath(folder))]
    if member.issym() or member.islnk():
        start = os.path.dirname(landing) if member.issym() else os.path.realpath(folder)
        target = _inside(
            folder, os.path.relpath(os.path.join(start, member.linkname), folder), archive
        )
        paths.append(os.path.relpath(target, os.path.realpath(folder)))
        links.add(paths[0])
    elif not (member.isfile() or member.isdir()):
        raise ValueError(
            f"get_file: {archive}: the member {member.name!r} is not a file, folder or link; "
            f"nothing was extracted"
        )
    for path in paths:
        parts = path.split(os.sep)
        through = [os.sep.join(parts[:k]) for k in range(1, len(parts))]
        if any(part in links for part in through):
            raise ValueError(
                f"get_file: {archive}: the member {member.name!r} goes through a link of the "
                f"archive; nothing was extracted"
            )

"""Outputs never destroy: the checks of io/outputs.py and io/atomic.py, at depth and from the CLI.

Every writer of the tool goes through :func:`atomic_path`; these tests put each kind of
thing a user (or a planted file) can put at an output path there and check that it is
refused, left as it was, and that the message says what it is. Devices are made with
``mknod`` in the test's own folder (never a real ``/dev`` node).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import subprocess
from pathlib import Path

import pytest

from rlvr_boundary.errors import InputError
from rlvr_boundary.io import outputs as O
from rlvr_boundary.io.atomic import atomic_open, atomic_path
from rlvr_boundary.io.text import iter_json_lines
from tests.fuzz.harness import run_cli

COUNTS_A = '{"id": "a", "n": 4, "c": 2}\n{"id": "b", "n": 4, "c": 1}\n'
COUNTS_B = '{"id": "a", "n": 4, "c": 3}\n{"id": "b", "n": 4, "c": 0}\n'


@pytest.fixture(autouse=True)
def _fresh_registry():
    O.forget_inputs()
    yield
    O.forget_inputs()


def _char_device(path: Path) -> Path:
    """A character device node like /dev/full (1, 7) at ``path``; skip without CAP_MKNOD."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot make a device node here ({exc})")
    return path


@contextlib.contextmanager
def _unix_socket(path: Path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(path))
    try:
        yield path
    finally:
        s.close()


def _kinds(tmp_path: Path):
    """(name, path, word in the message) of every non-regular thing at an output path."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    d = tmp_path / "dir"
    d.mkdir()
    link_out = tmp_path / "to_stdout"
    link_out.symlink_to("/proc/self/fd/1")
    target = tmp_path / "target.json"
    target.write_text("keep")
    link_file = tmp_path / "to_file"
    link_file.symlink_to(target)
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere" / "x")
    return [("fifo", fifo, "a FIFO"), ("directory", d, "is a directory"),
            ("link to stdout", link_out, "symbolic link"),
            ("link to a regular file", link_file, "symbolic link"),
            ("dangling link", dangling, "symbolic link")]


def _snapshot(path: Path):
    st = os.lstat(path)
    return (st.st_mode, st.st_ino, os.readlink(path) if stat.S_ISLNK(st.st_mode) else None)


def test_non_regular_destinations_are_refused_and_left_as_they_were(tmp_path):
    cases = _kinds(tmp_path)
    cases.append(("character device", _char_device(tmp_path / "full"), "a character device"))
    for name, path, word in cases:
        before = _snapshot(path)
        with pytest.raises(InputError, match=word):
            with atomic_open(path) as fh:
                fh.write("data")
        assert _snapshot(path) == before, name
    assert (tmp_path / "target.json").read_text() == "keep"  # never written through the link
    assert not (tmp_path / "nowhere").exists()
    # no temporary file left behind
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_socket_is_refused(tmp_path):
    with _unix_socket(tmp_path / "s.sock") as path:
        with pytest.raises(InputError, match="a socket"):
            with atomic_path(path):
                pass
        assert stat.S_ISSOCK(os.lstat(path).st_mode)


def test_a_regular_file_is_replaced_and_a_read_only_one_is_not(tmp_path):
    p = tmp_path / "r.json"
    p.write_text("old")
    with atomic_open(p) as fh:
        fh.write("new")
    assert p.read_text() == "new"
    p.chmod(0o444)  # even root may not: a read-only mode says "keep"
    with pytest.raises(InputError, match="read-only"):
        with atomic_open(p) as fh:
            fh.write("newer")
    assert p.read_text() == "new"


def test_a_file_read_by_a_reader_cannot_be_replaced_but_our_own_output_can(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(COUNTS_A)
    list(iter_json_lines(src))
    with pytest.raises(InputError, match="would overwrite the input"):
        with atomic_open(src) as fh:
            fh.write("x")
    assert src.read_text() == COUNTS_A
    out = tmp_path / "out.jsonl"
    with atomic_open(out) as fh:
        fh.write(COUNTS_B)
    list(iter_json_lines(out))  # reading our own output back does not make it an input
    with atomic_open(out) as fh:
        fh.write(COUNTS_A)
    assert out.read_text() == COUNTS_A


def test_nothing_is_written_into_a_shard_folder_that_was_read(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rlvr_boundary.io.rollouts import reduce_counts
    from rlvr_boundary.io.store import ShardedWriter

    shards = tmp_path / "shards"
    shards.mkdir()
    pq.write_table(pa.table({"prompt_id": ["a", "a"], "model": ["m", "m"], "sample_idx": [0, 1],
                             "correct": [True, False]}), shards / "part-0.parquet")
    reduce_counts(shards)
    for dest in (shards / "part-1.parquet", shards / "sub" / "x.json"):
        with pytest.raises(InputError, match="into the input folder"):
            with atomic_path(dest):
                pass
    with pytest.raises(InputError, match="input folder"):
        ShardedWriter(shards)
    with pytest.raises(InputError, match="inside the input folder"):
        ShardedWriter(shards / "new")
    assert sorted(p.name for p in shards.iterdir()) == ["part-0.parquet"]
    # a folder we wrote ourselves and read back stays ours (verify reads its own shards)
    own = ShardedWriter(tmp_path / "own")
    own.write("0", pa.table({"prompt_id": ["a"], "model": ["m"], "sample_idx": [0],
                             "correct": [True]}))
    reduce_counts(tmp_path / "own")
    own.finish({"rows": 1})
    assert (tmp_path / "own" / "_COMPLETE").is_file()


def test_a_deleted_input_whose_inode_is_reused_is_forgotten(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(COUNTS_A)
    list(iter_json_lines(src))
    key = next(iter(O._INPUTS))
    src.unlink()
    assert O._noted(O._INPUTS, key) is None  # its path no longer names that file


def test_shard_folder_that_is_a_file_or_an_input_is_refused(tmp_path):
    from rlvr_boundary.io.store import ShardedWriter

    f = tmp_path / "prompts.jsonl"
    f.write_text('{"id": "a", "prompt": "x"}\n')
    with pytest.raises(InputError, match="not a folder"):
        ShardedWriter(f)
    list(iter_json_lines(f))
    with pytest.raises(InputError, match="is an input of this run"):
        ShardedWriter(f)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="FIFO"):
        ShardedWriter(fifo)


def test_stdout_is_accepted_for_json_results_only(tmp_path):
    with pytest.raises(InputError, match="standard output"):
        with atomic_path("-"):
            pass
    with pytest.raises(InputError, match="accepted only for a JSON result"):
        O.check_outputs({"--out": "-"}, [])
    with pytest.raises(InputError, match="both write to standard output"):
        O.check_outputs({"--json": "-", "--summary": "-"}, [])


def test_suffixes_name_the_format(tmp_path):
    with pytest.raises(InputError, match="ending this command cannot write"):
        O.check_outputs({"--out": tmp_path / "f.txt"}, [], suffixes={"--out": (".png", ".pdf")})
    O.check_outputs({"--out": tmp_path / "f.PNG"}, [], suffixes={"--out": (".png", ".pdf")})


def test_removed_on_failure_never_hides_the_error(tmp_path, monkeypatch):
    out = tmp_path / "x.html"

    def unlink_fails(self, *a, **k):
        raise PermissionError(13, "Permission denied", str(self))

    with pytest.raises(InputError, match="the real reason"):
        with O.removed_on_failure(out):
            out.write_text("partial")
            monkeypatch.setattr(Path, "unlink", unlink_fails)
            raise InputError("the real reason")


def test_write_errors_are_input_errors_and_leave_no_temporary_file(tmp_path):
    import errno

    with pytest.raises(InputError, match=r"cannot write .*x.json \(No space left on device\)"):
        with atomic_path(tmp_path / "x.json"):
            raise OSError(errno.ENOSPC, "No space left on device")
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def read_only_folder(tmp_path):
    """A read-only file system (a tmpfs mounted ro); skipped where mounting is not allowed."""
    d = tmp_path / "ro"
    d.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(d)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a read-only tmpfs here ({r.stderr.strip()})")
    try:
        yield d
    finally:
        subprocess.run(["umount", str(d)], check=False)


def test_read_only_folder_gets_the_real_reason_from_every_writer(tmp_path, read_only_folder):
    ro = read_only_folder
    (tmp_path / "a.jsonl").write_text(COUNTS_A)
    (tmp_path / "b.jsonl").write_text(COUNTS_B)
    with pytest.raises(InputError, match="read-only file system"):
        with atomic_path(ro / "x.json"):
            pass
    code, err = run_cli(tmp_path, ["report", "a.jsonl", "b.jsonl", "--no-figures", "--out",
                                   "ro/r.html"])
    assert code == 2 and "Traceback" not in err and "read-only file system" in err
    lines = [json.dumps({"prompt_id": "a", "model": "m", "sample_idx": i,
                         "text": "\\boxed{4}"}) for i in range(2)]
    (tmp_path / "raw.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "gold.jsonl").write_text('{"prompt_id": "a", "answer": "4"}\n')
    for out in ("ro/v.parquet", "ro/vdir"):
        code, err = run_cli(tmp_path, ["verify", "raw.jsonl", "--gold", "gold.jsonl",
                                       "--backend", "canonical", "--out", out])
        assert code == 2 and "Traceback" not in err, err
        assert "read-only file system" in err.lower() or "not writable" in err
    assert list(ro.iterdir()) == []


@pytest.mark.parametrize("flag", ["--json"])
def test_cli_outputs_on_non_regular_paths_exit_2_and_change_nothing(tmp_path, flag):
    (tmp_path / "a.jsonl").write_text(COUNTS_A)
    (tmp_path / "b.jsonl").write_text(COUNTS_B)
    for name, path, word in _kinds(tmp_path):
        before = _snapshot(path)
        code, err = run_cli(tmp_path, ["compare", "--base", "a.jsonl", "--rl", "b.jsonl",
                                       "--ks", "1-4", "--bootstrap", "20", flag, str(path)])
        assert code == 2 and word in err, (name, err)
        assert _snapshot(path) == before, name


def test_json_to_stdout_leaves_stdout_a_single_document(tmp_path, capsys):
    from rlvr_boundary.cli import main

    (tmp_path / "a.jsonl").write_text(COUNTS_A)
    (tmp_path / "b.jsonl").write_text(COUNTS_B)
    from rlvr_boundary import console as con

    saved = con.console._file
    try:
        code = main(["compare", "--base", str(tmp_path / "a.jsonl"), "--rl",
                     str(tmp_path / "b.jsonl"), "--ks", "1-4", "--bootstrap", "20",
                     "--json", "-"])
    finally:
        con.console._file = saved
    out = capsys.readouterr()
    assert code == 0
    doc = json.loads(out.out)  # the whole of stdout is the result
    assert doc["kind"] == "compare" and doc["ks"] == [1, 2, 3, 4]
    assert "k* =" in out.err and "wrote -" in out.err


def test_an_input_that_is_a_fifo_or_a_device_is_refused_before_it_is_opened(tmp_path):
    """A FIFO without a writer would block the first open forever; a pipe cannot be read
    twice (format detection, hash, rows)."""
    (tmp_path / "b.jsonl").write_text(COUNTS_B)
    (tmp_path / "raw.jsonl").write_text('{"prompt_id": "a", "model": "m", "sample_idx": 0, '
                                        '"text": "4"}\n')
    os.mkfifo(tmp_path / "fifo")
    for argv in (["compare", "--base", "fifo", "--rl", "b.jsonl"], ["price", "fifo"],
                 ["theory", "diagnose", "fifo"], ["report", "--from", "fifo", "--out", "x.html"],
                 ["verify", "raw.jsonl", "--gold", "fifo", "--out", "v.parquet"]):
        code, err = run_cli(tmp_path, argv)
        assert code == 2 and "fifo: is a FIFO (named pipe), not a regular file" in err, argv
    dev = _char_device(tmp_path / "zero")
    code, err = run_cli(tmp_path, ["compare", "--base", str(dev), "--rl", "b.jsonl"])
    assert code == 2 and "a character device, not a regular file" in err

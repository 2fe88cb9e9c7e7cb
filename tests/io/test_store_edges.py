"""The shard store's rough edges: a refused resume names what differs; a killed run's
temporary shard does not outlive a successful resume."""

from __future__ import annotations

import pyarrow as pa
import pytest

from rlvr_boundary.errors import InputError
from rlvr_boundary.io.store import ShardedWriter


def test_refused_resume_names_each_setting_with_old_and_new_value(tmp_path):
    sampling = {"temperature": 1.0, "top_p": 1.0, "max_new_tokens": 512, "token_arrays": False}
    ShardedWriter(tmp_path / "s", manifest={"sampling": sampling, "seed": 1},
                  must_match=("sampling", "seed"))
    with pytest.raises(InputError) as err:
        ShardedWriter(tmp_path / "s", manifest={"sampling": {**sampling, "temperature": 0.7,
                                                             "top_k": 20}, "seed": 1},
                      must_match=("sampling", "seed"))
    msg = str(err.value)
    assert "sampling.temperature: was 1.0, now 0.7" in msg
    assert "sampling.top_k: was not set, now 20" in msg
    # only the settings that differ, no raw dicts
    assert "max_new_tokens" not in msg and "{" not in msg and "seed" not in msg


def test_finish_removes_a_killed_runs_temporary_shard(tmp_path):
    w = ShardedWriter(tmp_path / "s")
    stale = tmp_path / "s" / ".part-r000-001.parquet.k3j2l1.tmp"
    stale.write_bytes(b"half a shard")          # what SIGKILL mid-write leaves
    other = tmp_path / "s" / "notes.tmp"          # not ours: kept
    other.write_text("x")
    w.write("r000-001", pa.table({"a": [1]}))
    assert stale.exists()                        # the store is not finished yet
    w.finish({})
    assert not stale.exists() and other.exists()
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == [
        "_COMPLETE", "_manifest.json", "notes.tmp", "part-r000-001.parquet"]


def _three_shards(folder):
    w = ShardedWriter(folder, manifest={"sampling": {"n": 2}}, must_match=("sampling",))
    for k, ids in (("a", ["p0", "p1"]), ("b", ["p2"]), ("c", ["p3", "p4", "p5"])):
        w.write(k, pa.table({"prompt_id": ids, "sample_idx": [0] * len(ids)}))
    (folder / ".part-d.parquet.x1y2.tmp").write_bytes(b"half a shard")  # a killed write
    w.finish({"rows": 6})
    return w


def test_a_shard_folder_reads_as_one_parquet_dataset(tmp_path):
    """pandas and pyarrow skip the manifest and the completion mark (names starting with
    '_' or '.') and read every row of every shard."""
    pd = pytest.importorskip("pandas")
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    folder = tmp_path / "samples"
    _three_shards(folder)
    assert sorted(p.name for p in folder.iterdir()) == [
        "_COMPLETE", "_manifest.json", "part-a.parquet", "part-b.parquet", "part-c.parquet"]
    want = [f"p{i}" for i in range(6)]
    assert sorted(pd.read_parquet(folder).prompt_id) == want
    assert sorted(ds.dataset(folder, format="parquet").to_table()["prompt_id"].to_pylist()) == want
    assert sorted(pq.read_table(folder)["prompt_id"].to_pylist()) == want


def test_a_folder_with_the_old_manifest_name_is_read_and_migrated_on_resume(tmp_path):
    from rlvr_boundary.io.rollouts import read_manifest
    from rlvr_boundary.io.schema import find_manifest

    folder = tmp_path / "samples"
    _three_shards(folder)
    (folder / "_manifest.json").rename(folder / "manifest.json")  # as rlvr-boundary 0.1 wrote it
    before = (folder / "manifest.json").read_text()
    assert find_manifest(folder) == folder / "manifest.json"
    assert read_manifest(folder)["sampling"] == {"n": 2}
    # Its settings are checked: a refused resume changes nothing.
    with pytest.raises(InputError) as err:
        ShardedWriter(folder, manifest={"sampling": {"n": 3}}, must_match=("sampling",))
    assert "sampling.n: was 2, now 3" in str(err.value)
    assert err.value.path == str(folder / "manifest.json")
    assert (folder / "manifest.json").read_text() == before
    assert not (folder / "_manifest.json").exists()
    # A resume with the same settings keeps the shards and renames the manifest.
    w = ShardedWriter(folder, manifest={"sampling": {"n": 2}}, must_match=("sampling",))
    assert w.done() == {"a", "b", "c"}
    assert not (folder / "manifest.json").exists()
    assert find_manifest(folder) == folder / "_manifest.json"
    assert read_manifest(folder)["sampling"] == {"n": 2}


def test_the_new_manifest_wins_over_a_leftover_old_one(tmp_path):
    """A crash between writing _manifest.json and removing manifest.json leaves both: the
    new one is read and the old one removed by the next run."""
    from rlvr_boundary.io.rollouts import read_manifest

    folder = tmp_path / "samples"
    _three_shards(folder)
    (folder / "manifest.json").write_text('{"sampling": {"n": 99}}')
    assert read_manifest(folder)["sampling"] == {"n": 2}
    ShardedWriter(folder, manifest={"sampling": {"n": 2}}, must_match=("sampling",))
    assert not (folder / "manifest.json").exists()


def test_find_manifest_of_a_file_and_of_a_folder(tmp_path):
    from rlvr_boundary.io.schema import find_manifest, manifest_path_for

    table = tmp_path / "x.parquet"
    table.write_bytes(b"")
    assert manifest_path_for(table) == tmp_path / "x.manifest.json"
    assert find_manifest(table) is None
    (tmp_path / "x.manifest.json").write_text("{}")
    assert find_manifest(table) == tmp_path / "x.manifest.json"
    folder = tmp_path / "d"
    folder.mkdir()
    assert manifest_path_for(folder) == folder / "_manifest.json"
    assert find_manifest(folder) is None

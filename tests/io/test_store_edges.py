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
        "_COMPLETE", "manifest.json", "notes.tmp", "part-r000-001.parquet"]

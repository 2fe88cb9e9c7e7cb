"""Per-sample facts for the report, read by streaming the rollout tables.

Counts come from :func:`rlvr_boundary.io.rollouts.reduce_counts`; this module
gathers what counts cannot say, in bounded memory (Arrow group-bys per batch,
merged as we go):

- answer classes per (model, prompt): how many samples gave each extracted
  answer, and how many of those were correct (diversity, per-answer support);
- output-quality flags (``q_*`` columns): share / mean per model, split by
  correct and incorrect samples;
- token summaries (``entropy_mean``, ``rbf_mean``, ``log_ppl``, ``num_tokens``):
  count, mean and standard deviation per model and verdict, and the mean
  entropy in each relative-position bin (``entropy_bins``);
- the texts of a few chosen (model, prompt) pairs, in a second pass, for the
  review lists. Texts are model output: they are returned raw here and escaped
  by the HTML writer.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rlvr_boundary.io.rollouts import iter_rollout_batches, table_columns

QUALITY_COLUMNS = ("q_no_boxed", "q_multi_boxed", "q_text_after_answer", "q_cjk_share",
                   "q_language_mix", "q_redundancy3")
TOKEN_COLUMNS = ("num_tokens", "entropy_mean", "rbf_mean", "log_ppl")


class SampleFacts:
    """Accumulates answer classes, quality flags and token summaries over batches."""

    def __init__(self) -> None:
        self.answers: dict = defaultdict(lambda: defaultdict(lambda: [0, 0]))  # (m, p) -> a -> [n, c]
        self.moments: dict = defaultdict(lambda: np.zeros(3))  # (col, m, correct) -> [n, sum, sum2]
        self.bins: dict = defaultdict(lambda: None)  # (m, correct) -> (B, 2) [count, sum]
        self.columns: set[str] = set()
        self.truncated: dict = defaultdict(lambda: np.zeros(2))  # m -> [rows, truncated]

    def add(self, t: pa.Table) -> None:
        names = set(t.column_names)
        self.columns |= names
        if "answer" in names:
            g = t.select(["model", "prompt_id", "answer", "correct"]).group_by(
                ["model", "prompt_id", "answer"], use_threads=False).aggregate(
                [("correct", "count"), ("correct", "sum")])
            for m, p, a, cnt, cs in zip(*(g.column(x).to_pylist() for x in
                                          ("model", "prompt_id", "answer", "correct_count",
                                           "correct_sum"))):
                cell = self.answers[(m, p)][a]
                cell[0] += cnt
                cell[1] += cs or 0
        for col in (*QUALITY_COLUMNS, *TOKEN_COLUMNS):
            if col not in names:
                continue
            v = t.column(col)
            if pa.types.is_boolean(v.type):
                v = pc.cast(v, pa.float64())
            sub = pa.table({"model": t.column("model"), "correct": t.column("correct"),
                            "v": pc.cast(v, pa.float64())}).filter(pc.is_valid(v))
            if not sub.num_rows:
                continue
            sub = sub.append_column("v2", pc.multiply(sub.column("v"), sub.column("v")))
            g = sub.group_by(["model", "correct"], use_threads=False).aggregate(
                [("v", "count"), ("v", "sum"), ("v2", "sum")])
            for m, ok, cnt, s1, s2 in zip(*(g.column(x).to_pylist() for x in
                                            ("model", "correct", "v_count", "v_sum", "v2_sum"))):
                self.moments[(col, m, bool(ok))] += (cnt, s1, s2)
        if "entropy_bins" in names:
            self._add_bins(t)
        if "truncated" in names:
            g = t.select(["model", "truncated"]).group_by("model", use_threads=False).aggregate(
                [("truncated", "count"), ("truncated", "sum")])
            for m, cnt, s in zip(*(g.column(x).to_pylist() for x in
                                   ("model", "truncated_count", "truncated_sum"))):
                self.truncated[m] += (cnt, s or 0)

    def _add_bins(self, t: pa.Table) -> None:
        col = t.column("entropy_bins").combine_chunks()
        lengths = pc.fill_null(pc.list_value_length(col), 0).to_numpy()
        flat = pc.list_flatten(col)
        values = pc.fill_null(flat, np.nan).to_numpy(zero_copy_only=False).astype(float)
        row = np.repeat(np.arange(len(lengths)), lengths)
        pos = np.arange(values.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        models = np.asarray(t.column("model").to_pylist(), dtype=object)
        correct = np.asarray(t.column("correct").to_pylist(), dtype=bool)
        if not values.size:
            return
        B = int(pos.max()) + 1
        ok = np.isfinite(values)
        for m in set(models.tolist()):
            for verdict in (True, False):
                rows = (models == m) & (correct == verdict)
                sel = ok & rows[row]
                if not sel.any():
                    continue
                acc = np.zeros((B, 2))
                np.add.at(acc[:, 0], pos[sel], 1)
                np.add.at(acc[:, 1], pos[sel], values[sel])
                old = self.bins[(m, verdict)]
                if old is not None and old.shape[0] != B:
                    size = max(B, old.shape[0])
                    acc = np.pad(acc, ((0, size - B), (0, 0)))
                    old = np.pad(old, ((0, size - old.shape[0]), (0, 0)))
                self.bins[(m, verdict)] = acc if old is None else old + acc

    # ----------------------------------------------------------------- results

    def answer_classes(self, models: list[str], prompt_ids: list[str]) -> dict | None:
        """``{"all": {m: [P dicts]}, "correct": {m: [P dicts]}}`` or None without answers.

        A missing answer (incomplete output) is the class "NA" in ``all`` (it is
        never a correct answer class).
        """
        if "answer" not in self.columns:
            return None
        out: dict = {"all": {}, "correct": {}}
        for m in models:
            alls, corr = [], []
            for p in prompt_ids:
                cells = self.answers.get((m, p), {})
                alls.append({("NA" if a is None else a): v[0] for a, v in cells.items()})
                corr.append({a: v[1] for a, v in cells.items() if a is not None and v[1] > 0})
            out["all"][m], out["correct"][m] = alls, corr
        return out

    def quality(self, models: list[str]) -> dict | None:
        present = [c for c in QUALITY_COLUMNS if c in self.columns]
        return self._table(present, models) if present else None

    def tokens(self, models: list[str]) -> dict | None:
        present = [c for c in TOKEN_COLUMNS if c in self.columns]
        if not present and "entropy_bins" not in self.columns:
            return None
        out = self._table(present, models) if present else {}
        bins = {}
        for m in models:
            for verdict, name in ((True, "correct"), (False, "incorrect")):
                acc = self.bins.get((m, verdict))
                if acc is not None:
                    with np.errstate(invalid="ignore", divide="ignore"):
                        mean = np.where(acc[:, 0] > 0, acc[:, 1] / np.maximum(acc[:, 0], 1), np.nan)
                    bins.setdefault(m, {})[name] = [None if not np.isfinite(x) else float(x)
                                                    for x in mean]
        if bins:
            out["entropy_by_position"] = bins
        if self.truncated:
            out["truncated_share"] = {m: float(v[1] / v[0]) for m, v in self.truncated.items()
                                      if v[0] > 0}
        return out

    def _table(self, cols: list[str], models: list[str]) -> dict:
        res: dict = {}
        for col in cols:
            res[col] = {}
            for m in models:
                cell = {}
                for verdict, name in ((None, "all"), (True, "correct"), (False, "incorrect")):
                    mom = (self.moments[(col, m, True)] + self.moments[(col, m, False)]
                           if verdict is None else self.moments[(col, m, verdict)])
                    cnt, s1, s2 = mom
                    if cnt == 0:
                        cell[name] = None
                        continue
                    mean = s1 / cnt
                    var = max(s2 / cnt - mean * mean, 0.0) * cnt / max(cnt - 1, 1)
                    cell[name] = {"count": int(cnt), "mean": float(mean), "std": float(np.sqrt(var))}
                res[col][m] = cell
        return res


def with_quality_flags(t: pa.Table) -> pa.Table:
    """Add the ``q_*`` columns computed from ``text`` (and ``prompt``) when they are absent."""
    from rlvr_boundary.verify.quality import quality_flags

    texts = t.column("text").to_pylist()
    prompts = t.column("prompt").to_pylist() if "prompt" in t.column_names else [None] * len(texts)
    flags = [quality_flags(x, p) if x is not None else None for x, p in zip(texts, prompts)]
    for c in QUALITY_COLUMNS:
        t = t.append_column(c, pa.array([f[c] if f else None for f in flags]))
    return t.drop_columns([c for c in ("text", "prompt") if c in t.column_names])


def gather_facts(paths: list[Path], progress=None) -> SampleFacts:
    """Stream every rollout table once and accumulate :class:`SampleFacts`.

    Tables with completion text but without quality columns get the flags
    computed here (:mod:`rlvr_boundary.verify.quality`), so graded-elsewhere data shows them.
    """
    facts = SampleFacts()
    want = ["answer", "truncated", "entropy_bins", *QUALITY_COLUMNS, *TOKEN_COLUMNS]
    for path in paths:
        names = set(table_columns(path))
        cols = [c for c in want if c in names]
        derive = "text" in names and not any(c in names for c in QUALITY_COLUMNS)
        if derive:
            cols += ["text"] + (["prompt"] if "prompt" in names else [])
        if not cols:
            continue
        for batch in iter_rollout_batches(path, cols):
            if derive:
                batch = with_quality_flags(batch)
            facts.add(batch)
            if progress is not None:
                progress(batch.num_rows)
    return facts


def collect_texts(paths: list[Path], wanted: set[tuple[str, str]], *, per_pair: int = 2,
                  max_chars: int = 2000) -> dict:
    """Texts of chosen (model, prompt) pairs: up to ``per_pair`` correct and incorrect each.

    Returns
    -------
    dict
        ``{(model, prompt_id): {"correct": [...], "incorrect": [...]}}``, each a list
        of dicts ``sample_idx``, ``text`` (cut to ``max_chars``), ``cut`` (bool),
        ``answer``; lowest sample_idx first, so the choice is reproducible.
    """
    out: dict = {}
    if not wanted:
        return out
    models = pa.array(sorted({m for m, _ in wanted}))
    prompts = pa.array(sorted({p for _, p in wanted}))
    for path in paths:
        names = set(table_columns(path))
        if "text" not in names:
            continue
        cols = ["text"] + (["answer"] if "answer" in names else [])
        for batch in iter_rollout_batches(path, cols):
            mask = pc.and_(pc.is_in(batch.column("model"), value_set=models),
                           pc.is_in(batch.column("prompt_id"), value_set=prompts))
            sub = batch.filter(mask)
            if not sub.num_rows:
                continue
            answers = sub.column("answer").to_pylist() if "answer" in cols else [None] * sub.num_rows
            for m, p, i, ok, text, ans in zip(sub.column("model").to_pylist(),
                                               sub.column("prompt_id").to_pylist(),
                                               sub.column("sample_idx").to_pylist(),
                                               sub.column("correct").to_pylist(),
                                               sub.column("text").to_pylist(), answers):
                if (m, p) not in wanted or text is None:
                    continue
                slot = out.setdefault((m, p), {"correct": [], "incorrect": []})
                lst = slot["correct" if ok else "incorrect"]
                lst.append({"sample_idx": i, "text": text[:max_chars],
                            "cut": len(text) > max_chars, "answer": ans})
                lst.sort(key=lambda d: d["sample_idx"])
                del lst[per_pair:]
    return out

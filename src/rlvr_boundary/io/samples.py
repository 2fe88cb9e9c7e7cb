"""Per-sample facts for the audit, gathered in the same pass that counts the samples.

:func:`rlvr_boundary.io.inputs.load_inputs` feeds every validated batch of a
rollout table both to the count reducer and to :class:`SampleFacts`, which
gathers what counts cannot say, in bounded memory (Arrow group-bys per batch,
merged as we go):

- answer classes per (model, prompt): how many samples gave each extracted
  answer, and how many of those were correct (diversity, per-answer support);
- output-quality flags (``q_*`` columns): share / mean per model, split by
  correct and incorrect samples;
- token summaries (``entropy_mean``, ``rbf_mean``, ``log_ppl``, ``num_tokens``):
  count, mean and standard deviation per model and verdict, and the mean
  entropy in each relative-position bin (``entropy_bins``);
- quality flags derived from the completion text when a table has no ``q_*``
  columns, by the function the caller hands in (``flagger``: the verifiers'
  :func:`rlvr_boundary.verify.quality.quality_flags`; this module reads and
  tallies, it does not grade): computed on a uniform random sample (a reservoir of at most
  ``quality_sample`` completions per model, seeded), because the flags are
  pure-Python string scans that would otherwise cost more than reading the
  table; the result says how many completions the shares come from;
- the first two correct and first two incorrect texts (in file order, cut to
  2,000 characters) of every (model, prompt), so the review lists need no
  second pass; past a memory budget the keeper stops and
  :func:`collect_texts` fetches the few texts still wanted. Texts are model
  output: they are kept raw here and escaped by the HTML writer.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rlvr_boundary.io.rollouts import iter_rollout_batches, table_columns
from rlvr_boundary.io.schema import ROLLOUT_BY_NAME

#: The quality-flag columns: every ``q_*`` column of the schema.
QUALITY_COLUMNS = tuple(c for c in ROLLOUT_BY_NAME if c.startswith("q_"))
#: Per-sample token summaries averaged per model and verdict.
TOKEN_COLUMNS = ("num_tokens", "entropy_mean", "rbf_mean", "log_ppl")
#: Columns the facts read from a rollout table when present.
FACT_COLUMNS = ("answer", "truncated", "entropy_bins", *QUALITY_COLUMNS, *TOKEN_COLUMNS)
#: Texts kept per (model, prompt) and verdict, and their length cut.
TEXTS_PER_PAIR, TEXT_CHARS = 2, 2000
#: Characters of text the one-pass keeper may hold before it stops (about 0.5 GB).
TEXT_BUDGET = 250_000_000


class SampleFacts:
    """Accumulates answer classes, quality flags and token summaries over batches."""

    def __init__(self, *, quality_sample: int = 20_000, seed: int = 0,
                 keep_texts: bool = True, flagger=None) -> None:
        self.quality_sample = quality_sample
        #: ``flagger(text, prompt) -> {q_* column: value}``; None: flags are only read, never
        #: derived from text.
        self.flagger = flagger
        self.rng = np.random.default_rng(seed)
        self.reservoir: dict = {}  # m -> {"seen": int, "items": list of (text, prompt, correct)}
        self.keep_texts = keep_texts
        self.texts: dict = {}  # (m, p) -> {"correct": [...], "incorrect": [...]}
        self.text_chars = 0
        self.texts_complete = True
        self.answer_seen = False  # an all-null answer column carries no answers
        self.answers: dict = defaultdict(lambda: defaultdict(lambda: [0, 0]))  # (m, p) -> a -> [n, c]
        self.moments: dict = defaultdict(lambda: np.zeros(3))  # (col, m, correct) -> [n, sum, sum2]
        self.bins: dict = defaultdict(lambda: None)  # (m, correct) -> (B, 2) [count, sum]
        self.columns: set[str] = set()
        self.truncated: dict = defaultdict(lambda: np.zeros(2))  # m -> [rows, truncated]

    def add_batch(self, t: pa.Table, *, derive_quality: bool) -> None:
        """Take one validated rollout batch (with ``text`` and ``prompt`` when present).

        ``derive_quality`` feeds the texts to the quality-flag reservoir (for
        tables without ``q_*`` columns).
        """
        names = t.column_names
        if "text" in names:
            if derive_quality and self.flagger is not None:
                self._sample_for_quality(t)
            if self.keep_texts and self.texts_complete:
                self._keep_texts(t)
        drop = [c for c in ("text", "prompt") if c in names]
        self.add(t.drop_columns(drop) if drop else t)

    def _sample_for_quality(self, t: pa.Table) -> None:
        """Reservoir sampling (Vitter's algorithm R) of at most ``quality_sample`` rows per model."""
        models = t.column("model").to_numpy(zero_copy_only=False)
        has_text = pc.is_valid(t.column("text")).to_numpy(zero_copy_only=False)
        R = self.quality_sample
        for m in dict.fromkeys(models.tolist()):
            rows = np.flatnonzero((models == m) & has_text)
            if not rows.size:
                continue
            res = self.reservoir.setdefault(m, {"seen": 0, "items": []})
            t_idx = res["seen"] + 1 + np.arange(rows.size)  # 1-based position in the stream
            if R <= 0:  # 0 means every completion
                take, slots = rows, None
            else:
                u = self.rng.random(rows.size)
                accept = (t_idx <= R) | (u < R / t_idx)
                take = rows[accept]
                slots = np.where(t_idx[accept] <= R, t_idx[accept] - 1,
                                 self.rng.integers(0, R, accept.sum()))
            res["seen"] += rows.size
            if not take.size:
                continue
            sub = t.take(pa.array(take))
            texts = sub.column("text").to_pylist()
            prompts = (sub.column("prompt").to_pylist() if "prompt" in sub.column_names
                       else [None] * len(texts))
            oks = sub.column("correct").to_pylist()
            items = res["items"]
            for j, item in enumerate(zip(texts, prompts, oks)):
                if slots is None or slots[j] >= len(items):
                    items.append(item)
                else:
                    items[slots[j]] = item

    def _keep_texts(self, t: pa.Table) -> None:
        """The first TEXTS_PER_PAIR correct and incorrect texts of every (model, prompt)."""
        models = t.column("model").to_pylist()
        prompts = t.column("prompt_id").to_pylist()
        oks = t.column("correct").to_pylist()
        valid = pc.is_valid(t.column("text")).to_pylist()
        chosen = []
        for j, (m, p, ok, v) in enumerate(zip(models, prompts, oks, valid)):
            if not v:
                continue
            slot = self.texts.get((m, p))
            if slot is None:
                slot = self.texts[(m, p)] = {"correct": [], "incorrect": []}
            lst = slot["correct" if ok else "incorrect"]
            if len(lst) < TEXTS_PER_PAIR:
                lst.append(None)  # placeholder, filled below
                chosen.append((j, lst))
        if not chosen:
            return
        idx = pa.array([j for j, _ in chosen])
        texts = t.column("text").take(idx).to_pylist()
        answers = (t.column("answer").take(idx).to_pylist() if "answer" in t.column_names
                   else [None] * len(texts))
        sidx = t.column("sample_idx").take(idx).to_pylist()
        for (j, lst), text, ans, i in zip(chosen, texts, answers, sidx):
            lst[lst.index(None)] = {"sample_idx": i, "text": text[:TEXT_CHARS],
                                    "cut": len(text) > TEXT_CHARS, "answer": ans}
            self.text_chars += min(len(text), TEXT_CHARS)
        if self.text_chars > TEXT_BUDGET:
            # Too many pairs to hold their texts: drop them all and fetch the few that
            # are wanted after the audit (collect_texts), rather than keep a partial set.
            self.texts, self.texts_complete = {}, False

    def finish(self) -> None:
        """Compute the quality flags of the sampled completions (call once, after the last batch)."""
        for m, res in self.reservoir.items():
            items = res["items"]
            if not items:
                continue
            flags = [self.flagger(text, prompt) for text, prompt, _ in items]
            cols = {"model": pa.array([m] * len(items), pa.string()),
                    "correct": pa.array([ok for _, _, ok in items], pa.bool_())}
            for c in QUALITY_COLUMNS:
                cols[c] = pa.array([f[c] for f in flags], ROLLOUT_BY_NAME[c].type)
            self.add(pa.table(cols))
            res["sampled"] = len(items)
            res["items"] = []

    def quality_sampling(self) -> dict | None:
        """``{model: {"sampled": s, "completions": N}}`` when flags were derived from text."""
        if not self.reservoir:
            return None
        return {m: {"sampled": int(r.get("sampled", 0)), "completions": int(r["seen"])}
                for m, r in self.reservoir.items()}

    def add(self, t: pa.Table) -> None:
        names = set(t.column_names)
        self.columns |= names
        if "answer" in names and t.column("answer").null_count < t.num_rows:
            self.answer_seen = True
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
        if "answer" not in self.columns or not self.answer_seen:
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


#: Characters of a problem's text kept for the page (the rest is cut and marked).
PROBLEM_CHARS = 600


def collect_problems(paths: list[Path], wanted: set[str], *, prompts_file: Path | None = None,
                     max_chars: int = PROBLEM_CHARS) -> dict:
    """The text of each wanted problem, from a prompt file or the rollouts' ``prompt`` column.

    Parameters
    ----------
    paths
        Rollout tables (read only when ``prompts_file`` is None; a table without a
        ``prompt`` column is skipped).
    wanted
        Prompt ids whose text is shown.
    prompts_file
        A prompt file in the format of ``rlvr-boundary sample --prompts``
        (:func:`rlvr_boundary.io.prompts.read_prompts`); when given, the only source.
    max_chars
        Longer texts are cut to this many characters and marked ``cut``.

    Returns
    -------
    dict
        ``{prompt_id: {"text", "cut"}}`` for the wanted ids that have a text. Texts are
        user data: the page escapes them. When two rows of the rollouts give one id
        different texts, the first read is kept and ``"differs": True`` is set.
    """
    out: dict = {}
    if not wanted:
        return out

    def keep(pid, text):
        if not isinstance(text, str):
            return
        slot = out.get(pid)
        if slot is None:
            out[pid] = {"text": text[:max_chars], "cut": len(text) > max_chars}
        elif slot["text"] != text[:max_chars]:
            slot["differs"] = True

    if prompts_file is not None:
        from rlvr_boundary.io.prompts import read_prompts

        for rec in read_prompts(prompts_file):
            if rec["prompt_id"] in wanted:
                keep(rec["prompt_id"], rec["question"])
        return out
    ids = pa.array(sorted(wanted))
    for path in paths:
        if "prompt" not in set(table_columns(path)):
            continue
        for batch in iter_rollout_batches(path, ["prompt"]):
            sub = batch.filter(pc.is_in(batch.column("prompt_id"), value_set=ids))
            for pid, text in zip(sub.column("prompt_id").to_pylist(),
                                 sub.column("prompt").to_pylist()):
                keep(pid, text)
    return out


"""Every call from the app into the library goes through this module.

The browser app only parses what a user pasted or uploaded, calls the same
workflow functions as the command line (:mod:`rlvr_boundary.pipelines`), and
hands their result documents to :mod:`rlvr_boundary.app.render`:

- pasted per-prompt counts (``c/n`` cells or four integer columns) and uploaded
  count, rollout or other tools' files -> the audit
  (:func:`rlvr_boundary.pipelines.audit.run` with its ``ReportOptions``, built
  here as the command line builds them): the result document and the HTML report
  with its inline SVG figures, exactly as ``rlvr-boundary report`` makes them; the
  PNG and PDF files only when a download asks for them (:func:`figures_job`);
- pasted success rates or a printed pass@k curve -> the price diagnostic
  (:func:`rlvr_boundary.pipelines.price.run`), as ``rlvr-boundary price``;
- a strategy matrix -> the diagnosis and the price frontier
  (:func:`rlvr_boundary.pipelines.theory.diagnose` and ``frontier``), as
  ``rlvr-boundary theory diagnose`` and ``frontier``, with the same figure;
- the shaping explorer -> :mod:`rlvr_boundary.shaping`.

Design decisions:

- The job functions (``*_job``) run in a worker process (see
  :mod:`rlvr_boundary.app.jobs`): they take plain arguments and a fresh,
  per-request folder, write only inside it, and return JSON-ready dicts.
- Errors in the input raise :class:`rlvr_boundary.errors.InputError` with the
  same text the CLI prints; a pasted table is named "pasted table" where the
  CLI would name the file.
- Every sentence a reader sees comes from :mod:`rlvr_boundary.report.words`,
  in the units the report uses (points for differences and prices).
- Uploads are read by the library's readers only (JSON, CSV, Arrow/Parquet):
  nothing is executed or unpickled. Sizes and row counts are checked before
  any reader sees the file; the server's own limits (prompts x budgets) are
  checked before a grid is built.
"""

from __future__ import annotations

import gzip
import io
import re
import shutil
import zipfile
from pathlib import Path

from rlvr_boundary.core import grid as G
from rlvr_boundary.errors import InputError
from rlvr_boundary.report import words  # noqa: F401 (re-export)

# Re-exported for the rest of the app, so that it imports nothing else from the library:
# words (every sentence the report also says, e.g. words.ranges for budget lists).

#: How a pasted table is named in messages (the CLI names the file instead).
PASTE_SOURCE = "pasted table"

#: Input kinds of the paste box.
PASTE_KINDS = ("auto", "counts", "rates", "curve")

#: Endings of uploads the readers accept (anything else is refused before reading).
UPLOAD_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".parquet", ".jsonl.gz", ".json.gz",
                   ".csv.gz", ".tsv.gz")

#: The Omni-MATH aggregate points (Qwen2.5-7B base vs GRPO), pass@k at k = 1, 4, 16, 64, 256,
#: as printed by Yue et al., "Does Reinforcement Learning Really Incentivize Reasoning Capacity
#: in LLMs Beyond the Base Model?" (arXiv 2504.13837) and quoted in "No Free Lunch in RLVR".
OMNI_MATH_CURVE = ("k, base, GRPO\n1, 0.102, 0.251\n4, 0.224, 0.368\n16, 0.392, 0.496\n"
                   "64, 0.578, 0.608\n256, 0.691, 0.683\n")


class AppLimitError(InputError):
    """An input over one of the app's size limits."""


# --------------------------------------------------------------------------- limits


def check_paste(text: str, max_chars: int, max_rows: int) -> None:
    """Refuse a pasted table over the character or row limit, or with nothing in it."""
    if text is None or not text.strip():
        raise InputError("nothing pasted: give two columns of per-prompt rates or c/n counts, "
                         "or three columns k, pass@k base, pass@k RL", path=PASTE_SOURCE)
    if len(text) > max_chars:
        raise AppLimitError(f"the pasted table has {len(text):,} characters; this server accepts "
                            f"at most {max_chars:,} (upload a file instead)", path=PASTE_SOURCE)
    rows = text.count("\n") + 1
    if rows > max_rows:
        raise AppLimitError(f"the pasted table has {rows:,} rows; this server accepts at most "
                            f"{max_rows:,}", path=PASTE_SOURCE)


def safe_name(name: str) -> str:
    """A file name with only ``[A-Za-z0-9._-]``, no leading dot, at most 100 characters."""
    base = Path(str(name)).name
    clean = re.sub(r"[^A-Za-z0-9._-]+", "_", base).lstrip(".")[-100:]
    return clean or "upload"


def count_rows(path: Path, limit: int, max_bytes: int) -> int:
    """Rows of an upload (lines of text, rows of Parquet), counting at most ``limit + 1``.

    A gzip file is decompressed as a stream and refused beyond ``20 * max_bytes``
    bytes, so a small compressed file cannot expand without bound.
    """
    name = path.name.lower()
    if name.endswith(".parquet"):
        import pyarrow.parquet as pq

        try:
            return int(pq.ParquetFile(path).metadata.num_rows)
        except Exception as exc:  # pyarrow raises several types for a damaged file
            raise InputError(f"not a readable Parquet file ({exc})", path=path.name) from None
    opener = gzip.open if name.endswith(".gz") else open
    rows, seen, tail = 0, 0, b""
    try:
        with opener(path, "rb") as fh:
            while rows <= limit:
                chunk = fh.read(1 << 20)
                if not chunk:
                    break
                seen += len(chunk)
                if seen > 20 * max_bytes:
                    raise AppLimitError("the file expands to more than "
                                        f"{20 * max_bytes / 2**20:,.0f} MB when decompressed",
                                        path=path.name)
                rows += chunk.count(b"\n")
                tail = chunk[-1:]
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read the file ({exc})", path=path.name) from None
    return rows + (1 if tail not in (b"", b"\n") else 0)


def check_upload(path: Path, display_name: str, max_bytes: int, max_rows: int) -> None:
    """Refuse an upload by ending, size or row count, naming the file as the user knows it."""
    lower = display_name.lower()
    if not lower.endswith(UPLOAD_SUFFIXES):
        raise InputError("unsupported file type; upload JSONL, JSON, CSV, TSV (optionally "
                         ".gz) or Parquet", path=display_name)
    size = path.stat().st_size
    if size > max_bytes:
        raise AppLimitError(f"the file has {size / 2**20:,.1f} MB; this server accepts at most "
                            f"{max_bytes / 2**20:,.1f} MB per file", path=display_name)
    if size == 0:
        raise InputError("the file is empty", path=display_name)
    rows = count_rows(path, max_rows, max_bytes)
    if rows > max_rows:
        raise AppLimitError(f"the file has more than {max_rows:,} rows; this server accepts at "
                            f"most {max_rows:,} (run rlvr-boundary report locally for larger "
                            "inputs)", path=display_name)


# --------------------------------------------------------------------------- pasted tables


def _data_lines(text: str) -> list[tuple[int, str]]:
    return [(i, ln) for i, ln in enumerate(text.splitlines(), start=1)
            if ln.strip() and not ln.lstrip().startswith("#")]


def _cells(line: str, delim: str | None) -> list[str]:
    import csv

    if delim is None:
        return line.split()
    return [c.strip() for c in next(csv.reader(io.StringIO(line), delimiter=delim))]


def paste_kind(text: str, kind: str) -> str:
    """The kind of a pasted table: "counts" (c/n cells or 4 columns), "rates" or "curve".

    ``kind="auto"`` decides from the first data row: cells written ``c/n`` or four
    columns are counts; otherwise two columns are rates and three a curve (as
    ``rlvr-boundary price`` decides). Any other ``kind`` is returned as given.
    """
    if kind not in PASTE_KINDS:
        raise InputError(f"unknown input kind {kind!r}; choose one of {', '.join(PASTE_KINDS)}",
                         field="kind")
    if kind != "auto":
        return kind
    lines = _data_lines(text)
    if not lines:
        raise InputError("no data rows", path=PASTE_SOURCE)
    delim = _delimiter(lines[0][1])
    for _, ln in lines[:2]:
        cells = _cells(ln, delim)
        if any("/" in c for c in cells):
            return "counts"
        if len(cells) == 4:
            return "counts"
    return "auto"  # decided by the price diagnostic's own rule (2 -> rates, 3 -> curve)


def _delimiter(sample: str) -> str | None:
    return "\t" if "\t" in sample else "," if "," in sample else None


def _as_int(cell: str, line: int, what: str) -> int:
    try:
        value = float(cell)
    except ValueError:
        raise InputError(f"expected an integer {what}, found {cell!r}", path=PASTE_SOURCE,
                         line=line) from None
    if not value.is_integer():
        raise InputError(f"expected an integer {what}, found {cell!r}", path=PASTE_SOURCE,
                         line=line)
    return int(value)


def read_count_pairs(text: str) -> tuple[list[str] | None, list[tuple[int, int, int, int]]]:
    """Parse pasted per-prompt counts of base and RL, one prompt per row.

    Rows are either two cells ``c/n`` (base, RL), e.g. ``117/128 120/128``, or
    four integers ``c_base n_base c_rl n_rl``; CSV, TSV or spaces; an optional
    header row; ``#`` comments. Returns ``(header, [(c_b, n_b, c_r, n_r), ...])``.
    """
    lines = _data_lines(text)
    if not lines:
        raise InputError("no data rows", path=PASTE_SOURCE)
    delim = _delimiter(lines[0][1])
    header, rows, width = None, [], None
    for i, ln in lines:
        cells = _cells(ln, delim)
        if "/" in "".join(cells):
            if len(cells) != 2:
                raise InputError(f"expected 2 cells c/n (base, RL), found {len(cells)}",
                                 path=PASTE_SOURCE, line=i)
            parts = []
            for cell in cells:
                bits = cell.split("/")
                if len(bits) != 2:
                    raise InputError(f"expected a count c/n, found {cell!r}", path=PASTE_SOURCE,
                                     line=i)
                parts += [_as_int(bits[0], i, "c"), _as_int(bits[1], i, "n")]
            vals = parts
        else:
            try:
                [float(c) for c in cells]
            except ValueError:
                if header is None and not rows:
                    header = cells
                    continue
                raise InputError(f"expected numbers, found {cells}", path=PASTE_SOURCE,
                                 line=i) from None
            if len(cells) != 4:
                raise InputError("counts need 2 cells c/n (base, RL) or 4 columns c_base, "
                                 f"n_base, c_rl, n_rl; found {len(cells)} columns",
                                 path=PASTE_SOURCE, line=i)
            vals = [_as_int(c, i, w) for c, w in zip(cells, ("c", "n", "c", "n"))]
        kind = len(cells)
        if width is not None and kind != width:
            raise InputError("mixed row forms: write every row as c/n pairs or every row as 4 "
                             "columns", path=PASTE_SOURCE, line=i)
        width = kind
        cb, nb, cr, nr = vals
        for c, n, who in ((cb, nb, "base"), (cr, nr, "RL")):
            if n < 1:
                raise InputError(f"n must be >= 1 ({who}: n = {n})", path=PASTE_SOURCE, line=i,
                                 field="n")
            if not 0 <= c <= n:
                raise InputError(f"c must satisfy 0 <= c <= n ({who}: c = {c}, n = {n})",
                                 path=PASTE_SOURCE, line=i, field="c")
        rows.append((cb, nb, cr, nr))
    if not rows:
        raise InputError("no data rows", path=PASTE_SOURCE)
    return header, rows


def write_count_files(rows, folder: Path, labels: tuple[str, str]) -> list[Path]:
    """Write pasted counts as two count-JSONL files (the format public tools use)."""
    import json

    folder.mkdir(parents=True, exist_ok=True)
    width = len(str(len(rows)))
    paths = []
    for j, label in enumerate(labels):
        path = folder / f"{j}-{safe_name(label)}.jsonl"
        with open(path, "w", encoding="utf-8") as fh:
            for i, r in enumerate(rows, start=1):
                fh.write(json.dumps({"id": f"row-{i:0{width}d}", "c": r[2 * j],
                                     "n": r[2 * j + 1]}) + "\n")
        paths.append(path)
    return paths


def input_formats() -> list[str]:
    """Names of every input format the readers know (for the format menu), from the registry."""
    from rlvr_boundary.io.adapters import FORMATS

    return list(FORMATS)


def grid_size(spec: str | None) -> int:
    """Budgets a grid spec like "1-128,256" asks for, counted without building it (0: the
    grid depends on the data, "pow2" or none given). A spec the parser refuses counts 0 here:
    the options then say what is wrong."""
    try:
        return G.grid_size(G.parse_grid(spec))
    except G.GridError:
        if not spec:
            return 0
        total = 0  # the parser refuses grids over its limit: count them anyway
        for part in spec.split(","):
            lo, sep, hi = part.strip().partition("-")
            try:
                total += max(0, int(hi) - int(lo) + 1) if sep and lo else 1
            except ValueError:
                return 0
        return total


def check_cells(prompts: int, budgets: int, max_cells: int) -> None:
    """Refuse an analysis of more than ``max_cells`` prompt x budget values (this server's
    limit, :func:`rlvr_boundary.core.grid.check_cells`)."""
    try:
        G.check_cells(prompts, budgets, limit=max_cells,
                      limit_is="values this server computes per analysis")
    except G.GridError as exc:
        raise AppLimitError(f"{exc}, or run rlvr-boundary locally", field="ks") from None


def _check_audit_size(paths: list[Path], opts, max_cells: int | None) -> None:
    from rlvr_boundary.io.inputs import load_inputs

    if not max_cells:
        return
    c = opts.compare
    # Counts only (no per-sample facts): the same loader, format detection and labels as the
    # report, so a file it would refuse is refused here with the same message.
    inputs = load_inputs(paths, fmt=c.format, labels=c.labels, choices=c.adapter_choices())
    prompts = max(len(ct) for ct in inputs.counts)
    n_min = min(int(ct.n.min()) for ct in inputs.counts)
    check_cells(prompts, G.grid_size(c.grid, n_min), max_cells)


# --------------------------------------------------------------------------- jobs


def report_options(settings: dict, labels: dict | None = None):
    """The report's options from the app's settings, validated as the CLI validates its flags.

    ``labels`` maps an input path to its model label (single-model files).
    """
    from rlvr_boundary.pipelines.audit import ReportOptions
    from rlvr_boundary.pipelines.compare import CompareOptions

    if settings.get("max_cells"):  # the options build the grid: refuse an absurd one first
        check_cells(1, grid_size(settings.get("ks")), settings["max_cells"])
    try:
        bootstrap = int(settings["bootstrap"])
        alpha = float(settings.get("alpha", 0.05))
        seed = int(settings.get("seed", 0))
    except (TypeError, ValueError) as exc:
        raise InputError(f"expected a number ({exc})", field="settings") from None
    compare = CompareOptions(ks=settings.get("ks") or None, bootstrap=bootstrap, alpha=alpha,
                             seed=seed, format=settings.get("format", "auto"),
                             intersect=bool(settings.get("intersect", False)),
                             labels=dict(labels or {}))
    return ReportOptions(compare=compare, base=settings.get("base") or None,
                         k=settings.get("K") or None, figures=False)


def _zip(folder: Path, zpath: Path) -> Path:
    with zipfile.ZipFile(zpath, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in sorted(folder.iterdir()):
            zf.write(f, arcname=f"{folder.name}/{f.name}")
    return zpath


def audit_job(paths: list[str], labels: dict, settings: dict, workdir: str) -> dict:
    """The audit report of count / rollout / adapter files: :func:`rlvr_boundary.pipelines.audit.run`,
    as ``rlvr-boundary report`` runs it (result JSON first, the page drawn from it).

    The figures come back as the inline SVG the HTML report holds; no PNG or PDF is
    drawn here (:func:`figures_job` draws them from the result JSON when asked).

    Returns
    -------
    dict
        ``{"mode": "audit", "audit": ..., "files": [...], "svgs": {name: svg}}``;
        ``audit`` is the result document (envelope and payload).
    """
    from rlvr_boundary.pipelines import audit

    opts = report_options(settings, labels)
    paths_ = [Path(p) for p in paths]
    _check_audit_size(paths_, opts, settings.get("max_cells"))
    out = Path(workdir) / "report.html"
    svgs: dict = {}
    doc, _ = audit.run(paths_, opts, out, notes=settings.get("notes") or None, svgs=svgs)
    return {"mode": "audit", "audit": doc, "files": [str(out), str(out.with_suffix(".json"))],
            "svgs": svgs}


def warm() -> None:
    """Run one tiny audit (three pasted prompts, B = 20) in a temporary folder, so a worker's
    first real job finds every module imported, fonts loaded and figures drawn once."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="rb-warm-") as d:
        paste_job("1/4, 2/4\n3/4, 1/4\n2/4, 4/4\n", "counts", ("base", "RL"),
                  {"bootstrap": 20}, d)


def _svg(fig) -> str:
    from rlvr_boundary.report import figures as F

    try:
        return F.to_svg(fig)
    finally:
        F.close(fig)


def figures_job(run: str, workdir: str) -> dict:
    """PNG (200 dpi) and PDF of a finished analysis' figures, drawn from the result JSON in
    its folder ``run`` (nothing is recomputed); returns ``{"files": [zip]}``.

    The audit's figures are those of ``rlvr-boundary report --from`` (the same drawing
    functions); the price and theory figures those of ``price --figure`` and ``theory
    frontier``.
    """
    from rlvr_boundary.io.results import read_result
    from rlvr_boundary.report import theory_figures as TF

    run_, out = Path(run), Path(workdir)
    folder = out / "figures"
    if (run_ / "report.json").is_file():
        from rlvr_boundary.pipelines import audit

        page = out / "redraw.html"
        _, drawn = audit.redraw(run_ / "report.json", page, figures=True)
        page.unlink(missing_ok=True)
        (out / drawn["folder"]).rename(folder)
    elif (run_ / "price.json").is_file():
        doc = read_result(run_ / "price.json", kind="price")
        TF.save_formats(TF.price_figure(doc), folder, "price", ("png", "pdf"))
    elif (run_ / "theory-frontier.json").is_file():
        doc = read_result(run_ / "theory-frontier.json", kind="theory-frontier")
        TF.save_formats(TF.frontier_figure(doc), folder, "frontier", ("png", "pdf"))
    else:
        raise InputError("no finished analysis to draw: press Analyse first", field="figures")
    return {"files": [str(_zip(folder, out / "figures.zip"))]}


def paste_job(text: str, kind: str, labels: tuple[str, str], settings: dict, workdir: str) -> dict:
    """Analyse a pasted table: counts -> the audit report; rates or a curve -> the price diagnostic."""
    decided = paste_kind(text, kind)
    if decided == "counts":
        _, rows = read_count_pairs(text)
        base, rl = (labels[0] or "base").strip(), (labels[1] or "RL").strip()
        if base == rl:
            raise InputError(f"the two model labels must differ (both are {base!r})",
                             field="label")
        paths = write_count_files(rows, Path(workdir) / "inputs", (base, rl))
        settings = {**settings, "base": base}
        if text.strip() == example_counts_paste().strip():
            settings["notes"] = ["Example data: " + example_note()]
        return audit_job([str(p) for p in paths], {str(paths[0]): base, str(paths[1]): rl},
                         settings, workdir)
    return price_job(text, decided, labels, settings, workdir)


def price_job(text: str, kind: str, labels: tuple[str, str], settings: dict, workdir: str) -> dict:
    """The count-free price diagnostic: :func:`rlvr_boundary.pipelines.price.run`, as
    ``rlvr-boundary price`` runs it, with its figure."""
    from rlvr_boundary.pipelines.price import DEFAULT_RATE_GRID, PriceOptions
    from rlvr_boundary.pipelines.price import run as price

    ks = settings.get("ks_rates") or None
    if settings.get("max_cells"):  # before the options build the grid
        rows = len(_data_lines(text))
        check_cells(rows, grid_size(ks or DEFAULT_RATE_GRID), settings["max_cells"])
    opts = PriceOptions(ks=ks, kind=kind, base_label=labels[0] or "base",
                        rl_label=labels[1] or "RL")
    out = Path(workdir)
    doc = price(None, opts, text=text, source=PASTE_SOURCE, json_path=out / "price.json")
    from rlvr_boundary.report import theory_figures as TF

    return {"mode": "price", "result": doc, "files": [str(out / "price.json")],
            "svgs": {"price": _svg(TF.price_figure(doc))}}


def files_job(uploads: list[tuple[str, str]], settings: dict, limits: tuple[int, int],
              workdir: str) -> dict:
    """Audit uploaded files: check them, copy them under safe names, run the report.

    Parameters
    ----------
    uploads
        ``(temporary path, name the user gave the file)`` pairs.
    limits
        ``(max bytes, max rows)`` per file.
    """
    if not uploads:
        raise InputError("no files uploaded: give a base and a trained model's results (or one "
                         "file holding both)", field="files")
    max_bytes, max_rows = limits
    folder = Path(workdir) / "inputs"
    paths = []
    for j, (tmp, shown) in enumerate(uploads):
        src = Path(tmp)
        check_upload(src, shown, max_bytes, max_rows)
        dest = folder / str(j) / safe_name(shown)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
        paths.append(dest)
    try:
        return audit_job([str(p) for p in paths], {}, settings, workdir)
    except InputError as exc:
        # Name the files as the user knows them, not by their copies in the session folder.
        for p, (_, shown) in zip(paths, uploads):
            if exc.path == str(p):
                exc.path = shown
            exc.message = exc.message.replace(str(p), shown)
        exc.args = (str(exc),)
        raise


def matrix_job(text: str, taus: int, kmax: int, workdir: str) -> dict:
    """No Free Lunch diagnosis and price frontier of a strategy matrix (CSV text), as
    ``rlvr-boundary theory diagnose`` and ``theory frontier`` compute and draw them.

    The CSV is the one of ``rlvr-boundary theory``: header ``strategy,pi0,<prompt
    ids...>``, one row per strategy with its prior weight and its fitness on
    each prompt.
    """
    from rlvr_boundary.pipelines import theory

    if not text or not text.strip():
        raise InputError("no matrix: paste or upload a CSV with header strategy,pi0,<prompt ids>",
                         path="strategy matrix")
    opts = theory.FrontierOptions(taus=taus, kmax=kmax)
    out = Path(workdir)
    diagnosis = theory.diagnose(text=text, source="strategy matrix",
                                json_path=out / "theory-diagnose.json")
    front = theory.frontier(None, opts, text=text, source="strategy matrix",
                            json_path=out / "theory-frontier.json")
    from rlvr_boundary.report import theory_figures as TF

    return {"mode": "theory", "diagnosis": diagnosis, "frontier": front,
            "files": [str(out / "theory-diagnose.json"), str(out / "theory-frontier.json")],
            "svgs": {"frontier": _svg(TF.frontier_figure(front))}}


def example_matrix() -> str:
    """The 3x3 counterexample of the No Free Lunch paper: the shipped matrix CSV (the one
    docs/theory.md and ``rlvr-boundary theory --example`` use)."""
    from rlvr_boundary.pipelines.theory import example_matrix as path

    return path().read_text(encoding="utf-8")


def example_counts_paste() -> str:
    """The shipped DeepScaleR example as a pasteable two-column table of c/n counts."""
    from rlvr_boundary.analysis.aligned import align
    from rlvr_boundary.examples import example_files
    from rlvr_boundary.io.formats import load_model_counts

    ex = example_files("deepscaler32k")
    a = align([load_model_counts(ex["base"], label="base"), load_model_counts(ex["rl"], label="rl")])
    lines = ["base, RL"] + [f"{a.c[0, j]}/{a.n[0, j]}, {a.c[1, j]}/{a.n[1, j]}"
                            for j in range(a.n.shape[1])]
    return "\n".join(lines) + "\n"


def example_note() -> str:
    """Attribution of the shipped DeepScaleR example (kept wherever it is shown)."""
    from rlvr_boundary.examples import example_note as note

    return note("deepscaler32k")


# --------------------------------------------------------------------------- shaping explorer


#: Largest example group in the shaping explorer (it shows one column per completion).
MAX_GROUP = 64


def _numbers(text: str, what: str) -> list[float]:
    if len(text or "") > 20 * MAX_GROUP:
        raise AppLimitError(f"at most {MAX_GROUP} numbers, please", field=what)
    try:
        vals = [float(x) for x in re.split(r"[,\s]+", (text or "").strip()) if x]
    except ValueError:
        raise InputError(f"expected numbers separated by commas or spaces, found {text!r}",
                         field=what) from None
    if not vals:
        raise InputError("expected at least one number", field=what)
    if len(vals) > MAX_GROUP:
        raise AppLimitError(f"at most {MAX_GROUP} numbers, found {len(vals)}", field=what)
    return vals


def shaping_explore(params: dict) -> dict:
    """Weights of the perplexity and position shapings and of the pass@k advantage.

    ``params`` holds the explorer's controls: ``ppl`` (one group's perplexities),
    ``rewards`` (that group's 0/1 rewards), ``alpha``, ``iqr``, ``gamma``, ``m``,
    ``n``, ``d``, ``cap``, ``length`` (tokens of the example sequence), ``step``,
    ``window`` ((lo, hi) or None), ``passk_rewards`` and ``k``. Every number comes
    from :mod:`rlvr_boundary.shaping` (the options are validated by its
    :class:`~rlvr_boundary.shaping.config.ShapingConfig`).
    """
    import numpy as np

    from rlvr_boundary import shaping as S

    try:
        cfg = S.ShapingConfig(
            estimator="grpo", perplexity=True, ppl_alpha=float(params["alpha"]),
            ppl_iqr_exclude=bool(params.get("iqr", False)), position=True,
            pos_gamma=float(params["gamma"]), pos_m=float(params["m"]),
            pos_n=float(params["n"]), pos_d=float(params["d"]), pos_cap=float(params["cap"]),
            pos_window=params.get("window"))
    except ValueError as exc:
        raise InputError(str(exc), field="shaping") from None
    ppl = np.array(_numbers(params["ppl"], "perplexities"))  # (G,)
    rewards = np.array(_numbers(params["rewards"], "rewards"))  # (G,)
    if np.any(ppl <= 0) or not np.all(np.isfinite(ppl)):
        raise InputError("perplexities must be finite and > 0", field="perplexities")
    if rewards.size != ppl.size:
        raise InputError(f"{ppl.size} perplexities but {rewards.size} rewards: give one reward "
                         "per completion", field="rewards")
    log_ppl = np.log(ppl)[None, :]  # (1, G)
    try:
        w = S.perplexity_zscores(log_ppl, iqr_exclude=cfg.ppl_iqr_exclude)[0]  # (G,)
        mult = S.perplexity_multipliers(log_ppl, **cfg.perplexity_kwargs())[0]  # (G,)
        adv = S.grpo_advantages(rewards[None, :], std=cfg.grpo_std)  # (1, G)
        shaped = S.sequence_advantages(cfg, rewards[None, :], log_ppl=log_ppl)[0]  # (G,)
    except ValueError as exc:
        raise InputError(str(exc), field="shaping") from None

    L = int(params["length"])
    if not 1 <= L <= 1000:
        raise InputError("the example sequence needs 1..1000 tokens", field="length")
    step = params.get("step")
    step = None if step is None else int(step)
    mask = np.ones((2, L))  # (2, L): one completion with A = +1, one with A = -1
    rel = S.relative_positions(mask)[0]  # (L,)
    bias = S.position_bias(rel, gamma=cfg.pos_gamma, m=cfg.pos_m, n=cfg.pos_n, d=cfg.pos_d)
    try:
        tok = S.apply_position_shaping(np.array([[1.0] * L, [-1.0] * L]), mask, step=step,
                                       **cfg.position_kwargs())  # (2, L)
    except ValueError as exc:
        raise InputError(str(exc), field="step") from None
    from rlvr_boundary.shaping.shapings import in_window

    pk_rewards = np.array(_numbers(params["passk_rewards"], "pass@k rewards"))  # (G2,)
    k = int(params["k"])
    if not 1 <= k <= pk_rewards.size:
        raise InputError(f"k must lie in 1..{pk_rewards.size} (the group size)", field="k")
    try:
        pk = S.passk_advantages(pk_rewards[None, :], k)[0]  # (G2,)
        pk1 = S.passk_advantages(pk_rewards[None, :], 1)[0]  # (G2,): k = 1, GRPO population std
    except ValueError as exc:
        raise InputError(str(exc), field="pass@k rewards") from None
    from rlvr_boundary.core.passk import pass_at_k

    n2, c2 = int(pk_rewards.size), int(pk_rewards.sum())
    rho = float(pass_at_k(np.array([n2]), np.array([c2]), np.array([k]))[0, 0])
    return {
        "perplexity": {"ppl": ppl, "log_ppl": log_ppl[0], "w": w, "multiplier": mult,
                       "rewards": rewards, "advantage": adv[0], "shaped": shaped,
                       "alpha": cfg.ppl_alpha, "iqr": cfg.ppl_iqr_exclude},
        "position": {"rel": rel, "bias": bias, "positive": tok[0], "negative": tok[1],
                     "active": in_window(step, cfg.pos_window), "step": step,
                     "window": cfg.pos_window, "gamma": cfg.pos_gamma, "m": cfg.pos_m,
                     "n": cfg.pos_n, "d": cfg.pos_d, "cap": cfg.pos_cap},
        "passk": {"rewards": pk_rewards, "k": k, "n": n2, "c": c2, "rho": rho,
                  "advantage": pk, "advantage_k1": pk1},
    }

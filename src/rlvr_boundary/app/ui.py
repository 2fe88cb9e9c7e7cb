"""The Gradio page: four tabs (paste, upload, theory lab, shaping explorer).

Layout and event wiring only. Numbers come from :mod:`rlvr_boundary.app.compute`
(heavy jobs in worker processes via :class:`~rlvr_boundary.app.jobs.JobRunner`),
HTML from :mod:`rlvr_boundary.app.render`.

Isolation between users: nothing a request computes is kept at module level.
Each browser session gets its own folder (created on its first analysis and
held in a ``gr.State``); each analysis writes into a sub-folder of it named by the
hash of its inputs and options (:func:`cache_key`), so the same request in the same
session is answered from that folder without recomputing; the last
:data:`KEEP_RUNS` analyses of each tab are kept. A session
folder is deleted when Gradio drops the session's state, and in any case by
:func:`sweep` once it has seen no analysis for ``session_ttl`` seconds (Gradio
keeps a closed session's state for an hour and evicts states over its capacity
without a callback, so we do not rely on it alone). Results travel back to the
page that asked for them only.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

from rlvr_boundary.app import compute, render
from rlvr_boundary.app.jobs import JobError, JobRunner
from rlvr_boundary.app.options import AppOptions
from rlvr_boundary.errors import InputError

TITLE = "rlvr-boundary: what did RL cost the reasoning boundary?"

INTRO = """\
Paste or upload the per-prompt results of a **base** model and an **RL-trained** checkpoint and
read the pass@k curves with an honest confidence band, the crossover budget k\\*, the pass@k
*price* paid for the pass@1 gain, coverage and support, and the budget advisor. Everything is
computed by the `rlvr-boundary` library; the downloads are the same HTML report, JSON and
figures that `rlvr-boundary report` writes.
"""

PASTE_HELP = """\
One row per prompt, columns separated by commas, tabs or spaces; an optional header row.

* **counts**: two cells `c/n` (base, RL), e.g. `117/128, 127/128`, or four columns
  `c_base n_base c_rl n_rl`: exact unbiased pass@k, simultaneous band, coverage, support,
  full report;
* **rates**: two columns of success rates in [0, 1] (base, RL): the rate curves 1-(1-p)^k,
  crossings and their bound, k\\*, price;
* **a printed curve**: three columns `k, pass@k base, pass@k RL`, as papers print them.
"""


#: Finished analyses kept per session and tab (their results answer a repeated request).
KEEP_RUNS = 3

#: Folder name prefix of a server's files under the system temporary folder.
ROOT_PREFIX = "rlvr-boundary-app-"


def _session_dir(current: str | None, root: Path) -> str:
    if current and Path(current).is_dir():
        return current
    return tempfile.mkdtemp(prefix="session-", dir=root)


def cache_key(*parts) -> str:
    """sha256 of a job's inputs and options (JSON of ``parts``; files by their content)."""
    import hashlib
    import json

    def default(obj):
        if isinstance(obj, Path):
            h = hashlib.sha256()
            with open(obj, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
            return {"file sha256": h.hexdigest()}
        raise TypeError(f"cannot hash {type(obj).__name__}")

    text = json.dumps(parts, sort_keys=True, default=default, ensure_ascii=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cached(run: Path) -> tuple[str, list[str]] | None:
    """The page and downloads of a finished analysis in ``run`` (None when there is none)."""
    import json

    try:
        page = (run / "page.html").read_text(encoding="utf-8")
        files = json.loads((run / "files.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not all(Path(f).is_file() for f in files):
        return None
    return page, files


def _store(run: Path, page: str, files: list[str]) -> None:
    import json

    for name, text in (("files.json", json.dumps(files)), ("page.html", page)):
        tmp = run / f".{name}.tmp"
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, run / name)  # page.html last: its presence marks the run finished


def _prune(session: str, tab: str, keep: int) -> None:
    """Keep the ``keep`` most recent finished analyses of this tab in the session."""
    done = [d for d in Path(session).glob(f"run-{tab}-*") if (d / "page.html").is_file()]
    done.sort(key=lambda d: d.stat().st_mtime, reverse=True)
    for old in done[keep:]:
        shutil.rmtree(old, ignore_errors=True)


def sweep(root: Path, ttl: float, keep: str | None = None) -> list[str]:
    """Delete the session folders under ``root`` unused for more than ``ttl`` seconds."""
    now, gone = time.time(), []
    for d in root.glob("session-*"):
        try:
            idle = now - d.stat().st_mtime
        except FileNotFoundError:
            continue
        if str(d) != keep and idle > ttl:
            shutil.rmtree(d, ignore_errors=True)
            gone.append(str(d))
    return gone


def _start_time(pid: int) -> str | None:
    """The kernel's start time of process ``pid`` (Linux ``/proc``), None where unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split()[19]


def _alive(pid: int, start: str | None) -> bool:

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return start is None or _start_time(pid) in (None, start)  # a reused pid is not the owner


def claim_root(parent: Path | None = None) -> Path:
    """A new folder for this server's files, after removing those of servers that died.

    Each server writes ``owner.json`` (its pid and start time) into its folder; a folder
    under ``parent`` (the system temporary folder) owned by this user whose server is
    no longer running (killed with SIGKILL, so it could not clean up) is deleted.
    """
    import json

    parent = Path(parent or tempfile.gettempdir())
    for d in parent.glob(ROOT_PREFIX + "*"):
        try:
            if d.is_symlink() or not d.is_dir() or d.stat().st_uid != os.getuid():
                continue
            owner = json.loads((d / "owner.json").read_text(encoding="utf-8"))
            pid, start = int(owner["pid"]), owner.get("start")
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not a folder we can judge: left alone
        if not _alive(pid, start):
            shutil.rmtree(d, ignore_errors=True)
    root = Path(tempfile.mkdtemp(prefix=ROOT_PREFIX, dir=parent))
    (root / "owner.json").write_text(json.dumps({"pid": os.getpid(),
                                                 "start": _start_time(os.getpid())}),
                                     encoding="utf-8")
    return root


def _delete_session(path: str | None) -> None:
    if path:
        shutil.rmtree(path, ignore_errors=True)


def _settings(opts: AppOptions, alpha, seed, ks, K=None) -> dict:
    try:
        seed = int(seed)
    except (TypeError, ValueError):
        raise InputError(f"the seed must be an integer, got {seed!r}", field="seed") from None
    try:
        alpha = float(alpha)
    except (TypeError, ValueError):
        raise InputError(f"alpha must be a number, got {alpha!r}", field="alpha") from None
    return {"bootstrap": opts.bootstrap, "alpha": alpha, "seed": seed,
            "ks": (ks or "").strip() or None, "K": int(K) if K else None,
            "max_cells": opts.max_cells}


def build_app(opts: AppOptions | None = None, runner: JobRunner | None = None):
    """Build the Gradio Blocks of the app (not launched).

    Parameters
    ----------
    opts
        Limits and server options (defaults: :class:`AppOptions`).
    runner
        Worker pool for the analyses; a new one with ``opts.workers`` processes by default.

    Returns
    -------
    gradio.Blocks
        With ``.rb_runner`` and ``.rb_root`` attached (the worker pool and the folder
        holding the sessions' files), for :func:`rlvr_boundary.app.launch` to clean up.
    """
    from rlvr_boundary.errors import require

    gr = require("gradio", "app", "the browser app")
    opts = opts or AppOptions()
    runner = runner or JobRunner(opts.workers, opts.job_timeout)
    root = claim_root()
    # Gradio's uploads and copies of downloads live under the server's folder too, so a
    # killed server's files are removed with it at the next start (read by each
    # component and by the server when they are made).
    os.environ["GRADIO_TEMP_DIR"] = str(root / "gradio")
    limits_text = (f"This server accepts files of up to {opts.max_upload_mb:g} MB and "
                   f"{opts.max_rows:,} rows, pasted tables of up to {opts.max_paste_chars:,} "
                   f"characters, and at most {opts.max_cells:,} prompt x budget cells per "
                   f"analysis; at most {opts.upload_quota_mb:g} MB of uploads per visitor "
                   f"and {opts.total_upload_mb:g} MB for all visitors together.")
    ttl = opts.session_ttl

    def _progress(progress):
        """Tell the page where the analysis is: in line (with how many ahead), or running."""
        said = [object()]

        def report(ahead):
            if ahead is None:
                text = "analysing"
            elif ahead == 0:
                text = "waiting for a free worker: yours is next"
            else:
                text = f"waiting for a free worker: {ahead} analyses ahead of yours"
            if progress is not None and text != said[0]:
                said[0] = text
                # Two stages (in line, analysing): the page shows "<text>: 1 / 2 stages".
                progress((0 if ahead is not None else 1, 2), desc=text, unit="stages")
        return report

    def run_job(name: str, session: str | None, key: str, args: tuple, progress=None):
        """Run (or answer from this session's cache) one analysis; returns
        ``(page, downloads, session, run folder)``."""
        session = _session_dir(session, root)
        tab = name.split("_")[0]
        run = Path(session) / f"run-{tab}-{key[:24]}"
        hit = cached(run)
        os.utime(session)  # marks the session as used
        if hit is not None:
            os.utime(run)
            return hit[0], hit[1], session, str(run)
        sweep(root, ttl, keep=session)
        _prune(session, tab, KEEP_RUNS - 1)
        shutil.rmtree(run, ignore_errors=True)
        run.mkdir()
        try:
            res = runner.run(name, *args, str(run), progress=_progress(progress))
        except InputError as exc:
            shutil.rmtree(run, ignore_errors=True)
            return render.error(str(exc)), None, session, None
        except JobError as exc:
            shutil.rmtree(run, ignore_errors=True)
            return render.error(str(exc), kind="failed"), None, session, None
        except Exception as exc:  # a bug: say so on the page; the server keeps serving
            shutil.rmtree(run, ignore_errors=True)
            return (render.error(f"{type(exc).__name__}: {exc}", kind="internal error"), None,
                    session, None)
        page = render.result(res)
        _store(run, page, res["files"])
        return page, res["files"], session, str(run)

    def on_figures(run, session, progress=gr.Progress()):
        """PNG and PDF of the tab's last analysis, drawn on request (once per analysis)."""
        if not run or not session or not Path(run).is_dir() \
                or Path(run).parent != Path(session):
            return render.error("no analysis to draw yet: press Analyse first"), None
        dl = Path(run) / "download"
        zpath = dl / "figures.zip"
        if zpath.is_file():
            return render.idle("Figures as PNG (200 dpi) and PDF: below."), [str(zpath)]
        shutil.rmtree(dl, ignore_errors=True)
        dl.mkdir()
        try:
            res = runner.run("figures_job", run, str(dl), progress=_progress(progress))
        except (InputError, JobError) as exc:
            shutil.rmtree(dl, ignore_errors=True)
            return render.error(str(exc)), None
        return render.idle("Figures as PNG (200 dpi) and PDF: below."), res["files"]

    def on_paste(text, kind, base_label, rl_label, ks_rates, alpha, seed, session,
                 progress=gr.Progress()):
        try:
            compute.check_paste(text, opts.max_paste_chars, opts.max_rows)
            settings = _settings(opts, alpha, seed, None)
            settings["ks_rates"] = (ks_rates or "").strip() or None
        except InputError as exc:
            return render.error(str(exc)), None, session, None
        labels = (base_label or "", rl_label or "")
        key = cache_key("paste_job", text, kind, labels, settings)
        return run_job("paste_job", session, key, (text, kind, labels, settings), progress)

    def on_upload(files, fmt, base_label, ks, K, alpha, seed, session, progress=gr.Progress()):
        try:
            settings = _settings(opts, alpha, seed, ks, K)
            settings["format"] = fmt or "auto"
            settings["base"] = (base_label or "").strip() or None
        except InputError as exc:
            return render.error(str(exc)), None, session, None
        paths = [f if isinstance(f, str) else getattr(f, "name", str(f)) for f in (files or [])]
        uploads = [(p, Path(p).name) for p in paths]
        limits = (opts.max_upload_bytes, opts.max_rows)
        try:  # files by content and by the name the user gave them (it labels the model)
            key = cache_key("files_job", [(Path(p), shown) for p, shown in uploads], settings,
                            limits)
        except OSError:
            key = cache_key("files_job", time.time())  # unreadable: the job says why
        return run_job("files_job", session, key, (uploads, settings, limits), progress)

    def on_matrix(text, upload, taus, kmax, session, progress=gr.Progress()):
        if upload:
            path = Path(upload if isinstance(upload, str) else upload.name)
            try:
                compute.check_upload(path, path.name, opts.max_upload_bytes, opts.max_rows)
                text = path.read_text(encoding="utf-8")
            except InputError as exc:
                return render.error(str(exc)), None, session, None
            except UnicodeDecodeError:
                return (render.error(f"{path.name}: the file is not UTF-8 text"), None, session,
                        None)
        try:
            compute.check_paste(text, opts.max_paste_chars, opts.max_rows)
        except InputError as exc:
            return (render.error(str(exc).replace(compute.PASTE_SOURCE, "strategy matrix")),
                    None, session, None)
        key = cache_key("matrix_job", text, int(taus), int(kmax))
        return run_job("matrix_job", session, key, (text, int(taus), int(kmax)), progress)

    def on_shaping(ppl, rewards, alpha, iqr, gamma, m, n, d, cap, length, step, windowed, lo, hi,
                   pk_rewards, k):
        try:
            res = compute.shaping_explore({
                "ppl": ppl, "rewards": rewards, "alpha": alpha, "iqr": iqr, "gamma": gamma,
                "m": m, "n": n, "d": d, "cap": cap, "length": length, "step": step,
                "window": (int(lo), int(hi)) if windowed else None,
                "passk_rewards": pk_rewards, "k": k})
        except InputError as exc:
            return render.error(str(exc))
        return render.shaping(res)

    formats = compute.input_formats()
    with gr.Blocks(title=TITLE, analytics_enabled=False, delete_cache=(int(ttl), int(ttl))) as demo:
        session = gr.State(None, time_to_live=ttl, delete_callback=_delete_session)
        # Each tab's last analysis folder (its result JSON draws the PNG/PDF on request).
        paste_run, up_run, mx_run = gr.State(None), gr.State(None), gr.State(None)
        gr.Markdown(f"# {TITLE}\n\n{INTRO}")
        with gr.Tabs():
            with gr.Tab("Paste", id="paste"):
                gr.Markdown(PASTE_HELP)
                with gr.Row():
                    with gr.Column(scale=3):
                        paste_text = gr.Textbox(label="Table", lines=10, max_lines=20,
                                                elem_id="paste-text",
                                                placeholder="117/128, 127/128\n6/128, 20/128\n...")
                        with gr.Row():
                            ex_counts = gr.Button("Example: DeepScaleR counts (c/n)", size="sm",
                                                  elem_id="paste-example-counts")
                            ex_curve = gr.Button("Example: Omni-MATH printed curve", size="sm",
                                                 elem_id="paste-example-curve")
                    with gr.Column(scale=2):
                        paste_kind = gr.Radio(list(compute.PASTE_KINDS), value="auto",
                                              label="Input kind", elem_id="paste-kind")
                        with gr.Row():
                            paste_base = gr.Textbox(label="Base label", value="base")
                            paste_rl = gr.Textbox(label="RL label", value="RL")
                        with gr.Accordion("Options", open=False):
                            paste_ks = gr.Textbox(label="Budget grid for rates",
                                                  placeholder="1-1024")
                            paste_alpha = gr.Number(label="alpha (1 - confidence)", value=0.05)
                            paste_seed = gr.Number(label="seed", value=0, precision=0)
                        paste_go = gr.Button("Analyse", variant="primary", elem_id="paste-go")
                gr.Markdown("<small>Examples: DeepScaleR-1.5B-Preview vs DeepSeek-R1-Distill-"
                            "Qwen-1.5B, 1,060 prompts, 128 samples each. "
                            + render.esc(compute.example_note())
                            + " Omni-MATH: Qwen2.5-7B base vs GRPO, pass@k printed by Yue et "
                            "al., \"Does Reinforcement Learning Really Incentivize Reasoning "
                            "Capacity in LLMs Beyond the Base Model?\" (arXiv 2504.13837).</small>")
                paste_out = gr.HTML(render.idle("Results appear here."), elem_id="paste-out",
                                    js_on_load=None)
                paste_files = gr.File(label="Downloads", file_count="multiple",
                                      interactive=False, elem_id="paste-files")
                paste_fig_go = gr.Button("Figures as PNG and PDF", size="sm",
                                         elem_id="paste-figures-go")
                paste_fig_msg = gr.HTML(elem_id="paste-figures-msg", js_on_load=None)
                paste_figs = gr.File(label="Figures (PNG, PDF)", file_count="multiple",
                                     interactive=False, elem_id="paste-figures")
            with gr.Tab("Upload", id="upload"):
                gr.Markdown("Upload the results of a base model and of one or more checkpoints: "
                            "per-prompt counts (`{\"id\", \"c\", \"n\"}` JSONL or a "
                            "`prompt_id, model, n, c` table), rollout tables (Parquet or JSONL), "
                            "or other tools' files (lm-evaluation-harness, lighteval, verl, the "
                            "limit-of-RLVR evaluator, vLLM JSONL). Single-model files are "
                            "labelled by their file name. " + limits_text)
                with gr.Row():
                    with gr.Column(scale=3):
                        up_files = gr.File(label="Files", file_count="multiple",
                                           file_types=[".jsonl", ".json", ".csv", ".tsv",
                                                       ".parquet", ".gz"],
                                           elem_id="upload-files")
                    with gr.Column(scale=2):
                        up_format = gr.Dropdown(["auto", *formats], value="auto",
                                                label="Format")
                        up_base = gr.Textbox(label="Base model label (default: 'base' or the "
                                                   "first file)")
                        with gr.Accordion("Options", open=False):
                            up_ks = gr.Textbox(label="pass@k grid", placeholder="1..n")
                            up_K = gr.Number(label="audit budget K (coverage, support)",
                                             value=None, precision=0)
                            up_alpha = gr.Number(label="alpha (1 - confidence)", value=0.05)
                            up_seed = gr.Number(label="seed", value=0, precision=0)
                        up_go = gr.Button("Analyse", variant="primary", elem_id="upload-go")
                up_out = gr.HTML(render.idle("Results appear here."), elem_id="upload-out",
                                 js_on_load=None)
                up_dl = gr.File(label="Downloads", file_count="multiple", interactive=False,
                                elem_id="upload-files-out")
                up_fig_go = gr.Button("Figures as PNG and PDF", size="sm",
                                      elem_id="upload-figures-go")
                up_fig_msg = gr.HTML(elem_id="upload-figures-msg", js_on_load=None)
                up_figs = gr.File(label="Figures (PNG, PDF)", file_count="multiple",
                                  interactive=False, elem_id="upload-figures")
            with gr.Tab("Theory lab", id="theory"):
                gr.Markdown("The shared-strategy model of \"No Free Lunch in RLVR\": a fitness "
                            "matrix F[s, x] of strategies s on prompts x and a prior pi0. Is "
                            "there a free lunch (a change of mixture that raises pass@1 and "
                            "lowers no prompt), and what does each pass@1 gain cost at worst? "
                            "CSV header `strategy,pi0,<prompt ids...>`, one row per strategy.")
                with gr.Row():
                    with gr.Column(scale=3):
                        mx_text = gr.Textbox(label="Strategy matrix (CSV)", lines=6,
                                             elem_id="matrix-text")
                        mx_file = gr.File(label="or upload the CSV", file_types=[".csv"],
                                          elem_id="matrix-file")
                        mx_ex = gr.Button("Example: the 3x3 counterexample", size="sm",
                                          elem_id="matrix-example")
                    with gr.Column(scale=2):
                        mx_taus = gr.Slider(2, 101, value=21, step=1, label="floors tau")
                        mx_kmax = gr.Dropdown([64, 256, 1024, 4096, 16384], value=1024,
                                              label="largest budget k")
                        mx_go = gr.Button("Diagnose", variant="primary", elem_id="matrix-go")
                mx_out = gr.HTML(render.idle("Results appear here."), elem_id="matrix-out",
                                 js_on_load=None)
                mx_dl = gr.File(label="Downloads", file_count="multiple", interactive=False)
                mx_fig_go = gr.Button("Figures as PNG and PDF", size="sm",
                                      elem_id="matrix-figures-go")
                mx_fig_msg = gr.HTML(elem_id="matrix-figures-msg", js_on_load=None)
                mx_figs = gr.File(label="Figures (PNG, PDF)", file_count="multiple",
                                  interactive=False, elem_id="matrix-figures")
            with gr.Tab("Shaping explorer", id="shaping"):
                gr.Markdown("How the perplexity and position shapings of the RUC report (\"From "
                            "Trial-and-Error to Improvement\", arXiv 2508.07534) and the pass@k "
                            "advantage reweight one example group, computed by "
                            "`rlvr_boundary.shaping` as the trainer adapters apply them.")
                with gr.Row():
                    with gr.Column():
                        sh_ppl = gr.Textbox(label="Perplexities of one group",
                                            value="1.2, 1.5, 1.8, 2.1, 2.4", elem_id="sh-ppl")
                        sh_rewards = gr.Textbox(label="Their rewards", value="1, 0, 1, 0, 1",
                                                elem_id="sh-rewards")
                        sh_alpha = gr.Slider(0, 1, value=0.01, step=0.005, label="alpha",
                                             elem_id="sh-alpha")
                        sh_iqr = gr.Checkbox(label="leave 1.5 IQR outliers out", value=False)
                    with gr.Column():
                        sh_gamma = gr.Slider(0, 1, value=0.1, step=0.01, label="gamma",
                                             elem_id="sh-gamma")
                        sh_m = gr.Slider(0, 40, value=15, step=0.5, label="m (slope)",
                                         elem_id="sh-m")
                        sh_n = gr.Slider(-1, 1, value=-0.5, step=0.05, label="n (shift)",
                                         elem_id="sh-n")
                        sh_d = gr.Radio([1.0, -1.0], value=1.0, label="d (+1 favours late tokens)")
                        sh_cap = gr.Slider(0, 1, value=0.5, step=0.05, label="cap (times |A|)")
                        sh_len = gr.Slider(1, 200, value=10, step=1, label="tokens L")
                    with gr.Column():
                        sh_step = gr.Slider(0, 500, value=250, step=1, label="training step",
                                            elem_id="sh-step")
                        sh_windowed = gr.Checkbox(label="only inside the step window", value=True)
                        sh_lo = gr.Number(label="window: step >", value=200, precision=0)
                        sh_hi = gr.Number(label="window: step <", value=300, precision=0)
                        sh_pk = gr.Textbox(label="pass@k group rewards (0/1)",
                                           value="1, 0, 0, 0, 0, 0, 0, 0", elem_id="sh-pk")
                        sh_k = gr.Slider(1, 64, value=4, step=1, label="k", elem_id="sh-k")
                sh_out = gr.HTML(elem_id="shaping-out", js_on_load=None)
        gr.Markdown(f"<small>{render.esc(limits_text)} Files are kept for your session only and "
                    f"deleted after {ttl / 3600:g} h without use.</small>")
        gr.HTML(f"<style>{render.CSS}</style>", js_on_load=None)

        ex_counts.click(lambda: (compute.example_counts_paste(), "auto"), None,
                        [paste_text, paste_kind], api_name=False)
        ex_curve.click(lambda: (compute.OMNI_MATH_CURVE, "auto"), None, [paste_text, paste_kind],
                       api_name=False)
        paste_go.click(on_paste, [paste_text, paste_kind, paste_base, paste_rl, paste_ks,
                                  paste_alpha, paste_seed, session],
                       [paste_out, paste_files, session, paste_run], api_name="paste")
        paste_fig_go.click(on_figures, [paste_run, session], [paste_fig_msg, paste_figs],
                           api_name="paste_figures")
        up_go.click(on_upload, [up_files, up_format, up_base, up_ks, up_K, up_alpha, up_seed,
                                session], [up_out, up_dl, session, up_run], api_name="upload")
        up_fig_go.click(on_figures, [up_run, session], [up_fig_msg, up_figs],
                        api_name="upload_figures")
        mx_ex.click(lambda: compute.example_matrix(), None, mx_text, api_name=False)
        mx_go.click(on_matrix, [mx_text, mx_file, mx_taus, mx_kmax, session],
                    [mx_out, mx_dl, session, mx_run], api_name="theory")
        mx_fig_go.click(on_figures, [mx_run, session], [mx_fig_msg, mx_figs],
                        api_name="theory_figures")
        sh_inputs = [sh_ppl, sh_rewards, sh_alpha, sh_iqr, sh_gamma, sh_m, sh_n, sh_d, sh_cap,
                     sh_len, sh_step, sh_windowed, sh_lo, sh_hi, sh_pk, sh_k]
        for comp in sh_inputs:
            comp.change(on_shaping, sh_inputs, sh_out, api_name=False, show_progress="hidden")
        demo.load(on_shaping, sh_inputs, sh_out, api_name="shaping")
    demo.rb_runner = runner
    demo.rb_root = root
    return demo

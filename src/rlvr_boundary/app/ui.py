"""The Gradio page: four tabs (paste, upload, theory lab, shaping explorer).

Layout and event wiring only. Numbers come from :mod:`rlvr_boundary.app.compute`
(heavy jobs in worker processes via :class:`~rlvr_boundary.app.jobs.JobRunner`),
HTML from :mod:`rlvr_boundary.app.render`.

Isolation between users: nothing a request computes is kept at module level.
Each browser session gets its own folder (created on its first analysis and
held in a ``gr.State``); each analysis writes into a fresh sub-folder of it, and
the previous analysis' folder is removed when the next one starts. A session
folder is deleted when Gradio drops the session's state, and in any case by
:func:`sweep` once it has seen no analysis for ``session_ttl`` seconds (Gradio
keeps a closed session's state for an hour and evicts states over its capacity
without a callback, so we do not rely on it alone). Results travel back to the
page that asked for them only.
"""

from __future__ import annotations

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


def _session_dir(current: str | None, root: Path) -> str:
    if current and Path(current).is_dir():
        return current
    return tempfile.mkdtemp(prefix="session-", dir=root)


def _new_run(session: str, tab: str) -> str:
    """A fresh folder for one analysis; this tab's earlier analyses in the session are removed.

    Per tab, so an analysis running in one tab keeps its folder while another tab starts.
    """
    for old in Path(session).glob(f"run-{tab}-*"):
        shutil.rmtree(old, ignore_errors=True)
    return tempfile.mkdtemp(prefix=f"run-{tab}-", dir=session)


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
    root = Path(tempfile.mkdtemp(prefix="rlvr-boundary-app-"))
    limits_text = (f"This server accepts files of up to {opts.max_upload_mb:g} MB and "
                   f"{opts.max_rows:,} rows, pasted tables of up to {opts.max_paste_chars:,} "
                   f"characters, and at most {opts.max_cells:,} prompt x budget cells per "
                   "analysis.")
    ttl = opts.session_ttl

    def run_job(name: str, session: str | None, *args):
        session = _session_dir(session, root)
        run = _new_run(session, name.split("_")[0])  # also marks the session folder as used
        sweep(root, ttl, keep=session)
        try:
            res = runner.run(name, *args, run)
        except InputError as exc:
            return render.error(str(exc)), None, session
        except JobError as exc:
            return render.error(str(exc), kind="failed"), None, session
        except Exception as exc:  # a bug: say so on the page; the server keeps serving
            return (render.error(f"{type(exc).__name__}: {exc}", kind="internal error"), None,
                    session)
        return render.result(res), res["files"], session

    def on_paste(text, kind, base_label, rl_label, ks_rates, alpha, seed, session):
        try:
            compute.check_paste(text, opts.max_paste_chars, opts.max_rows)
            settings = _settings(opts, alpha, seed, None)
            settings["ks_rates"] = (ks_rates or "").strip() or None
        except InputError as exc:
            return render.error(str(exc)), None, session
        return run_job("paste_job", session, text, kind, (base_label or "", rl_label or ""),
                       settings)

    def on_upload(files, fmt, base_label, ks, K, alpha, seed, session):
        try:
            settings = _settings(opts, alpha, seed, ks, K)
            settings["format"] = fmt or "auto"
            settings["base"] = (base_label or "").strip() or None
        except InputError as exc:
            return render.error(str(exc)), None, session
        paths = [f if isinstance(f, str) else getattr(f, "name", str(f)) for f in (files or [])]
        uploads = [(p, Path(p).name) for p in paths]
        return run_job("files_job", session, uploads, settings,
                       (opts.max_upload_bytes, opts.max_rows))

    def on_matrix(text, upload, taus, kmax, session):
        if upload:
            path = Path(upload if isinstance(upload, str) else upload.name)
            try:
                compute.check_upload(path, path.name, opts.max_upload_bytes, opts.max_rows)
                text = path.read_text(encoding="utf-8")
            except InputError as exc:
                return render.error(str(exc)), None, session
            except UnicodeDecodeError:
                return render.error(f"{path.name}: the file is not UTF-8 text"), None, session
        try:
            compute.check_paste(text, opts.max_paste_chars, opts.max_rows)
        except InputError as exc:
            return render.error(str(exc).replace(compute.PASTE_SOURCE, "strategy matrix")), \
                None, session
        return run_job("matrix_job", session, text, int(taus), int(kmax))

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
                       [paste_out, paste_files, session], api_name="paste")
        up_go.click(on_upload, [up_files, up_format, up_base, up_ks, up_K, up_alpha, up_seed,
                                session], [up_out, up_dl, session], api_name="upload")
        mx_ex.click(lambda: compute.example_matrix(), None, mx_text, api_name=False)
        mx_go.click(on_matrix, [mx_text, mx_file, mx_taus, mx_kmax, session],
                    [mx_out, mx_dl, session], api_name="theory")
        sh_inputs = [sh_ppl, sh_rewards, sh_alpha, sh_iqr, sh_gamma, sh_m, sh_n, sh_d, sh_cap,
                     sh_len, sh_step, sh_windowed, sh_lo, sh_hi, sh_pk, sh_k]
        for comp in sh_inputs:
            comp.change(on_shaping, sh_inputs, sh_out, api_name=False, show_progress="hidden")
        demo.load(on_shaping, sh_inputs, sh_out, api_name="shaping")
    demo.rb_runner = runner
    demo.rb_root = root
    return demo

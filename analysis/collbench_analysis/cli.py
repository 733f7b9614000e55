"""Command-line front ends: ``collplot``, ``collcompare``, ``colltune`` and ``collmodel`` (PyTorch models -> DDP files).

Both return an exit status instead of calling ``sys.exit`` so tests can run them
in-process (matplotlib is imported once per test session, keeping tests fast).
Exit codes: 0 ok, 1 collcompare found a regression, 2 bad input or usage.
"""
from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
import textwrap
from pathlib import Path
from typing import Sequence

from . import ddp_export as dx, expect
from .load import LoadError, format_bytes, load, name_mpis, parse_size
from .schema import ops

EXIT_OK, EXIT_REGRESSED, EXIT_BAD_INPUT = 0, 1, 2


def extra_figures(ds, outdir: Path) -> list:
    """Figures of the pandas modules: several MPIs side by side, hot vs cold cache, per-rank heat maps
    (stragglers)."""
    from . import cache_state, mpis, stragglers  # heavy (matplotlib): only when collplot draws

    return (mpis.make_figures(ds, outdir) + cache_state.make_figures(ds.results, outdir)
            + stragglers.make_figures(stragglers.frame(ds), outdir))


def _sizes(text: str) -> list[int]:
    try:
        return [parse_size(s) for s in text.split(",") if s.strip()]
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _fraction(text: str) -> float:
    """Accept 0.1, 10% or 10 (percent when > 1)."""
    try:
        v = float(text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad threshold {text!r} (e.g. 0.10 or 10%)") from None
    if text.endswith("%") or v >= 1:
        v /= 100.0
    if not 0 <= v < 10:
        raise argparse.ArgumentTypeError(f"bad threshold {text!r}")
    return v


# --------------------------------------------------------------------------- collplot

def collplot_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="collplot",
        description="Plot collbench JSON Lines results: bandwidth/latency curves, custom vs library, "
                    "intra vs inter node p2p, scaling, α–β model, several backends or MPIs side by side; writes PNGs, "
                    "report.html and summary.md.",
        epilog="example: collplot results/ -o plots --sizes 1K,1M,64M --title 'allreduce on n[1-4]'")
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="*.jsonl file or folder (searched recursively)")
    p.add_argument("-o", "--outdir", required=True, type=Path, help="output folder (created if missing)")
    p.add_argument("--sizes", type=_sizes, default=None,
                   help="message sizes for the scaling plots, e.g. 1M,16M (default: smallest, mid, largest common)")
    p.add_argument("--title", default="collbench report", help="report title")
    p.add_argument("--model", action="store_true", help="also print the α–β model and crossover tables")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors and warnings")
    return p


def collplot_main(argv: Sequence[str] | None = None) -> int:
    args = collplot_parser().parse_args(argv)
    try:
        ds = load(args.inputs)
    except LoadError as err:
        print(f"collplot: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    # heavy (matplotlib): only once input is known to be good
    from . import efficiency, plots  # efficiency (issue 21): over the links, its own section
    from .ddp import figures as ddp_figures, records as ddp_records
    from .report import answers, assemble, writers

    try:
        workloads = ddp_records.workloads_of(ds)
        ddp_records.measured_of(ds)  # a malformed ddp_measured record: exit 2 here, not mid-report
    except LoadError as err:
        print(f"collplot: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    outdir: Path = args.outdir
    figures = answers.answer_figures(ds, outdir)  # the report's lead: one winner chart per op
    figures += plots.make_all(ds, outdir, args.sizes) + ddp_figures.make_figures(workloads, outdir)
    figures += efficiency.make_figures(ds, outdir)
    figures += extra_figures(ds, outdir)
    tables = assemble.build_tables(ds, workloads)
    html_path = writers.write_html(outdir / "report.html", args.title, ds, tables, figures)
    md_path = writers.write_markdown(outdir / "summary.md", args.title, ds, tables, figures)
    if args.model:
        if tables.model_note:
            print(f"\n{tables.model_note}")
        for t in tables.model_tables:
            print(f"\n{t.title}\n{t.text()}")
    if not args.quiet:
        bad = int((ds.results["wrong"] > 0).sum())
        if bad:
            print(f"collplot: {bad} point(s) reported wrong results — see the report's first table",
                  file=sys.stderr)
        print(f"collplot: {len(ds.results)} points from {len(ds.files)} file(s) -> {len(figures)} figures, "
              f"{html_path}, {md_path}")
    return EXIT_OK


# --------------------------------------------------------------------------- collcompare

def _names(text: str) -> list[str]:
    names = [s.strip() for s in text.split(",") if s.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"bad control list {text!r} (e.g. library or library,ring)")
    return names


def _open_interval(hi: float, what: str, hint: str):
    """An argparse type: a number strictly between 0 and ``hi``, else 'bad WHAT 'TEXT' (HINT)'."""
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            v = -1.0
        if not 0 < v < hi:
            raise argparse.ArgumentTypeError(f"bad {what} {text!r} ({hint})")
        return v
    return parse


_alpha = _open_interval(1, "alpha", "a probability, e.g. 0.05")
_percentile = _open_interval(100, "quantile", "a percentile between 0 and 100, e.g. 10 or 50")


def collcompare_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="collcompare",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.fill("Compare two sets of collbench results point by point. A point is regressed/improved only "
                    "when its change is statistically significant after correcting for the number of points "
                    "AND larger than --threshold (on a low percentile of each point's samples, --quantile); the default verdict is control-normalised (each point divided "
                    "by its own run's library point at the same size), so a slower machine is reported as drift "
                    "of the controls, not as a regression of every algorithm. Give several runs per side (a "
                    "folder, or one file holding several runs; 6-8 alternating runs find a 20% change on a "
                    "noisy machine): each point's between-run variance then comes from its own runs. One run per "
                    "side calls only changes well beyond the machine's run-to-run noise. "
                    "Exit status: 0 no significant regression, 1 at least one, 2 bad input.", 100),
        epilog=textwrap.fill("verdicts: regressed, improved, unchanged, inconclusive (too few samples, no control), "
                             "control (a control point: measures the machine), added, removed, skipped.", 100) + "\n"
               "example: collcompare main/ branch/ -o cmp --threshold 5%")
    p.add_argument("before", help="baseline *.jsonl file or folder (all runs in it form the BEFORE side)")
    p.add_argument("after", nargs="?", help="candidate *.jsonl file or folder (all runs in it form the AFTER side)")
    p.add_argument("-o", "--outdir", type=Path, default=None,
                   help="write compare.md, compare.html and compare_<op>.png here (default: print only)")
    p.add_argument("--threshold", type=_fraction, default=0.10,
                   help="smallest change that counts (of the compared, normalised statistic), e.g. 0.10 or 10%% "
                        "(default 0.10)")
    p.add_argument("--alpha", type=_alpha, default=0.05, help="significance level after correction (default 0.05)")
    p.add_argument("--correction", choices=("bh", "holm"), default="bh",
                   help="multiple-testing correction across points: bh = Benjamini-Hochberg (false discovery "
                        "rate, default), holm = Holm (family-wise error)")
    p.add_argument("--mode", choices=("auto", "normalised", "raw"), default="auto",
                   help="auto (default): control-normalised where the run has a control point, else raw when "
                        "both sides have >= 2 runs, else inconclusive; normalised: always divide by the control; "
                        "raw: absolute times (machine drift counts as change)")
    p.add_argument("--control", type=_names, default=["library"], metavar="ALGO[,ALGO...]",
                   help="algorithms that did not change by construction: they measure the machine's drift and "
                        "normalise the others (default library)")
    p.add_argument("--quantile", type=_percentile, default=10.0, metavar="Q",
                   help="percentile of each point's samples that is compared (default 10: interference on a shared "
                        "machine only adds time, so the lower tail measures the code; 50: the median)")
    p.add_argument("--all", action="store_true", help="print every point, not only the changed ones")
    g = p.add_argument_group("acceptance gate", "collcompare RESULTS --write-expect FILE: references for "
                             "collbench --expect from a good run (collbench_analysis/expect.py)")
    g.add_argument("--write-expect", type=Path, metavar="FILE", help="write the expectation file instead of comparing")
    g.add_argument("--expect-tolerance", type=_fraction, default=0.20, metavar="X",
                   help="how far below the measured busbw (above the time) a rerun may fall, e.g. 20%% (default)")
    g.add_argument("--expect-metric", choices=("auto", "busbw", "time"), default="auto",
                   help="reference per point: auto (default) = p50 time below 64 KiB, busbw above")
    return p


def collcompare_main(argv: Sequence[str] | None = None) -> int:
    args = collcompare_parser().parse_args(argv)
    if args.write_expect is not None:
        return expect.cli(args)
    if args.after is None:
        print("collcompare: error: two inputs to compare (BEFORE AFTER), or one with --write-expect FILE",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        before = load([args.before])
        after = load([args.after])
        for side, ds in (("before", before), ("after", after)):
            if ds.results.empty:  # workload (DDP) records only: nothing here compares them yet
                raise LoadError(f"{side}: no result records (collcompare compares collective results)")
    except LoadError as err:
        print(f"collcompare: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    from . import compare as cmp  # heavy (scipy): only once both inputs are known to be good

    b_res, a_res = before.results, after.results
    if len({*b_res["mpi"].dropna(), *a_res["mpi"].dropna()}) > 1:  # an Open MPI run is no earlier run of an MPICH one
        b_res, a_res = name_mpis(b_res, a_res)
    different = cmp.no_shared_backend(b_res, a_res)
    if different:
        print(f"collcompare: error: {different}", file=sys.stderr)
        return EXIT_BAD_INPUT
    res = cmp.compare(b_res, a_res, args.threshold, mode=args.mode, controls=args.control,
                      alpha=args.alpha, correction=args.correction, quantile=args.quantile)
    for line in cmp.header_lines(res, args.before, args.after):
        print(f"collcompare: {line}")
    if args.all or res.changed:
        table = cmp.diff_table(res, res.diffs if args.all else None)
        print(f"\n{table.title}\n{table.text()}")
    else:
        print("collcompare: no point changed significantly beyond the threshold")
    if args.outdir is not None:
        args.outdir.mkdir(parents=True, exist_ok=True)
        figs = cmp.plot_changes(res, args.outdir)
        md = cmp.write_markdown(args.outdir / "compare.md", res, args.before, args.after, figs)
        page = cmp.write_html(args.outdir / "compare.html", res, args.before, args.after, figs)
        print(f"collcompare: wrote {md}, {page} and {len(figs)} figure(s)")
    if res.regressed:
        worst = max(res.regressed, key=lambda d: d.change if d.change is not None else math.inf)
        p = worst.point
        what = f"{worst.change:+.1%}" if worst.change is not None else worst.reason
        print(f"collcompare: REGRESSION in {len(res.regressed)} point(s); worst {p.op}/{p.algo} {p.layout} "
              f"{format_bytes(p.bytes)} {what}", file=sys.stderr)
        return EXIT_REGRESSED
    return EXIT_OK


# --------------------------------------------------------------------------- colltune

def _collective_ops(text: str) -> list[str]:
    known = [name for name, facts in ops().items() if facts.kind == "collective"]
    names = [s.strip() for s in text.split(",") if s.strip()]
    bad = [n for n in names if n not in known]
    if not names or bad:
        raise argparse.ArgumentTypeError(f"bad op list {text!r} (collective ops: {', '.join(known)})")
    return names


def _margin(text: str) -> float:
    """A relative margin like --threshold: 0.05, 5% and 5 all mean 5 %."""
    try:
        return _fraction(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"bad margin {text!r} (e.g. 0.05 or 5%)") from None


def colltune_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="colltune",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.fill("Turn a sweep's results into a tuning file (YAML, schema collbench-tuning/1): per "
                                  "(op, backend, device, layout) the algorithm for each message-size range. Per "
                                  "measured size the fastest algorithm (lowest p50) is the best; every algorithm "
                                  "whose p50 is within the best's p95 (or --margin) is tied with it, and the "
                                  "simplest tied one is chosen, the library first. Range boundaries sit at the "
                                  "geometric mean of consecutive measured sizes. Prints a table per entry. Where one of a "
                                  "library's own algorithms (library:ALGO) is a choice, also writes that library's "
                                  "tuning file beside -o and prints how to use it. "
                                  "Exit status: 0 ok, 2 bad or no usable input.", 100),
        epilog="examples: colltune results/ -o tuning.yaml --op allreduce,broadcast --margin 5%\n"
               "          colltune --command tuning.yaml --collbench build/collbench")
    p.add_argument("inputs", nargs="*", metavar="RESULTS", help="*.jsonl file or folder (searched recursively)")
    p.add_argument("-o", "--output", type=Path, help="the tuning file to write (YAML); needed with RESULTS")
    p.add_argument("--op", type=_collective_ops, default=None, metavar="OP[,OP...]",
                   help="tune only these collective ops (default: every op in the results)")
    p.add_argument("--margin", type=_margin, default=0.0, metavar="X",
                   help="also count as tied with the best an algorithm whose p50 is within X of the best's p50 "
                        "(0.05, 5%% and 5 all mean 5%%; default 0: within the best's p95 only)")
    p.add_argument("--tie", choices=("spread", "median"), default="spread",
                   help="spread (default): a p50 within the best's p95 is a tie; median: a p50 within 1.96 "
                        "standard errors of the two medians' difference (from each one's p5-p95 spread and "
                        "sample count) is a tie, narrower where spreads are wide (docs/tuning.md 'How the algorithm is chosen')")
    p.add_argument("--no-library-files", action="store_true",
                   help="do not write the libraries' own tuning files: by default, where a library:ALGO variant is "
                        "a choice, -o FILE also gets FILE.ompi-rules.conf (Open MPI coll/tuned rules), "
                        "FILE.mpich-mpir.json + FILE.mpich-ch4.json (MPICH selection), FILE.nccl-tuner.csv (NCCL's "
                        "example tuner), each with the lines that make an application use it "
                        "(docs/library-tuning.md)")
    p.add_argument("--mpich-lib", type=Path, metavar="PATH",
                   help="MPICH's shared library, whose built-in selection trees the MPICH files extend (default: "
                        "libmpich.so.12 in the usual library folders)")
    p.add_argument("--command", type=Path, metavar="TUNING",
                   help="instead: read the tuning file TUNING and print the collbench command line that runs its "
                        "choices (mpirun on its largest layout, every op it covers, --algo auto --tuning TUNING)")
    p.add_argument("--collbench", default="collbench", metavar="BIN",
                   help="--command: the collbench executable to name (default: collbench)")
    p.add_argument("--backend", default=None, metavar="NAME",
                   help="--command: the backend whose entries the command runs, for a file with several (--algo "
                        "auto runs within one backend; default: mpi when the file has entries of it, else the first "
                        "by name)")
    return p


def colltune_main(argv: Sequence[str] | None = None) -> int:
    parser = colltune_parser()
    args = parser.parse_args(argv)
    from . import library_files as lf, tune  # PyYAML: only colltune reads and writes YAML

    if args.backend is not None and args.command is None:
        parser.error("--backend chooses the entries of --command TUNING")
    if args.command is not None:
        if args.inputs or args.output:
            parser.error("--command TUNING reads a tuning file: no RESULTS, no -o")
        try:
            print(shlex.join(tune.run_command(args.command, args.collbench, args.backend)))
            backends = tune.backends_of(tune.load_tuning(args.command))
            if len(backends) > 1:  # one command runs one backend's entries: say which, and how to get the others
                ran = args.backend or backends[0]
                others = "; ".join(shlex.join(["colltune", "--command", str(args.command), "--backend", b])
                                   for b in backends if b != ran)
                print(f"colltune: {args.command} has entries of {', '.join(backends)}; this command runs {ran}'s "
                      f"(--algo auto runs within one backend); the others: {others}", file=sys.stderr)
        except tune.TuningFileError as err:
            print(f"colltune: error: {err}", file=sys.stderr)
            return EXIT_BAD_INPUT
        return EXIT_OK
    if not args.inputs or args.output is None:
        parser.error("RESULTS and -o/--output are required (or --command TUNING)")
    try:
        ds = load(args.inputs)
        tuning = tune.tune(ds, ops=args.op, margin=args.margin, tie=args.tie)
        libs = [] if args.no_library_files else lf.library_files(tuning, ds.results, lambda: _mpich_defaults(args))
        path = tune.write_tuning(args.output, tuning)
        written = lf.write_library_files(libs, path)
    except (LoadError, tune.TuneError) as err:
        print(f"colltune: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as err:
        print(f"colltune: error: {args.output}: cannot write ({err.strerror or err})", file=sys.stderr)
        return EXIT_BAD_INPUT
    for entry in tuning.entries:
        table = tune.entry_table(entry)
        print(f"\n{table.title}\n{table.text()}\n{table.note}")
    print()
    for line in tune.summary_lines(tuning):
        print(f"colltune: {line}")
    print(f"colltune: wrote {path}")
    for f in libs:
        for note in f.notes:
            print(f"colltune: {note}")
    for lib_path, use in written:
        print(f"colltune: wrote {lib_path}")
        for line in use:
            print(f"colltune:   use it: {line}")
    return EXIT_OK


def _mpich_defaults(args: argparse.Namespace):
    from . import library_files as lf  # PyYAML: only colltune reads and writes YAML

    lib = args.mpich_lib or lf.find_mpich_library()
    return None if lib is None else lf.mpich_defaults(lib)


def collmodel_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="collmodel",
        description="Export a PyTorch model's gradients as DDP sees them, for collbench --workload ddp:\n"
                    "the parameter list (--model), the gradient-ready order DDP measured (--grad-order),\n"
                    "DDP's own buckets (to check against) and, with --profile-steps, a per-parameter\n"
                    "compute profile (--compute-profile). See docs/ddp.md.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example: collmodel torchvision.models:resnet50 --input 2,3,64,64 -o resnet50\n"
               "         mpirun -np 2 build/collbench --workload ddp --model resnet50.model.json "
               "--grad-order resnet50.grad-order.txt")
    p.add_argument("model", metavar="MODEL", help="MODULE:NAME or FILE.py:NAME, called (with --kwargs) to make the nn.Module")
    p.add_argument("--kwargs", default="{}", help="JSON object of keyword arguments for MODEL (default {})")
    p.add_argument("--input", metavar="SHAPE[:DTYPE[:HIGH]]",
                   help="the example input: 2,3,64,64 (randn) or 8,128:long:30522 (integers below HIGH)")
    p.add_argument("--input-fn", metavar="MODULE:NAME", help="instead of --input: NAME() returns a fresh input per "
                   "step (a tuple is passed as positional arguments)")
    p.add_argument("--ignore", default="", help="comma-separated parameter names DDP is told to ignore "
                   "(_set_params_and_buffers_to_ignore_for_model)")
    p.add_argument("--bucket-cap-mb", type=float, default=25.0, help="DDP's bucket_cap_mb for the reference buckets (default 25)")
    p.add_argument("--steps", type=int, default=3, help="DDP training steps (at least 3: buckets are rebuilt at step 1)")
    p.add_argument("--profile-steps", type=int, default=0, metavar="N",
                   help="also time N plain steps (after 2 discarded) into PREFIX.profile.yaml")
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1: one rank's core)")
    p.add_argument("-o", "--output", required=True, metavar="PREFIX",
                   help="writes PREFIX.model.json, PREFIX.grad-order.txt, PREFIX.ddp.json (and PREFIX.profile.yaml)")
    return p


def collmodel_main(argv: Sequence[str] | None = None) -> int:
    args = collmodel_parser().parse_args(argv)
    out = Path(args.output)
    try:
        # What needs no PyTorch first, so bad options fail at once.
        try:
            kwargs = json.loads(args.kwargs)
        except json.JSONDecodeError as err:
            raise dx.ExportError(f"--kwargs '{args.kwargs}' is not JSON ({err})") from None
        if not isinstance(kwargs, dict):
            raise dx.ExportError(f"--kwargs '{args.kwargs}' is not a JSON object")
        if args.bucket_cap_mb <= 0 or args.profile_steps < 0 or args.threads < 1:
            raise dx.ExportError("--bucket-cap-mb must be > 0, --profile-steps >= 0, --threads >= 1")
        if args.steps < dx.MIN_STEPS:
            raise dx.ExportError(f"--steps must be at least {dx.MIN_STEPS}: DDP rebuilds its buckets at step 1 "
                                 "and logs them after")
        if (args.input is None) == (args.input_fn is None):
            raise dx.ExportError("give the example input: --input SHAPE[:DTYPE[:HIGH]] or --input-fn MODULE:NAME")
        build = dx.load_callable(args.model)
        make = dx.load_callable(args.input_fn) if args.input_fn else dx.input_maker(args.input)
        import torch  # heavy and optional (python3-torch): only collmodel needs it, once the options are good

        torch.set_num_threads(args.threads)
        torch.manual_seed(0)

        def model():
            try:
                return build(**kwargs)
            except TypeError as err:
                raise dx.ExportError(f"{args.model} with --kwargs {args.kwargs}: {err}") from None

        ignore = [n for n in args.ignore.split(",") if n]
        view = dx.ddp_view(model(), make, args.bucket_cap_mb, ignore, args.steps)
        written = [out.with_name(out.name + s) for s in (".model.json", ".grad-order.txt", ".ddp.json")]
        out.parent.mkdir(parents=True, exist_ok=True)
        written[0].write_text(json.dumps(dx.model_json(args.model.rpartition(":")[2], view), indent=1) + "\n")
        written[1].write_text(f"# {args.model}: gradient-ready order DDP recorded (torch {view.torch_version})\n" +
                              "".join(view.names[i] + "\n" for i in view.ready_order))
        written[2].write_text(json.dumps(dx.ddp_json(view), indent=1) + "\n")
        if args.profile_steps:
            prof = dx.step_profile(model(), make, view.names, args.profile_steps)
            written.append(out.with_name(out.name + ".profile.yaml"))
            written[-1].write_text(dx.profile_yaml(prof, args.model))
    except dx.ExportError as err:
        print(f"collmodel: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as err:
        print(f"collmodel: error: {args.output}: cannot write ({err.strerror or err})", file=sys.stderr)
        return EXIT_BAD_INPUT
    mib = sum(view.bucket_sizes) / 2**20
    print(f"collmodel: {len(view.names)} parameter tensors, {mib:.1f} MiB of gradients, DDP's buckets at cap "
          f"{args.bucket_cap_mb:g} MB: {len(view.bucket_sizes)}")
    for path in written:
        print(f"collmodel: wrote {path}")
    cmd = ["collbench", "--workload", "ddp", "--model", str(written[0]), "--grad-order", str(written[1]),
           "--bucket-cap-mb", f"{args.bucket_cap_mb:g}"]
    if args.profile_steps:
        cmd += ["--compute-profile", str(written[3])]
    print("collmodel: run: " + shlex.join(cmd))
    return EXIT_OK

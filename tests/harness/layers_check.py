#!/usr/bin/env python3
"""Reads the sources' #include lines and code; fails naming the file and line of each breach.

1. The harness's folders depend one way, top to bottom (harness/CMakeLists.txt):
   app -> report -> measure -> results -> runtime -> plan -> workload; a folder includes its own and
   lower ones. The printers (report/) read the results model (results/) that measurement fills.
2. No MPI outside the MPI backend: no MPI_/MPIX_ symbol and no <mpi.h>/<mpi-ext.h> in code (comments
   and string literals do not count) of harness/, analysis/ or collectives/ outside collectives/backends/mpi/.
3. collectives/ never includes harness/, and outside collectives/backends/ it names no backend's folder:
   backends depend on the algorithms and the device path, never the other way. No exceptions: the
   readers of file formats both sides use (the tuning file) live in collectives/formats/.

Usage: layers_check.py REPO
"""
import pathlib
import re
import sys

ORDER = ["app", "report", "measure", "results", "runtime", "plan", "workload"]
SOURCE = re.compile(r"\.(c|cc|cpp|cu|h|hpp|cuh)$")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')
MPI_SYMBOL = re.compile(r"\bMPIX?_[A-Za-z]")
MPI_HEADER = re.compile(r"^\s*#\s*include\s*<mpi(-ext)?\.h>")


def code_only(text):
    """The text with comments and string/char literals blanked (line numbers kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + (m.group(1) if m else "") + '"', i)
            j = n if end < 0 else end + len(m.group(1) if m else "") + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'" and not (c == "'" and i > 0 and text[i - 1].isalnum()):  # 1'000 digit separators
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def sources(root, folder):
    return sorted(p for p in (root / folder).rglob("*") if p.is_file() and SOURCE.search(p.name))


def main(repo):
    root = pathlib.Path(repo)
    breaches = []
    for path in sources(root, "harness"):
        rel = path.relative_to(root).as_posix()
        parts = rel.split("/")
        mine = parts[1] if len(parts) > 2 else None
        for no, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if not m or not m.group(1).startswith("harness/") or mine is None:
                continue
            target = m.group(1).split("/")
            theirs = target[1] if len(target) > 2 else None
            if theirs is None or theirs == mine:
                continue
            if mine not in ORDER or theirs not in ORDER:
                breaches.append(f"{rel}:{no}: harness/{mine} or harness/{theirs} is not a known layer ({', '.join(ORDER)})")
            elif ORDER.index(theirs) < ORDER.index(mine):
                breaches.append(f"{rel}:{no}: {mine}/ includes {theirs}/, a layer above it: {line.strip()}")
    for folder in ("harness", "collectives", "analysis"):
        for path in sources(root, folder) + ([] if folder != "analysis" else sorted((root / folder).rglob("*.py"))):
            rel = path.relative_to(root).as_posix()
            if rel.startswith("collectives/backends/mpi/"):
                continue
            text = path.read_text()
            code = code_only(text) if SOURCE.search(rel) else text
            for no, line in enumerate(code.splitlines(), 1):
                if MPI_SYMBOL.search(line) or MPI_HEADER.match(line):
                    breaches.append(f"{rel}:{no}: MPI outside collectives/backends/mpi/: {line.strip()}")
    for path in sources(root, "collectives"):
        rel = path.relative_to(root).as_posix()
        for no, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            inc = m.group(1)
            if inc.startswith("harness/"):
                breaches.append(f"{rel}:{no}: collectives/ includes the harness: {line.strip()}")
            b = re.match(r"collectives/backends/([a-z0-9_]+)/", inc)
            if b and not rel.startswith("collectives/backends/"):
                breaches.append(f"{rel}:{no}: names backend '{b.group(1)}' outside collectives/backends/: {line.strip()}")
    for b in breaches:
        print(b)
    print(f"layers_check: {len(breaches)} breach(es)" if breaches else "layers_check: every include goes down a layer; no MPI outside its backend")
    return 1 if breaches else 0


def self_test():
    """The checker finds each kind of breach (planted in a scratch tree) and passes clean code."""
    import tempfile
    plants = {
        "harness/measure/bad.cpp": '#include "harness/report/report_table.hpp"\n',
        "harness/results/bad.cpp": '#include "harness/measure/measure.hpp"\n',
        "harness/report/ok.cpp": '#include "harness/results/result.hpp"\n',
        "harness/runtime/bad.cpp": "#include <mpi.h>\nint x = MPI_Barrier(c);\n",
        "collectives/gpu/bad.cpp": '#include "collectives/backends/nccl/nccl_transport.hpp"\n#include "harness/app/sweep.hpp"\n',
        "harness/plan/ok.cpp": '// MPI_Init in a comment\nconst char* s = "MPI_Bcast";\n#include "harness/workload/model.hpp"\n',
        "collectives/backends/mpi/ok.cpp": "#include <mpi.h>\nint y = MPI_Barrier(c);\n",
        "collectives/backends/mpi/preload/ok.cpp": '#include "collectives/formats/tuning.hpp"\n',
        "collectives/backends/mpi/preload/bad2.cpp": '#include "harness/plan/tuning.hpp"\n',
        "collectives/backends/mpi/preload/bad.cpp": '#include "harness/app/sweep.hpp"\n',
    }
    with tempfile.TemporaryDirectory() as d:
        for rel, text in plants.items():
            p = pathlib.Path(d, rel)
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
        (pathlib.Path(d) / "analysis").mkdir()
        import io, contextlib
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = main(d)
        found = buf.getvalue()
    expected = ["harness/measure/bad.cpp:1: measure/ includes report/", "harness/results/bad.cpp:1: results/ includes measure/", "harness/runtime/bad.cpp:1: MPI outside",
                "harness/runtime/bad.cpp:2: MPI outside", "collectives/gpu/bad.cpp:1: names backend 'nccl'",
                "collectives/gpu/bad.cpp:2: collectives/ includes the harness",
                "collectives/backends/mpi/preload/bad.cpp:1: collectives/ includes the harness",
                "collectives/backends/mpi/preload/bad2.cpp:1: collectives/ includes the harness", "8 breach(es)"]
    missing = [e for e in expected if e not in found]
    if rc != 1 or missing or "ok.cpp" in found:
        print(found + f"self-test FAILED: rc={rc}, missing {missing}")
        return 1
    print("layers_check self-test: every planted breach found, the clean files passed")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--self-test"]:
        sys.exit(self_test())
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))

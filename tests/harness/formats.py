"""The tuning and expectation file formats: collbench's readers against their JSON Schemas.

Every example under tests/harness/formats/{tuning,expect}/ is loaded as the analysis loads YAML
(PyYAML's safe_load), validated with results/schema/collbench-{tuning,expect}-1.json, and given to
collbench's reader (--dry-run --algo auto --tuning FILE; --dry-run --expect FILE), and tuning files
also to the Python reader (collbench_analysis.tune.load_tuning). Each folder says what must happen:

  valid/    schema-valid, and every reader accepts it (exit 0);
  invalid/  schema-invalid (or not YAML at all), and every reader refuses it: collbench with exit
            status 2 and one line on stderr, "collbench: error: ..." naming the file;
  beyond/   schema-valid, but against a rule the schema cannot state (the schema's description
            lists them: ranges tiling [0, inf), known algorithm names, ...): refused as above.

So a schema-valid file is one collbench accepts unless a documented rule beyond the schema says
otherwise, and a schema-invalid one is always refused. A new case is a new file in the folder.

    /usr/bin/python3 tests/harness/formats.py build/collbench      # exit 1 naming each mismatch
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "analysis"))
from collbench_analysis import tune  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent / "formats"
SCHEMAS = {"tuning": ROOT / "results" / "schema" / "collbench-tuning-1.json",
           "expect": ROOT / "results" / "schema" / "collbench-expect-1.json"}
VERDICTS = ("valid", "invalid", "beyond")


def schema_error(kind: str, path: Path) -> str | None:
    """Why the file is not valid by its schema once loaded (None: valid)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        return f"not YAML ({str(err).splitlines()[0]})"
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMAS[kind].read_text(encoding="utf-8")))
    err = jsonschema.exceptions.best_match(validator.iter_errors(data))
    return None if err is None else f"{'/'.join(map(str, err.absolute_path)) or 'file'}: {err.message}"


def collbench_verdict(collbench: str, kind: str, path: Path) -> tuple[bool, str]:
    """(accepted, why not): the C++ reader's answer, checked to be one clear line when it refuses."""
    args = (["--op", "allreduce", "--algo", "auto", "--tuning", str(path)] if kind == "tuning"
            else ["--expect", str(path)])
    p = subprocess.run([collbench, "--dry-run", *args], capture_output=True, text=True, timeout=60)
    lines = p.stderr.splitlines()
    if p.returncode == 0 and not lines:
        return True, ""
    one_line = len(lines) == 1 and lines[0].startswith("collbench: error: ") and str(path) in lines[0]
    if p.returncode != 2 or not one_line:
        return False, f"not one clear line: exit {p.returncode}, stderr {p.stderr!r}"
    return False, lines[0]


def python_verdict(path: Path) -> tuple[bool, str]:
    try:
        tune.load_tuning(path)
    except tune.TuningFileError as err:
        return False, str(err)
    return True, ""


def main(collbench: str) -> int:
    problems: list[str] = []
    counts = {v: 0 for v in VERDICTS}
    for kind in SCHEMAS:
        for verdict in VERDICTS:
            files = sorted((EXAMPLES / kind / verdict).glob("*.yaml"))
            if not files:
                problems.append(f"{kind}/{verdict}: no examples")
            for path in files:
                counts[verdict] += 1
                where = f"{kind}/{verdict}/{path.name}"
                why_invalid = schema_error(kind, path)
                if (why_invalid is None) != (verdict != "invalid"):
                    problems.append(f"{where}: the schema says {'valid' if why_invalid is None else why_invalid}")
                readers = {"collbench": collbench_verdict(collbench, kind, path)}
                if kind == "tuning":
                    readers["load_tuning"] = python_verdict(path)
                for reader, (accepted, why) in readers.items():
                    if why.startswith("not one clear line"):
                        problems.append(f"{where}: {reader}: {why}")
                    elif accepted != (verdict == "valid"):
                        problems.append(f"{where}: {reader} {'accepts it' if accepted else 'refuses it: ' + why}")
    for p in problems:
        print(p)
    print(f"formats: {sum(counts.values())} examples ({', '.join(f'{n} {v}' for v, n in counts.items())}), "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

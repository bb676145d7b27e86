"""acp-codegen's models side by side with plain datamodel-codegen output, in one run.

Measures, on this machine and for the same upstream schemas:

1. generation time: every locked schema, cold (no cache), ours vs plain
   ``datamodel-codegen`` on the raw schemas (both with one worker per core),
   and our run where nothing changed;
2. cold import time of one release's stable models, with pydantic already
   loaded (the cost of the models themselves) and for the whole process;
3. validation time of ``session/update`` notifications carrying
   ``agent_message_chunk``, ``tool_call_update``, an idle ``state_update``
   with ``stopReason: "error"`` (three levels of tagged unions) and an unknown
   tag.

It prints absolute figures and ratios; it asserts nothing (the machine is shared
and noisy).  Run it with ``make bench`` or ``python benchmarks/bench_models.py``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from codegen import naming  # noqa: E402
from codegen.schema.load import SchemaSource, read_lock  # noqa: E402

MESSAGES: list[dict[str, Any]] = [
    {
        "sessionId": "sess-1",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "msg-1",
            "content": {"type": "text", "text": "Hello, world"},
        },
    },
    {
        "sessionId": "sess-1",
        "update": {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "tool-1",
            "title": "Read file",
            "kind": "read",
            "status": "in_progress",
            "locations": [{"path": "/workspace/a.py", "line": 3}],
        },
    },
    {
        "sessionId": "sess-1",
        "update": {
            "sessionUpdate": "state_update",
            "state": "idle",
            "stopReason": "error",
            "error": {"code": -32603, "message": "model unavailable"},
        },
    },
    {"sessionId": "sess-1", "update": {"sessionUpdate": "_vendor/telemetry", "payload": {"a": [1, 2, 3]}}},
]


def plain_codegen(schema: Path, output: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "datamodel_code_generator",
            "--input",
            str(schema),
            "--input-file-type",
            "jsonschema",
            "--output",
            str(output),
            "--output-model-type",
            "pydantic_v2.BaseModel",
            "--target-python-version",
            "3.11",
            "--disable-timestamp",
            "--formatters",
            "black",
            "--disable-warnings",
        ],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - started


def time_generation(workdir: Path, jobs: int) -> dict[str, float]:
    source = SchemaSource(read_lock())
    schemas = []
    for release in read_lock().releases:
        files = source.load(release)
        schemas += [files.schema(False).path, files.schema(True).path]
    plain_dir = workdir / "plain"
    plain_dir.mkdir()
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(lambda p: plain_codegen(p[1], plain_dir / f"plain_{p[0]}.py"), enumerate(schemas)))
    plain = time.perf_counter() - started

    ours_out = workdir / "ours"
    command = [
        sys.executable,
        "-m",
        "codegen.cli",
        "--cache",
        str(workdir / "cache"),
        "generate",
        "--quiet",
        "--jobs",
        str(jobs),
        "--out",
        str(ours_out),
    ]
    started = time.perf_counter()
    subprocess.run([*command, "--no-cache"], check=True, cwd=ROOT)
    cold = time.perf_counter() - started
    subprocess.run(command, check=True, cwd=ROOT)  # fills the cache entries for this output folder
    started = time.perf_counter()
    subprocess.run(command, check=True, cwd=ROOT)
    unchanged = time.perf_counter() - started
    return {"plain": plain, "cold": cold, "unchanged": unchanged, "schemas": len(schemas)}


PRELOADS = {
    "models only": (
        "import pydantic, typing_extensions\nfrom pydantic import BaseModel, Field, RootModel, TypeAdapter\n"
    ),
    "whole process": "",
}
"""What each import measurement loads before the clock starts: pydantic itself, or nothing."""


def _import_once(path: Path, module: str, preload: str) -> float:
    code = (
        "import sys, time\n"
        f"{preload}"
        f"sys.path.insert(0, {str(path)!r})\n"
        "t = time.perf_counter()\n"
        f"import {module}\n"
        "print(time.perf_counter() - t)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(result.stdout)


def import_seconds(sides: list[tuple[Path, str]], preload: str, repeat: int) -> list[float]:
    """Median cold-import time of each side; the sides take turns so that load hits both alike."""
    for path, module in sides:  # write the bytecode caches first
        _import_once(path, module, preload)
    runs: list[list[float]] = [[] for _ in sides]
    for _ in range(repeat):
        for index, (path, module) in enumerate(sides):
            runs[index].append(_import_once(path, module, preload))
    return [statistics.median(r) for r in runs]


def load_module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def validation_seconds(models: list[Any], messages: list[str], number: int, repeat: int = 7) -> list[float]:
    """Best time per message of each model; the models take turns so that load hits both alike."""

    def runner(model: Any) -> Any:
        def run() -> None:
            for message in messages:
                model.model_validate_json(message)

        return run

    runs = [runner(model) for model in models]
    for run in runs:
        run()
    best = [float("inf")] * len(runs)
    for _ in range(repeat):
        for index, run in enumerate(runs):
            best[index] = min(best[index], timeit.timeit(run, number=number))
    return [b / (number * len(messages)) for b in best]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    newest_v2 = [r for r in read_lock().releases if r.startswith("2.")][-1]
    parser.add_argument(
        "--release", default=newest_v2, help="release whose stable models are measured (%(default)s)"
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeat", type=int, default=11, help="import measurements per side")
    parser.add_argument("--skip-generation", action="store_true")
    args = parser.parse_args()

    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        if not args.skip_generation:
            gen = time_generation(workdir, args.jobs)
            print(f"\ngeneration of {gen['schemas']:.0f} schemas, {args.jobs} workers:")
            print(f"  plain datamodel-codegen     {gen['plain']:7.2f} s")
            ratio = gen["cold"] / gen["plain"]
            print(f"  acp-codegen, cold           {gen['cold']:7.2f} s   ratio {ratio:.2f}x")
            per_schema = gen["cold"] / gen["schemas"]
            print(f"  acp-codegen, cold, per schema{per_schema:6.2f} s   (target <= 2 s)")
            print(f"  acp-codegen, nothing changed{gen['unchanged']:7.2f} s   (target <= 1 s)")
            ours_root = workdir / "ours"
        else:
            ours_root = ROOT / "generated"
        files = SchemaSource(read_lock()).load(args.release)
        plain_path = workdir / "plain_single"
        plain_path.mkdir()
        plain_codegen(files.schema(False).path, plain_path / "plain_models.py")
        package = naming.package_name(args.release, False)

        sides = [(ours_root, f"{package}.schema"), (plain_path, "plain_models")]
        print(f"\ncold import of the {args.release} stable models", end=" ")
        print(f"(median of {args.repeat}, in fresh processes):")
        for label, preload in PRELOADS.items():
            ours_import, plain_import = import_seconds(sides, preload, args.repeat)
            ratio = ours_import / plain_import
            print(f"  {label}:")
            print(f"    plain datamodel-codegen   {plain_import * 1000:7.1f} ms")
            print(f"    acp-codegen               {ours_import * 1000:7.1f} ms   ratio {ratio:.2f}x")

        sys.path.insert(0, str(ours_root))
        ours = importlib.import_module(f"{package}.schema")
        plain = load_module(plain_path / "plain_models.py", "plain_models")
        messages = [json.dumps(m) for m in MESSAGES]
        for message in messages:  # both sides accept them all, the unknown tag included
            plain.UpdateSessionNotification.model_validate_json(message)
            ours.UpdateSessionNotification.model_validate_json(message)
        plain_v, ours_v = validation_seconds(
            [plain.UpdateSessionNotification, ours.UpdateSessionNotification], messages, 2000
        )
        print("\nvalidation of a session/update notification", end=" ")
        print(
            "(agent_message_chunk, tool_call_update, idle state_update with stopReason error, unknown tag):"
        )
        print(f"  plain datamodel-codegen     {plain_v * 1e6:7.1f} us per message (member-by-member union)")
        print(f"  acp-codegen                 {ours_v * 1e6:7.1f} us per message (tagged union)")
        print(f"  speed-up                    {plain_v / ours_v:7.1f}x")


if __name__ == "__main__":
    main()

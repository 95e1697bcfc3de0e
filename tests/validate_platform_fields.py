"""Checks the issue-13 fields against schemas/: the C++ serialisation of
host_breakdown, system_load, peaks and cpu_frequency (from
platform_fields_dump), merged into the recorded result fixtures, must
validate; the fixtures as recorded (written before these fields existed) must
still validate; and a peaks object that claims hardware peak must not.
Usage: validate_platform_fields.py DUMP_EXE"""
import json
import pathlib
import subprocess
import sys

import jsonschema

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "data" / "compare_golden" / "results"


def validator(name):
    schema = json.loads((ROOT / "schemas" / name).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


def errors(v, doc):
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in v.iter_errors(doc)]


def main(argv):
    dump = json.loads(subprocess.run([argv[1]], check=True, capture_output=True, text=True).stdout)
    run_v, manifest_v = validator("run_result.schema.json"), validator("manifest.schema.json")
    run = json.loads(sorted(FIXTURES.glob("*/*/runs/*.json"))[0].read_text())
    manifest = json.loads(sorted(FIXTURES.glob("*/*/manifest.json"))[0].read_text())
    failures = []
    for name, v, doc in (("old run", run_v, run), ("old manifest", manifest_v, manifest)):
        failures += [f"{name}: {e}" for e in errors(v, doc)]
    for i, fields in enumerate(dump["runs"]):
        failures += [f"run {i}: {e}" for e in errors(run_v, {**run, **fields})]
    for i, fields in enumerate(dump["manifests"]):
        failures += [f"manifest {i}: {e}" for e in errors(manifest_v, {**manifest, **fields})]
    bad = {**manifest, "peaks": {**dump["manifests"][0]["peaks"], "label": "hardware peak"}}
    if not errors(manifest_v, bad):
        failures.append("a peaks object labelled 'hardware peak' was accepted")
    for f in failures:
        print(f)
    print(f"{len(dump['runs'])} runs, {len(dump['manifests'])} manifests with the new fields, and the old fixtures: "
          f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

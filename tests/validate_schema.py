"""Validates every manifest.json and runs/*.json under a results tree against
schemas/ with a real JSON Schema (draft 2020-12) validator. Test-only."""
import json
import pathlib
import sys

import jsonschema

ROOT = pathlib.Path(__file__).resolve().parent.parent


def load_schema(name):
    schema = json.loads((ROOT / "schemas" / name).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


def main(argv):
    if len(argv) != 2:
        print("usage: validate_schema.py RESULTS_DIR", file=sys.stderr)
        return 2
    tree = pathlib.Path(argv[1])
    manifest_v, run_v = load_schema("manifest.schema.json"), load_schema("run_result.schema.json")
    counts = {"manifest": 0, "run": 0}
    errors = 0
    for path in sorted(tree.rglob("*.json")):
        if path.name == "manifest.json":
            validator, kind = manifest_v, "manifest"
        elif path.parent.name == "runs":
            validator, kind = run_v, "run"
        else:
            continue
        counts[kind] += 1
        doc = json.loads(path.read_text())
        for err in validator.iter_errors(doc):
            errors += 1
            field = "/".join(str(p) for p in err.absolute_path) or "(document)"
            print(f"{path}: {field}: {err.message}")
    print(f"validated {counts['manifest']} manifests and {counts['run']} run results: {errors} errors")
    if counts["manifest"] == 0 or counts["run"] == 0:
        print("nothing to validate", file=sys.stderr)
        return 1
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

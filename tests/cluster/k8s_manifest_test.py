"""ctest `k8s_manifest_test` (label cluster): tools/k8s/nightly-job.yaml.

Two layers:
1. Schema: the `kubernetes_validate` package (PyPI, in tools/requirements.txt;
   it bundles the Kubernetes API's JSON schemas, so it runs offline) validates
   every object strictly (unknown fields are errors) against KUBERNETES_VERSION.
   With --require-validator (how ctest runs it, with the project's venv) a
   missing package is a failure; without it the test says so and goes on
   with layer 2 only (a bare `python3` outside the venv).
2. The fields docs/cluster.md relies on: an Indexed Job whose pods get the
   shard from JOB_COMPLETION_INDEX, SHARD_COUNT equal to completions, one GPU
   per shard pod, --resume, every pod on the one shared ReadWriteMany claim,
   a merge Job that merges and runs tools/nightly.sh, and the component labels
   that `kubectl apply -l` selects by.
Both layers are also run on broken copies of the manifest, which must fail,
so the checks cannot pass vacuously.

Usage: k8s_manifest_test.py [--require-validator] [MANIFEST]
"""
import copy
import pathlib
import sys

import yaml

KUBERNETES_VERSION = "1.33.0"  # backoffLimitPerIndex is GA from 1.33
ROOT = pathlib.Path(__file__).resolve().parents[2]
ARGS = [a for a in sys.argv[1:] if a != "--require-validator"]
REQUIRE_VALIDATOR = "--require-validator" in sys.argv[1:]
MANIFEST = pathlib.Path(ARGS[0]) if ARGS else ROOT / "tools/k8s/nightly-job.yaml"
COMPONENT = "app.kubernetes.io/component"


def schema_errors(docs):
    """Strict schema errors per object; None when no validator is installed."""
    try:
        import kubernetes_validate
    except ImportError:
        return None
    errors = []
    for doc in docs:
        try:
            kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as e:
            errors.append(f"{doc.get('kind')}/{doc.get('metadata', {}).get('name')}: {e.message} at {list(e.path)}")
    return errors


def field_errors(docs):
    errors = []

    def need(cond, what):
        if not cond:
            errors.append(what)

    by_component = {}
    for doc in docs:
        comp = (doc.get("metadata", {}).get("labels") or {}).get(COMPONENT)
        need(comp, f"{doc.get('kind')}/{doc.get('metadata', {}).get('name')}: no {COMPONENT} label")
        by_component.setdefault(comp, []).append(doc)
    claims = [d for d in docs if d.get("kind") == "PersistentVolumeClaim"]
    need(len(claims) == 1, "exactly one PersistentVolumeClaim (the shared results volume)")
    claim = claims[0]["metadata"]["name"] if claims else None
    if claims:
        need("ReadWriteMany" in claims[0]["spec"].get("accessModes", []),
             "the results claim must be ReadWriteMany: shard pods run on different nodes")

    def job(component):
        jobs = [d for d in by_component.get(component, []) if d.get("kind") == "Job"]
        need(len(jobs) == 1, f"exactly one Job labelled {COMPONENT}={component}")
        return jobs[0] if jobs else None

    def pod_checks(j, name):
        pod = j["spec"]["template"]
        need((pod.get("metadata", {}).get("labels") or {}).get(COMPONENT) == j["metadata"]["labels"][COMPONENT],
             f"{name}: pods carry the Job's component label")
        spec = pod["spec"]
        need(spec.get("restartPolicy") == "Never", f"{name}: restartPolicy Never (the Job retries, not the kubelet)")
        vols = {v["name"]: v for v in spec.get("volumes", [])}
        shared = [n for n, v in vols.items() if v.get("persistentVolumeClaim", {}).get("claimName") == claim]
        need(shared, f"{name}: a volume on the claim {claim}")
        containers = spec.get("containers", [])
        need(len(containers) == 1, f"{name}: one container")
        c = containers[0] if containers else {}
        need(any(m["name"] in shared for m in c.get("volumeMounts", [])), f"{name}: the container mounts the claim")
        script = "\n".join(c.get("command", []) + c.get("args", []))
        env = {e["name"]: e.get("value") for e in c.get("env", [])}
        return c, script, env

    shards = job("shards")
    if shards:
        s = shards["spec"]
        need(s.get("completionMode") == "Indexed", "shards: completionMode Indexed")
        n = s.get("completions")
        need(isinstance(n, int) and n >= 1, "shards: completions >= 1 (the shard count)")
        need(s.get("parallelism", 1) <= (n or 0), "shards: parallelism <= completions")
        c, script, env = pod_checks(shards, "shards")
        need(env.get("SHARD_COUNT") == str(n), f"shards: SHARD_COUNT {env.get('SHARD_COUNT')!r} must equal completions {n}")
        need("--shard \"$JOB_COMPLETION_INDEX/$SHARD_COUNT\"" in script, "shards: --shard from JOB_COMPLETION_INDEX/SHARD_COUNT")
        need("--resume" in script, "shards: --resume, so a retried pod keeps finished runs")
        need("shard-$JOB_COMPLETION_INDEX" in script, "shards: each shard writes its own directory")
        need(str((c.get("resources", {}).get("limits") or {}).get("nvidia.com/gpu")) == "1", "shards: one GPU per pod")
    merge = job("merge")
    if merge:
        need(merge["spec"].get("completionMode", "NonIndexed") == "NonIndexed", "merge: not indexed")
        c, script, env = pod_checks(merge, "merge")
        need("torchgauge-collect merge --into" in script, "merge: runs torchgauge-collect merge --into")
        need("tools/nightly.sh --skip-collect" in script, "merge: runs tools/nightly.sh --skip-collect")
        if shards:
            need(env.get("SHARD_COUNT") == str(shards["spec"].get("completions")),
                 "merge: SHARD_COUNT equals the shards' completions")
    return errors


def broken_copies(docs):
    """(description, docs) pairs that each layer must reject."""
    def edit(fn):
        d = copy.deepcopy(docs)
        fn(d)
        return d

    def shards(d):
        return next(x for x in d if (x["metadata"].get("labels") or {}).get(COMPONENT) == "shards")

    def container(d):
        return shards(d)["spec"]["template"]["spec"]["containers"][0]

    fields = [
        ("not indexed", edit(lambda d: shards(d)["spec"].pop("completionMode"))),
        ("completions != SHARD_COUNT", edit(lambda d: shards(d)["spec"].update(completions=5, parallelism=5))),
        ("no GPU", edit(lambda d: container(d).pop("resources"))),
    ]
    schema = [
        ("unknown container field", edit(lambda d: container(d).update(gpus=1))),
        ("completions not an integer", edit(lambda d: shards(d)["spec"].update(completions="twelve"))),
    ]
    return fields, schema


def main():
    docs = [d for d in yaml.safe_load_all(MANIFEST.read_text()) if d]
    failed = False
    errs = schema_errors(docs)
    have_validator = errs is not None
    if errs is None and REQUIRE_VALIDATOR:
        print(f"FAIL: kubernetes_validate is not importable by {sys.executable} (tools/requirements.txt installs it)")
        failed = True
    elif errs is None:
        print("NOTE: kubernetes_validate is not installed: no Kubernetes schema check, field checks only")
    else:
        for e in errs:
            print(f"FAIL schema {MANIFEST}: {e}")
        failed |= bool(errs)
        if not errs:
            print(f"ok: {len(docs)} objects valid against the Kubernetes {KUBERNETES_VERSION} schemas (strict)")
    errs = field_errors(docs)
    for e in errs:
        print(f"FAIL fields {MANIFEST}: {e}")
    failed |= bool(errs)
    if not errs:
        print(f"ok: the fields docs/cluster.md relies on are present in {len(docs)} objects")

    fields, schema = broken_copies(docs)
    for what, broken in fields:
        if not field_errors(broken):
            print(f"FAIL self-check: the field checks accept a manifest with {what}")
            failed = True
    if have_validator:
        for what, broken in schema:
            if not schema_errors(broken):
                print(f"FAIL self-check: the schema check accepts a manifest with {what}")
                failed = True
    print("FAIL" if failed else "PASS")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

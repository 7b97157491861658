#!/usr/bin/python3
"""Checks Kubernetes manifests against the API's schema as the Kubernetes Python client
knows it (Debian's python3-kubernetes, generated from the API's OpenAPI specification):
each object's apiVersion and kind name a model (batch/v1 CronJob: V1CronJob), every field
is one the model has, of the type the model gives it, and the fields the API requires are
there (the models refuse a missing one when built).

    check_kubernetes_manifest.py FILE.yaml...   exit 0 when every object is valid, else 1
    check_kubernetes_manifest.py --self-test    broken manifests are refused

/usr/bin/python3 on purpose: Debian's modules are its, not another interpreter's.
"""
import re
import sys

import yaml
import kubernetes
import kubernetes.client as k8s

SCALARS = {
    "str": (str,),
    "int": (int,),
    "float": (int, float),
    "bool": (bool,),
    "datetime": (str,),
    "date": (str,),
    "object": (object,),
}


def model_class(api_version, kind):
    version = api_version.split("/")[-1]
    return getattr(k8s, version[0].upper() + version[1:] + kind, None)


def check(value, type_name, path, errors):
    if type_name in SCALARS:
        if type_name in ("int", "float") and isinstance(value, bool):
            errors.append(f"{path}: {value!r} is not {type_name}")
        elif not isinstance(value, SCALARS[type_name]):
            errors.append(f"{path}: {value!r} is not {type_name}")
        return
    m = re.fullmatch(r"list\[(.*)\]", type_name)
    if m:
        if not isinstance(value, list):
            errors.append(f"{path}: not a list")
            return
        for i, item in enumerate(value):
            check(item, m.group(1), f"{path}[{i}]", errors)
        return
    m = re.fullmatch(r"dict\(([^,]*), (.*)\)", type_name)
    if m:
        if not isinstance(value, dict):
            errors.append(f"{path}: not a map")
            return
        for k, v in value.items():
            check(v, m.group(2), f"{path}.{k}", errors)
        return
    cls = getattr(k8s, type_name, None)
    if cls is None:
        errors.append(f"{path}: unknown type {type_name}")
        return
    if not isinstance(value, dict):
        errors.append(f"{path}: not an object ({type_name})")
        return
    by_json = {json: attr for attr, json in cls.attribute_map.items()}
    kwargs = {}
    for key, item in value.items():
        attr = by_json.get(key)
        if attr is None:
            errors.append(f"{path}: {type_name} has no field '{key}'")
            continue
        check(item, cls.openapi_types[attr], f"{path}.{key}", errors)
        kwargs[attr] = item
    try:
        cls(**kwargs)  # raises ValueError for a required field missing, or a bad enum value
    except ValueError as e:
        errors.append(f"{path}: {type_name}: {e}")


def check_document(doc, where):
    errors = []
    if not isinstance(doc, dict) or "apiVersion" not in doc or "kind" not in doc:
        return [f"{where}: not a Kubernetes object (apiVersion and kind)"]
    cls = model_class(doc["apiVersion"], doc["kind"])
    if cls is None:
        return [f"{where}: no {doc['kind']} in {doc['apiVersion']}"]
    check(doc, cls.__name__, f"{where}:{doc['kind']}", errors)
    return errors


def check_text(text, where):
    errors = []
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    if not docs:
        errors.append(f"{where}: no object")
    for i, doc in enumerate(docs):
        errors += check_document(doc, f"{where}#{i}")
    return errors


def self_test():
    good = """
apiVersion: batch/v1
kind: CronJob
metadata: {name: x}
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: i}]
"""
    assert check_text(good, "good") == [], check_text(good, "good")
    broken = {
        "an unknown field": good.replace("restartPolicy", "restartPolicyy"),
        "a wrong type": good.replace('"0 2 * * *"', "[1, 2]"),
        "a required field missing": good.replace("name: c, ", ""),
        "a kind the API has not": good.replace("CronJob", "CronJobs"),
        "a required spec missing": good.replace('  schedule: "0 2 * * *"\n', ""),
    }
    for what, text in broken.items():
        errors = check_text(text, what)
        assert errors, f"{what} was not refused"
        print(f"refused, {what}: {errors[0]}")
    print(f"self-test: the good manifest passes, {len(broken)} broken ones are refused")


def main(argv):
    if argv[1:] == ["--self-test"]:
        self_test()
        return 0
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    errors = []
    for path in argv[1:]:
        with open(path) as f:
            errors += check_text(f.read(), path)
    for e in errors:
        print(e, file=sys.stderr)
    if not errors:
        print(f"{len(argv) - 1} manifest(s) valid against the API models of the Kubernetes "
              f"Python client {kubernetes.__version__}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Checks that #include arrows between Stipple's folders point one way (issue #23).

Every source file outside tests/ belongs to the layer of the longest folder prefix in
LAYERS below, and may include headers only of its own layer and of the layers that
LAYERS lists for it. A folder not in LAYERS is an error, so a new folder is placed
deliberately. Prints each forbidden include as FILE:LINE: message and exits 1 if there
is one; exits 0 and prints a summary line otherwise.

    tests/layering/check_layers.py [REPO_ROOT]
    tests/layering/check_layers.py --self-test   # the checker on a small made-up tree
"""
import os
import re
import sys

# The compiler's own folders, bottom up: each may include the ones before it. So the
# lowering never includes codegen (a back end consumes its LoweredFunction), and the IR
# nothing but the common layer.
COMPILER_ORDER = ["support", "ir", "runtime", "language", "image", "bounds", "interp",
                  "schedule", "perforation", "lowering", "codegen"]
COMPILER = ["compiler_core/" + d for d in COMPILER_ORDER]

# layer -> the layers it may include (besides itself). Read from the bottom up:
# the common layer, the compiler, the formats and data, the workers, the search, the
# coordinator, then the programs.
LAYERS = {
    # Hashing, files, host probing: below everything. Only the exception types of
    # compiler_core/ir/error.h (a header alone) are allowed from above; see EXCEPTIONS.
    **{COMPILER[i]: COMPILER[:i] for i in range(len(COMPILER))},
    "compiler_core": COMPILER,  # files directly in compiler_core/
    "proto": COMPILER,
    "datasets": COMPILER,
    "storage": COMPILER,
    # Runs a candidate: never the search or the coordinator above it.
    "workers": COMPILER + ["proto", "storage"],
    "search/reuse": COMPILER,
    "search": COMPILER + ["search/reuse", "proto", "storage", "datasets", "workers"],
    # The cluster's coordinator: uses the search and the workers' interfaces.
    "search/coordinator": COMPILER + ["search", "search/reuse", "proto", "storage", "datasets",
                                      "workers"],
    # Nightly regression tuning: drives the search, locally or through the coordinator.
    "search/nightly": COMPILER + ["search", "search/reuse", "search/coordinator", "proto",
                                  "storage", "datasets", "workers"],
    "client": COMPILER + ["proto", "storage", "datasets", "workers", "search", "search/reuse",
                          "search/coordinator", "search/nightly"],
    "bench": COMPILER + ["proto", "storage", "datasets", "workers", "search", "search/reuse",
                         "search/coordinator", "search/nightly", "client"],
}

# (including layer, included header): single headers allowed across the rule, with why.
EXCEPTIONS = {
    # UserError and InternalError are the project's two failure kinds; the header has no
    # code and includes nothing of Stipple's.
    ("compiler_core/support", "compiler_core/ir/error.h"),
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE_SUFFIXES = (".h", ".hpp", ".cpp", ".cc", ".c")
# .gpu-bundle and .gpu-results: the GPU device check's generated files (tests/gpu).
SKIPPED_TOP = {"tests", "build", ".git", ".gpu-bundle", ".gpu-results"}


def layer_of(path):
    """The layer of a repository-relative path: the longest prefix in LAYERS."""
    best = None
    for layer in LAYERS:
        if path == layer or path.startswith(layer + "/"):
            if best is None or len(layer) > len(best):
                best = layer
    return best


def check(root):
    """The forbidden includes under root, and the number of files checked."""
    errors = []
    checked = 0
    for top in sorted(os.listdir(root)):
        if top in SKIPPED_TOP or top.startswith("build") or not os.path.isdir(
                os.path.join(root, top)):
            continue
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root)
                own = layer_of(path)
                if own is None:
                    errors.append(f"{path}:1: folder not placed in a layer "
                                  f"(add it to LAYERS in {os.path.relpath(__file__, root)})")
                    continue
                checked += 1
                allowed = set(LAYERS[own]) | {own}
                with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        header = m.group(1)
                        target = layer_of(header)
                        if target is None:
                            continue  # a header beside the file, or a system-like path
                        if target in allowed or (own, header) in EXCEPTIONS:
                            continue
                        errors.append(f"{path}:{number}: layer '{own}' may not include "
                                      f"'{header}' (layer '{target}')")
    return errors, checked


def self_test():
    """The checker flags a workers/ file that includes the coordinator, the lowering
    including codegen, a folder outside every layer and an include that reaches up from
    the common layer; and passes a tree whose arrows point down."""
    import tempfile

    def tree(files):
        root = tempfile.mkdtemp(prefix="stipple_layering_")
        for path, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                f.write(text)
        return root

    good = tree({
        "workers/a.cpp": '#include "workers/a.h"\n#include "compiler_core/support/files.h"\n',
        "search/coordinator/b.cpp": '#include "workers/a.h"\n#include "search/genome.h"\n',
        "compiler_core/support/c.cpp": '#include "compiler_core/ir/error.h"\n',
        "tests/workers/t.cpp": '#include "search/coordinator/b.h"\n',  # tests are exempt
    })
    errors, checked = check(good)
    assert errors == [] and checked == 3, (errors, checked)
    bad = tree({
        "workers/a.cpp": '// x\n  #include "search/coordinator/worker_pool.h"\n',
        "compiler_core/support/c.cpp": '#include "compiler_core/ir/ir.h"\n',
        "newfolder/d.cpp": "\n",
    })
    errors, _ = check(bad)
    assert len(errors) == 3, errors
    assert errors[0].startswith("compiler_core/support/c.cpp:1: layer 'compiler_core/support'"), errors
    assert errors[1].startswith("newfolder/d.cpp:1: folder not placed"), errors
    assert errors[2].startswith("workers/a.cpp:2: layer 'workers' may not include "
                                "'search/coordinator/worker_pool.h'"), errors
    print("layering self-test: 4 forbidden includes found in the bad tree, none in the good")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    errors, checked = check(root)
    for e in errors:
        print(e)
    if errors:
        print(f"layering: {len(errors)} forbidden include(s)")
        return 1
    print(f"layering: {checked} files, every include points down")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""gpu_variants.py BUNDLE PIPELINE:TRANSFORM...: experiments on the GPU device check's
CUDA files (bench/README.md, issue #31). Writes BUNDLE/PIPELINE.TRANSFORM.cu, the
pipeline's GPU-schedule file (PIPELINE.gpu.cu, from tests/gpu/prepare_bundle.sh) edited by
hand-made transforms, each a question about the CUDA back end's code that a device run
answers (device_check.sh times every file of a timed pipeline that is not random):

  nowrap      index arithmetic as plain signed int (wrap_add etc. are unsigned, so that
              overflow is defined; nvcc then cannot reason about the indices)
  noguard     the unrolled loops' tail guards removed (wrong where a tile has a tail: only
              for timing sizes that are whole tiles; its check fails at 333x250)
  divplain    div_by_constant (division by an odd integer constant, Markstein's
              correction of the product by the reciprocal) as the plain IEEE division it
              replaces
  nowrap_noguard: both
"""
import os
import sys

if len(sys.argv) < 3 or sys.argv[1] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0 if len(sys.argv) > 1 else 2)
bundle = sys.argv[1]

def nowrap(t):
    for op in ['+', '-', '*']:
        t = t.replace('return static_cast<T>(static_cast<uint32_t>(a) %s static_cast<uint32_t>(b));' % op,
                      'return a %s b;' % op)
    return t

def noguard(t):
    return '\n'.join(l for l in t.split('\n') if not l.rstrip().endswith('break;  // false from here to the loop\'s end'))

def divplain(t):
    # The body of div_by_constant (compiler_core/runtime/div_by_constant.inc) as `x / d`.
    head = 'float div_by_constant(float x, float d, float y) {\n'
    start = t.find(head)
    assert start >= 0, 'no div_by_constant in the file'
    start += len(head)
    return t[:start] + '  return x / d;\n' + t[t.index('\n}\n', start) + 1:]

T = {'nowrap': nowrap, 'noguard': noguard, 'divplain': divplain,
     'nowrap_noguard': lambda t: noguard(nowrap(t))}
for spec in sys.argv[2:]:
    pipeline, name = spec.split(':')
    if name not in T:
        sys.exit("gpu_variants.py: unknown transform %s; the transforms are %s" % (name, ", ".join(T)))
    src = open(os.path.join(bundle, pipeline + '.gpu.cu')).read()
    open(os.path.join(bundle, pipeline + '.' + name + '.cu'), 'w').write(T[name](src))

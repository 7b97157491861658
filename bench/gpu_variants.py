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
  recip       x / 3.0f as x * 0.333333343f (inexact, as Halide's)
  markstein   x / 3.0f as Markstein's correction of x * RN(1/3), exact for every float
              (checked over all 2^32 on a CPU against IEEE division)
  nowrap_markstein, nowrap_noguard: both
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

def recip(t):
    return t.replace(' / 3.0f', ' * 0.333333343f')

DIV3 = '''
__device__ __forceinline__ float stipple_div3(float x) {
  // x / 3 correctly rounded for every float (checked over all 2^32 on a CPU): Markstein's
  // correction of x * RN(1/3); zero and non-finite quotients are already exact.
  const float r = 0.333333343f;
  const float q = x * r;
  if (q == 0.0f || !isfinite(q)) return q;
  return __fmaf_rn(__fmaf_rn(-q, 3.0f, x), r, q);
}
'''
def markstein(t):
    # Replaces each `(X) / 3.0f` by `stipple_div3((X))`, in text order (an inner
    # division's `/ 3.0f` comes before its outer one's).
    while True:
        j = t.find(' / 3.0f')
        if j < 0:
            break
        assert t[j-1] == ')', t[j-40:j+10]
        depth = 0; k = j - 1
        while True:
            if t[k] == ')': depth += 1
            elif t[k] == '(':
                depth -= 1
                if depth == 0: break
            k -= 1
        t = t[:k] + 'stipple_div3(' + t[k:j] + ')' + t[j + len(' / 3.0f'):]
    return t.replace('namespace {\n', 'namespace {\n' + DIV3, 1)

T = {'nowrap': nowrap, 'noguard': noguard, 'recip': recip, 'markstein': markstein,
     'nowrap_markstein': lambda t: markstein(nowrap(t)),
     'nowrap_noguard': lambda t: noguard(nowrap(t))}
for spec in sys.argv[2:]:
    pipeline, name = spec.split(':')
    if name not in T:
        sys.exit("gpu_variants.py: unknown transform %s; the transforms are %s" % (name, ", ".join(T)))
    src = open(os.path.join(bundle, pipeline + '.gpu.cu')).read()
    open(os.path.join(bundle, pipeline + '.' + name + '.cu'), 'w').write(T[name](src))

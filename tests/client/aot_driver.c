/* A user's program for aot_link_test: links a pipeline that `stipple compile` wrote (as
 * the function aot_pipeline, from a pipeline with an f32 input `in` and an f32 output
 * `out`, both (x, y, c)) and runs it on raw floats, using only what the generated header
 * declares. It is plain C so that the header is checked as C, and it is compiled with
 * -Werror by the test.
 *
 *   aot_driver IN.raw W H C OUT.raw OX OY OW OH [--wrong-type] [INDEX=VALUE ...]
 *
 * reads W*H*C floats (x fastest, then y, then c), computes the output box
 * [OX, OX+OW) x [OY, OY+OH) x [0, C), writes it as OW*OH*C floats and prints "rc=N".
 * INDEX=VALUE overrides param INDEX; --wrong-type passes the input as u8 (the function
 * must refuse it). Exit status: 0 when the function returned STIPPLE_OK, 3 when it
 * returned an error code, 4 on a usage or I/O problem. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aot_pipeline.h"

static float* read_floats(const char* path, size_t count) {
  FILE* f = fopen(path, "rb");
  float* data = (float*)malloc(count * sizeof(float));
  if (!f || !data || fread(data, sizeof(float), count, f) != count) {
    fprintf(stderr, "cannot read %zu floats from %s\n", count, path);
    exit(4);
  }
  fclose(f);
  return data;
}

static void describe_3d(stipple_buffer* b, void* host, int32_t type, int64_t min_x, int64_t w,
                        int64_t min_y, int64_t h, int64_t c) {
  memset(b, 0, sizeof *b);
  b->host = host;
  b->type = type;
  b->dimensions = 3;
  b->dim[0].min = min_x;
  b->dim[0].extent = w;
  b->dim[0].stride = 1;
  b->dim[1].min = min_y;
  b->dim[1].extent = h;
  b->dim[1].stride = w;
  b->dim[2].min = 0;
  b->dim[2].extent = c;
  b->dim[2].stride = w * h;
}

int main(int argc, char** argv) {
  stipple_buffer buffers[AOT_PIPELINE_BUFFER_COUNT];
  double params[] = AOT_PIPELINE_PARAM_DEFAULTS;
  long w, h, c, ox, oy, ow, oh;
  int i, wrong_type = 0;
  float *in, *out;
  int32_t rc;
  FILE* f;

  if (argc < 10) {
    fprintf(stderr,
            "usage: aot_driver IN.raw W H C OUT.raw OX OY OW OH [--wrong-type] [I=V ...]\n");
    return 4;
  }
  w = atol(argv[2]);
  h = atol(argv[3]);
  c = atol(argv[4]);
  ox = atol(argv[6]);
  oy = atol(argv[7]);
  ow = atol(argv[8]);
  oh = atol(argv[9]);
  for (i = 10; i < argc; ++i) {
    char* eq = strchr(argv[i], '=');
    long index;
    if (strcmp(argv[i], "--wrong-type") == 0) {
      wrong_type = 1;
      continue;
    }
    index = eq ? atol(argv[i]) : -1;
    if (index < 0 || index >= AOT_PIPELINE_PARAM_COUNT) {
      fprintf(stderr, "bad param override %s\n", argv[i]);
      return 4;
    }
    params[index] = strtod(eq + 1, NULL);
  }

  in = read_floats(argv[1], (size_t)(w * h * c));
  out = (float*)calloc((size_t)(ow * oh * c), sizeof(float));
  if (!out) return 4;
  /* The header's constants say where each buffer goes and what it must be. */
  describe_3d(&buffers[AOT_PIPELINE_BUFFER_IN], in,
              wrong_type ? STIPPLE_TYPE_U8 : AOT_PIPELINE_BUFFER_IN_TYPE, 0, w, 0, h, c);
  describe_3d(&buffers[AOT_PIPELINE_BUFFER_OUT], out, AOT_PIPELINE_BUFFER_OUT_TYPE, ox, ow, oy, oh,
              c);
  if (AOT_PIPELINE_BUFFER_IN_DIMENSIONS != 3 || AOT_PIPELINE_BUFFER_OUT_DIMENSIONS != 3) return 4;

  rc = aot_pipeline(buffers, params);
  printf("rc=%d\n", (int)rc);
  if (rc != STIPPLE_OK) return 3;

  f = fopen(argv[5], "wb");
  if (!f || fwrite(out, sizeof(float), (size_t)(ow * oh * c), f) != (size_t)(ow * oh * c)) {
    fprintf(stderr, "cannot write %s\n", argv[5]);
    return 4;
  }
  fclose(f);
  free(in);
  free(out);
  return 0;
}

/* A program around any pipeline `stipple compile` wrote as the function aot_pipeline:
 * dense buffers of any type and dimensions read from raw files, params from the command
 * line, the output written to a raw file. aarch64_emulated_test.cpp cross-compiles it for
 * AArch64 and runs it under qemu. Plain C, against the generated header alone.
 *
 *   aot_any_driver PARAMS BUFFER...
 *
 * PARAMS is "-" (none) or the values in index order, comma-separated. Each BUFFER is
 * TYPE:E0xE1[x...]:PATH (TYPE a STIPPLE_TYPE_* code, extents x first), inputs first in the
 * header's order, the output last: inputs are read from PATH, the output is written
 * there. Prints "rc=N" (the function's return code). Exit status: 0 when it returned
 * STIPPLE_OK, 3 when it returned an error code, 4 on a usage or I/O problem. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aot_pipeline.h"

static void fail(const char* what, const char* arg) {
  fprintf(stderr, "aot_any_driver: %s: %s\n", what, arg);
  exit(4);
}

static size_t element_size(int type) {
  switch (type) {
    case STIPPLE_TYPE_BOOL:
    case STIPPLE_TYPE_U8:
    case STIPPLE_TYPE_I8: return 1;
    case STIPPLE_TYPE_U16:
    case STIPPLE_TYPE_I16:
    case STIPPLE_TYPE_F16: return 2;
    case STIPPLE_TYPE_I32:
    case STIPPLE_TYPE_U32:
    case STIPPLE_TYPE_F32: return 4;
    case STIPPLE_TYPE_F64: return 8;
    default: return 0;
  }
}

/* Fills `b` from TYPE:E0xE1...:PATH (its memory dense, x fastest); returns its byte count
 * and sets *path. */
static size_t parse_buffer(char* spec, stipple_buffer* b, const char** path) {
  char* type_end = strchr(spec, ':');
  char* extents_end = type_end ? strchr(type_end + 1, ':') : NULL;
  if (!extents_end) fail("a buffer is TYPE:E0xE1...:PATH, not", spec);
  *extents_end = '\0';
  *path = extents_end + 1;
  memset(b, 0, sizeof *b);
  b->type = atoi(spec);
  const size_t size = element_size(b->type);
  if (size == 0) fail("unknown type code in", spec);
  int64_t stride = 1;
  for (char* e = type_end + 1; *e;) {
    if (b->dimensions == STIPPLE_MAX_DIMENSIONS) fail("too many dimensions in", spec);
    char* next;
    const long long extent = strtoll(e, &next, 10);
    if (next == e || extent <= 0 || (*next != 'x' && *next != '\0')) fail("bad extents in", spec);
    b->dim[b->dimensions].extent = extent;
    b->dim[b->dimensions].stride = stride;
    stride *= extent;
    b->dimensions++;
    e = *next ? next + 1 : next;
  }
  b->host = malloc((size_t)stride * size);
  if (!b->host) fail("out of memory for", *path);
  return (size_t)stride * size;
}

int main(int argc, char** argv) {
  if (argc != 2 + AOT_PIPELINE_BUFFER_COUNT) {
    fprintf(stderr, "usage: %s PARAMS BUFFER... (%d buffers)\n", argv[0],
            (int)AOT_PIPELINE_BUFFER_COUNT);
    return 4;
  }
  double params[AOT_PIPELINE_PARAM_COUNT + 1];
  int n_params = 0;
  if (strcmp(argv[1], "-") != 0) {
    for (char* p = argv[1]; *p;) {
      char* next;
      if (n_params == AOT_PIPELINE_PARAM_COUNT) fail("too many params", argv[1]);
      params[n_params++] = strtod(p, &next);
      if (next == p || (*next != ',' && *next != '\0')) fail("bad params", argv[1]);
      p = *next ? next + 1 : next;
    }
  }
  if (n_params != AOT_PIPELINE_PARAM_COUNT) fail("wrong number of params", argv[1]);

  stipple_buffer buffers[AOT_PIPELINE_BUFFER_COUNT];
  const char* paths[AOT_PIPELINE_BUFFER_COUNT];
  size_t bytes[AOT_PIPELINE_BUFFER_COUNT];
  for (int i = 0; i < AOT_PIPELINE_BUFFER_COUNT; ++i) {
    bytes[i] = parse_buffer(argv[2 + i], &buffers[i], &paths[i]);
    if (i == AOT_PIPELINE_BUFFER_COUNT - 1) break; /* the output */
    FILE* f = fopen(paths[i], "rb");
    if (!f || fread(buffers[i].host, 1, bytes[i], f) != bytes[i]) fail("cannot read", paths[i]);
    fclose(f);
  }

  const int32_t rc = aot_pipeline(buffers, params);
  printf("rc=%d\n", (int)rc);
  if (rc != STIPPLE_OK) return 3;
  const int out = AOT_PIPELINE_BUFFER_COUNT - 1;
  FILE* f = fopen(paths[out], "wb");
  if (!f || fwrite(buffers[out].host, 1, bytes[out], f) != bytes[out])
    fail("cannot write", paths[out]);
  fclose(f);
  for (int i = 0; i < AOT_PIPELINE_BUFFER_COUNT; ++i) free(buffers[i].host);
  return 0;
}

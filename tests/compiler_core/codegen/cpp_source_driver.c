/* A user's program for cpp_source_test: calls a pipeline that `stipple compile --emit cpp`
 * wrote (the C function stipple_cpp_test, declared by the header `--emit header` writes,
 * included as pipeline.h) on buffers read from a job file, and writes the buffers the
 * function computed. Plain C against the header only, as a program written for the object
 * file would be: the same program links against the compiled C++ source.
 *
 *   cpp_source_driver JOB OUT
 *
 * JOB (native byte order): int32 buffer count, int32 param count; per buffer int32 type,
 * int32 dimensions, int32 is_output, int32 0, int64 min[8], extent[8], stride[8] (in
 * elements), int64 size in bytes, then for inputs that many bytes; then the params as
 * doubles. OUT gets the outputs' bytes, in order. Prints "rc=N"; exit status 0 when the
 * function returned STIPPLE_OK, 3 when it returned an error code, 4 on a usage or I/O
 * problem. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline.h"

static void read_or_die(void* p, size_t bytes, FILE* f) {
  if (bytes > 0 && fread(p, 1, bytes, f) != bytes) {
    fprintf(stderr, "job file too short\n");
    exit(4);
  }
}

int main(int argc, char** argv) {
  FILE *job, *out;
  int32_t counts[2], header[4], rc;
  int64_t shape[3 * STIPPLE_MAX_DIMENSIONS], size;
  stipple_buffer* buffers;
  int64_t* sizes;
  int32_t* is_output;
  double* params;
  int i, d;

  if (argc != 3) {
    fprintf(stderr, "usage: cpp_source_driver JOB OUT\n");
    return 4;
  }
  job = fopen(argv[1], "rb");
  if (!job) return 4;
  read_or_die(counts, sizeof counts, job);
  buffers = (stipple_buffer*)calloc((size_t)counts[0] + 1, sizeof(stipple_buffer));
  sizes = (int64_t*)calloc((size_t)counts[0] + 1, sizeof(int64_t));
  is_output = (int32_t*)calloc((size_t)counts[0] + 1, sizeof(int32_t));
  params = (double*)calloc((size_t)counts[1] + 1, sizeof(double));
  if (!buffers || !sizes || !is_output || !params) return 4;
  for (i = 0; i < counts[0]; ++i) {
    read_or_die(header, sizeof header, job);
    read_or_die(shape, sizeof shape, job);
    read_or_die(&size, sizeof size, job);
    buffers[i].type = header[0];
    buffers[i].dimensions = header[1];
    is_output[i] = header[2];
    for (d = 0; d < STIPPLE_MAX_DIMENSIONS; ++d) {
      buffers[i].dim[d].min = shape[d];
      buffers[i].dim[d].extent = shape[STIPPLE_MAX_DIMENSIONS + d];
      buffers[i].dim[d].stride = shape[2 * STIPPLE_MAX_DIMENSIONS + d];
    }
    sizes[i] = size;
    buffers[i].host = calloc((size_t)size + 1, 1);
    if (!buffers[i].host) return 4;
    if (!is_output[i]) read_or_die(buffers[i].host, (size_t)size, job);
  }
  read_or_die(params, sizeof(double) * (size_t)counts[1], job);
  fclose(job);

  rc = stipple_cpp_test(buffers, params);
  printf("rc=%d\n", (int)rc);
  if (rc != STIPPLE_OK) return 3;

  out = fopen(argv[2], "wb");
  if (!out) return 4;
  for (i = 0; i < counts[0]; ++i) {
    if (is_output[i] && fwrite(buffers[i].host, 1, (size_t)sizes[i], out) != (size_t)sizes[i]) {
      return 4;
    }
  }
  fclose(out);
  for (i = 0; i < counts[0]; ++i) free(buffers[i].host);
  free(buffers);
  free(sizes);
  free(is_output);
  free(params);
  return 0;
}

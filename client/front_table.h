// A run's front as `stipple tune` and `stipple front` print it: a table for people, CSV
// and JSON for programs, and an SVG plot of time versus error (train and test).
#pragma once

#include <ostream>
#include <string>

#include "storage/database.h"

namespace stipple::cli {

enum class FrontFormat { Table, Csv, Json };

/// Prints run `run_id`'s front: one row per variant (numbered from 0, as `stipple export
/// --variant` takes them), the baseline marked; speedups are against the baseline's time.
void print_front(std::ostream& out, storage::Database& db, int64_t run_id, FrontFormat format);

/// Writes the front as an SVG scatter plot: train and test points, the baseline marked.
void write_front_svg(const std::string& path, storage::Database& db, int64_t run_id);

}  // namespace stipple::cli

// A run's front as `stipple tune` and `stipple front` print it: a table for people, CSV
// and JSON for programs, and an SVG plot of time versus error (train and test).
#pragma once

#include <ostream>
#include <string>

#include "search/tuning_session.h"
#include "storage/database.h"

namespace stipple::cli {

enum class FrontFormat { Table, Csv, Json };

/// What the printers show: the run's row and its front, from the local database or from a
/// coordinator (client/coordinator_client.h).
struct FrontListing {
  storage::RunRecord run;        // id, pipeline_name, strategy, state, target, evaluations
  std::string metric = "error";  // the pipeline's: "dE" or "RMSE"
  std::vector<search::FrontEntry> entries;
};

FrontListing load_front_listing(storage::Database& db, int64_t run_id);
void print_front(std::ostream& out, const FrontListing& front, FrontFormat format);
void write_front_svg(const std::string& path, const FrontListing& front);

/// Prints run `run_id`'s front: one row per variant (numbered from 0, as `stipple export
/// --variant` takes them), the baseline marked; speedups are against the baseline's time.
void print_front(std::ostream& out, storage::Database& db, int64_t run_id, FrontFormat format);

/// Writes the front as an SVG scatter plot: train and test points, the baseline marked.
void write_front_svg(const std::string& path, storage::Database& db, int64_t run_id);

}  // namespace stipple::cli

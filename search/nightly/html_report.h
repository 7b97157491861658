// The nightly history as one static HTML page (issue #29): no server, no script, nothing
// fetched; opened from disk or mailed. Per registration:
//  - each variant's time over the nights (the median of its samples), one line per
//    variant, the change points marked: slower (red triangle up), faster (green triangle
//    down), wrong output or less accurate (red cross); each point's tooltip has the night,
//    its date, the verdict and the ratio with its interval;
//  - its front now against the baseline night's: time versus error, filled against hollow;
//  - the last night's table: verdict, before and after, ratio and interval, p-value, host,
//    versions.
// The plots are SVG written here: a chart library would bring a script the page must then
// load, where a few dozen lines of SVG text draw two kinds of plot.
#pragma once

#include <string>
#include <vector>

#include "storage/database.h"

namespace stipple::search::nightly {

/// The page for `registrations` (their stored nights, oldest first).
std::string html_report(storage::Database& db,
                        const std::vector<storage::NightlyRecord>& registrations);

}  // namespace stipple::search::nightly

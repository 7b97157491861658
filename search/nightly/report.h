// What a nightly run tells people and machines: a short text per night for stdout, and
// JSON with every number behind each verdict (samples, medians, the ratio's confidence
// interval, p-value, effect size, versions, host) and the command that measures again.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "search/nightly/night.h"
#include "storage/database.h"

namespace stipple::search::nightly {

/// One night's lines: a heading with the verdict, a line per variant, the improvements,
/// and for a regression its evidence and `reproduce`.
std::string text_report(const storage::NightlyRecord& registration, const NightOutcome& night,
                        const std::string& reproduce);

/// One night as JSON.
nlohmann::json json_report(const storage::NightlyRecord& registration, const NightOutcome& night,
                           const std::string& reproduce);

}  // namespace stipple::search::nightly

// Where Stipple keeps files it can make again (a worker's compiled code and photos, the
// nightly run's photos rendered at a registered size): $XDG_CACHE_HOME/stipple, else
// ~/.cache/stipple (the XDG base directory default).
#pragma once

#include <string>

namespace stipple::cli {

/// The folder; UserError naming `command` ("worker: neither ... give --cache DIR") when
/// neither variable is set.
std::string default_cache_dir(const std::string& command);

}  // namespace stipple::cli

// `stipple workers --coordinator ADDR`: the workers a coordinator knows: host, target and
// capabilities, busy or idle, when it was last heard from, how many jobs it measured.
#include <cstdio>
#include <iostream>

#include "client/cluster_cli.h"
#include "client/commands.h"

namespace stipple::cli {

CommandRunner add_workers_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("workers", "List the tuning cluster's workers");
  auto opt = std::make_shared<ConnectionArgs>();
  add_connection_options(cmd, *opt);
  return [opt]() {
    client::CoordinatorClient coordinator(client_options(*opt));
    return with_coordinator([&] {
      const proto::ListWorkersResponse status = coordinator.pool_status();
      std::cout << "jobs: " << status.jobs_queued() << " queued, " << status.jobs_leased()
                << " leased, " << status.jobs_completed() << " completed, "
                << status.jobs_redispatched() << " re-dispatched, " << status.duplicate_results()
                << " duplicate results, " << status.shared_results() << " shared between runs\n";
      const auto& workers = status.workers();
      if (workers.empty()) {
        std::cout << "no workers have registered\n";
        return kExitOk;
      }
      char line[512];
      std::snprintf(line, sizeof line, "%-6s %-20s %-6s %5s %9s %9s %-7s %8s %6s  %s\n", "id",
                    "host", "arch", "cores", "L2 KiB", "LLC MiB", "state", "heard", "jobs",
                    "target");
      std::cout << line;
      for (const proto::WorkerStatus& w : workers) {
        const proto::Capabilities& c = w.capabilities();
        const char* state = w.lost() ? "lost" : w.busy() ? "busy" : "idle";
        char heard[32];
        std::snprintf(heard, sizeof heard, "%.1fs", w.seconds_since_heard());
        std::snprintf(line, sizeof line, "%-6s %-20s %-6s %5d %9lld %9.1f %-7s %8s %6lld  %s\n",
                      w.worker_id().c_str(), c.host().c_str(), c.arch().c_str(), c.cores(),
                      static_cast<long long>(c.l2_cache_bytes() >> 10),
                      double(c.last_level_cache_bytes()) / (1 << 20), state, heard,
                      static_cast<long long>(w.jobs_completed()), c.target().c_str());
        std::cout << line;
        if (c.emulated()) {
          std::cout << "       emulated: this " << c.arch()
                    << " CPU is emulated (qemu-user on another architecture, or --emulated); its "
                       "timings are the emulator's, not a real "
                    << c.arch() << " CPU's\n";
        }
        // The build that measures: workers of another build compile the same schedules
        // differently, and the nightly history records it.
        std::cout << "       build: stipple "
                  << (c.stipple_version().empty() ? "(not said: older than 0.1)"
                                                  : c.stipple_version())
                  << (c.code_generator().empty() ? "" : ", " + c.code_generator()) << "\n";
        const proto::Gpu& g = c.gpu();
        if (!g.model().empty()) {
          std::snprintf(line, sizeof line,
                        "       GPU %s, compute capability %s, %d SMs, %.1f GiB, driver %d.%d, "
                        "target %s\n",
                        g.model().c_str(), g.compute_capability().c_str(), g.multiprocessors(),
                        double(g.memory_bytes()) / (1 << 30), g.driver_version() / 1000,
                        (g.driver_version() % 1000) / 10, g.target().c_str());
          std::cout << line;
        } else if (!g.absent().empty()) {
          std::cout << "       no GPU: " << g.absent() << "\n";
        }
      }
      return kExitOk;
    });
  };
}

}  // namespace stipple::cli

// The search space: a genome per pipeline, one gene pair per func (Image Perforation
// §5: "each stage's gene is its approximation method and parameters"; here with the
// fusion choices of Decoupling Algorithms from Schedules §4 beside it), and
// its decoding into a schedule the #3 checker accepts.
//
//   SearchSpace space(pipeline);
//   Genome g = space.random_genome(rng);
//   space.mutate(g, rng);
//   Decoded d = space.decode(g);   // d.text parses and checks; d.genome is g repaired
//
// Decoding legalises: each func's choices are added to a Schedule one at a time,
// consumers first, and each one the checker rejects is dropped (its gene reset to the
// neutral value), so every genome decodes, and what decodes is what the repaired genome
// says. The text is the schedule printer's (schedule_printer.h).
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "compiler_core/ir/pipeline.h"
#include "compiler_core/schedule/approximation.h"
#include "compiler_core/schedule/schedule.h"

namespace stipple::search {

enum class PerforationKind : uint8_t {
  None,
  Grid,        // perforate(grid(sx, sy), reconstruction, on_demand | precomputed)
  Adaptive,    // perforate(adaptive(k, f), reconstruction)
  Importance,  // perforate(importance(f), reconstruction)
  Reduction,   // perforate_reduction(r, grid(stride))
  Channels,    // channels(1): compute the first channel, take the others from the input
  StoreF16,    // store_as(f16): precision lowering (decoded, encoded; not drawn yet)
  // Not a gene yet: f.update(k).perforate_reduction (an update's domain thinned, the
  // bilateral grid's splat); a seed schedule's is not kept by encode.
};

struct PerforationGene {
  PerforationKind kind = PerforationKind::None;
  int spacing_x = 2, spacing_y = 2;  // Grid
  int k = 3;                         // Adaptive: the coarse spacing
  double fraction = 0.5;             // Adaptive, Importance: the share of points computed
  int reduction_var = 0;             // Reduction: which reduction variable of the func
  int reduction_stride = 2;          // Reduction
  ReconstructionKind reconstruction = ReconstructionKind::Linear;
  double sigma = 1.0;     // Gaussian, VaryingGaussian
  bool on_demand = true;  // Grid
  bool operator==(const PerforationGene&) const = default;
};

enum class ComputeChoice : uint8_t { Inline, Root, At };

struct FusionGene {
  ComputeChoice compute = ComputeChoice::Root;
  /// At: the loop of the output's nest to compute in (innermost first, modulo its depth).
  int compute_loop = 0;
  /// At: how many loops further out to store (0: where it is computed); a store level
  /// outside the compute level slides the window (Schedule Synthesis through Reuse Analysis §3).
  int store_outward = 0;
  int tile_x = 0, tile_y = 0;    // tile sizes of the first two dimensions; 0: no tiling
  int vector_width = 0;          // of the innermost x loop; 0: scalar
  bool parallel = false;         // the outermost y loop (yo when tiled)
  bool channels_inside = false;  // with tiling, the third dimension's loop inside the tiles
  /// Stored in the narrowest integer type the checker proves holds every value
  /// (store_as(u16), ...; the space's FuncInfo::narrow_type): exact, fewer bytes to move.
  bool narrow = false;
  bool operator==(const FusionGene&) const = default;
};

struct StageGene {
  std::string func;
  FusionGene fusion;
  PerforationGene perforation;
  bool operator==(const StageGene&) const = default;
};

/// One gene pair per func of the pipeline, in the pipeline's func order.
struct Genome {
  std::vector<StageGene> stages;
  bool operator==(const Genome&) const = default;
  /// A short, stable, printable key (for de-duplication and logs).
  std::string key() const;
};

struct Decoded {
  Genome genome;     // the input with every dropped choice reset
  std::string text;  // print_schedule(schedule): one line per func that has directives
  Schedule schedule;
  int dropped = 0;  // choices the checker rejected
};

struct SearchSpaceOptions {
  /// Probability that a random stage gene carries a perforation.
  double perforation_probability = 0.3;
  /// false: exact schedules only.
  bool allow_perforation = true;
  /// The target's native vector register in bytes (16: SSE and NEON, 32: AVX2, 64:
  /// AVX-512; MachineModel::vector_bytes). Vector widths are drawn in lanes of 32-bit
  /// arithmetic as multiples of it, so a NEON run does not carry an AVX-512 run's widths.
  int vector_bytes = 32;
};

/// The vector widths (lanes) a search draws for a target: none, half a native register,
/// and one, two and four registers of 32-bit lanes ({0, 4, 8, 16, 32} for AVX2, {0, 2, 4,
/// 8, 16} for NEON, {0, 8, 16, 32, 64} for AVX-512).
std::vector<int> vector_width_ladder(int vector_bytes);

class SearchSpace {
 public:
  using Options = SearchSpaceOptions;
  explicit SearchSpace(const Pipeline& p, Options options = {});

  const Pipeline& pipeline() const { return p_; }
  const Options& options() const { return options_; }

  /// Every func computed at root, the output tiled, vectorised and parallel: no
  /// approximation. A sound exact starting point.
  Genome exact_genome() const;
  Genome random_genome(std::mt19937_64& rng) const;
  /// Changes one gene: its method (fusion level, perforation kind) or one parameter.
  void mutate(Genome& g, std::mt19937_64& rng) const;
  /// Two-point crossover over the stage genes.
  std::pair<Genome, Genome> crossover(const Genome& a, const Genome& b, std::mt19937_64& rng) const;
  /// Re-draws one stage's perforation gene (never None when perforation is allowed and
  /// the stage admits one).
  void randomize_perforation(StageGene& s, std::mt19937_64& rng) const;
  void randomize_fusion(StageGene& s, std::mt19937_64& rng) const;

  Decoded decode(const Genome& g) const;
  /// The genome whose decoding is closest to s (levels relative to the output's loops,
  /// tile sizes, vector widths, parallel loops, perforations); choices the genome cannot
  /// express are left out.
  Genome encode(const Schedule& s) const;

 private:
  struct FuncInfo {
    const Func* func = nullptr;
    bool is_output = false;
    bool pure = true;                         // no update definitions
    std::vector<std::string> reduction_vars;  // of the pure definition's reductions
    /// The narrowest integer storage the checker accepts for the func when every
    /// producer that has one is narrowed too (the proofs chain: narrow_types); none for
    /// float funcs and funcs whose values it cannot bound.
    std::optional<Type> narrow_type;
  };
  const Pipeline& p_;
  Options options_;
  std::vector<int> vector_widths_;  // vector_width_ladder(options_.vector_bytes)
  std::vector<FuncInfo> funcs_;     // pipeline order
  std::vector<size_t> consumers_first_;

  void randomize_fusion_gene(const FuncInfo& f, FusionGene& g, std::mt19937_64& rng) const;
  void find_narrow_types();
};

const char* perforation_kind_name(PerforationKind k);

}  // namespace stipple::search

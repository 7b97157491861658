#include "search/reuse/loop_order.h"

#include <algorithm>
#include <set>

namespace stipple::search::reuse {

int LoopOrder::find(const std::string& name) const {
  for (int i = 0; i < size(); ++i) {
    if (loops[i].name == name) return i;
  }
  return -1;
}

std::string LoopOrder::describe() const {
  std::string s;
  for (const OutputLoop& l : loops) s += (s.empty() ? "" : ", ") + l.name;
  return s;
}

int LoopOrder::tile_level() const {
  for (int i = 0; i < size(); ++i) {
    if (loops[i].part == OutputLoop::Part::Outer) return i;
  }
  return size();
}

std::vector<int> LoopOrder::tiled_dims() const {
  std::vector<int> dims;
  for (const OutputLoop& l : loops) {
    if (l.part == OutputLoop::Part::Inner) dims.push_back(l.dim);
  }
  std::sort(dims.begin(), dims.end());
  return dims;
}

int64_t LoopOrder::trip(int i, const std::vector<int64_t>& extents, const Tile& tile) const {
  const OutputLoop& l = loops[i];
  int64_t b = std::max<int64_t>(1, extents[l.dim]);
  if (l.part == OutputLoop::Part::Whole) return b;
  int64_t t = std::max<int64_t>(1, std::min(tile.size[l.dim], b));
  if (l.part == OutputLoop::Part::Inner) return t;
  return (b + t - 1) / t;
}

double LoopOrder::iterations(int level, const std::vector<int64_t>& extents,
                             const Tile& tile) const {
  double n = 1;
  for (int i = level; i < size(); ++i) n *= double(trip(i, extents, tile));
  return n;
}

std::vector<int64_t> LoopOrder::covered(int level, const std::vector<int64_t>& extents,
                                        const Tile& tile) const {
  std::vector<int64_t> e(extents.size(), 1);
  std::vector<int> parts(extents.size(), 0);  // bit 1: inner inside, bit 2: outer inside
  for (int i = 0; i < level && i < size(); ++i) {
    const OutputLoop& l = loops[i];
    if (l.part == OutputLoop::Part::Whole) parts[l.dim] = 3;
    if (l.part == OutputLoop::Part::Inner) parts[l.dim] |= 1;
    if (l.part == OutputLoop::Part::Outer) parts[l.dim] |= 2;
  }
  for (size_t d = 0; d < extents.size(); ++d) {
    int64_t b = std::max<int64_t>(1, extents[d]);
    if (parts[d] == 3)
      e[d] = b;
    else if (parts[d] == 1)
      e[d] = std::max<int64_t>(1, std::min(tile.size[d], b));
    else
      e[d] = 1;  // an outer loop alone inside the level cannot happen in these orders
  }
  return e;
}

std::pair<std::string, std::string> tile_loop_names(const std::vector<std::string>& dims, int d) {
  std::set<std::string> taken(dims.begin(), dims.end());
  for (int k = 0;; ++k) {
    std::string suffix = k == 0 ? "" : std::to_string(k);
    std::string o = dims[d] + "o" + suffix, i = dims[d] + "i" + suffix;
    if (!taken.count(o) && !taken.count(i)) {
      // The other tiled dimension's names must not collide either.
      bool clash = false;
      for (size_t e = 0; e < dims.size() && e < 2; ++e) {
        if (int(e) == d) continue;
        clash |=
            dims[e] + "o" == o || dims[e] + "i" == i || dims[e] + "o" == i || dims[e] + "i" == o;
      }
      if (!clash) return {o, i};
    }
  }
}

namespace {

using Part = OutputLoop::Part;

OutputLoop loop(const std::vector<std::string>& dims, int d, Part part) {
  OutputLoop l;
  l.dim = d;
  l.part = part;
  if (part == Part::Whole) {
    l.name = dims[d];
  } else {
    auto [o, i] = tile_loop_names(dims, d);
    l.name = part == Part::Inner ? i : o;
  }
  return l;
}

}  // namespace

LoopOrder default_order(const std::vector<std::string>& dims) {
  LoopOrder o;
  if (dims.empty()) return o;
  if (dims.size() == 1) {
    o.loops = {loop(dims, 0, Part::Inner), loop(dims, 0, Part::Outer)};
    return o;
  }
  o.loops = {loop(dims, 0, Part::Inner), loop(dims, 1, Part::Inner), loop(dims, 0, Part::Outer),
             loop(dims, 1, Part::Outer)};
  for (size_t d = 2; d < dims.size(); ++d) o.loops.push_back(loop(dims, int(d), Part::Whole));
  return o;
}

std::vector<LoopOrder> candidate_orders(const std::vector<std::string>& dims) {
  std::vector<LoopOrder> out;
  if (dims.size() < 2) {
    out.push_back(default_order(dims));
    return out;
  }
  std::vector<OutputLoop> rest;
  for (size_t d = 2; d < dims.size(); ++d) rest.push_back(loop(dims, int(d), Part::Whole));
  OutputLoop xi = loop(dims, 0, Part::Inner), yi = loop(dims, 1, Part::Inner);
  OutputLoop xo = loop(dims, 0, Part::Outer), yo = loop(dims, 1, Part::Outer);
  int placements = rest.empty() ? 1 : 3;
  for (int outer_y = 1; outer_y >= 0; --outer_y) {
    OutputLoop first = outer_y ? xo : yo, last = outer_y ? yo : xo;
    for (int place = 0; place < placements; ++place) {
      LoopOrder o;
      o.loops.push_back(xi);
      if (place == 0) o.loops.insert(o.loops.end(), rest.begin(), rest.end());
      o.loops.push_back(yi);
      if (place == 1) o.loops.insert(o.loops.end(), rest.begin(), rest.end());
      o.loops.push_back(first);
      if (place == 2) o.loops.insert(o.loops.end(), rest.begin(), rest.end());
      o.loops.push_back(last);
      out.push_back(o);
    }
  }
  return out;
}

}  // namespace stipple::search::reuse

// The Python module `stipple` (pybind11): the embedding library (<stipple/stipple.h>) on
// numpy arrays, without copying them.
//
//   import stipple
//   p = stipple.Pipeline("blur.stp")
//   f = p.compile(db="stipple.db", run=3, variant=0)   # or schedule=..., schedule_file=...
//   out = f(image, sigma=2.0)       # image: H x W x C (interleaved) or H x W
//   r = p.tune(images="photos/", time=60, progress=print)   # a local tuning run
//
// An array's axes map onto the program's dimensions by `layout`: "hwc" (the default, as
// OpenCV, imageio and PIL hand images over: y, x, c) or "chw" (c, y, x); its strides become
// the view's, so a crop or a flipped view (rows reversed) is read in place. The output is
// a new array in the same layout (C-contiguous), or the caller's `out=`. An array of the
// input's element type is read where it is; 8- or 16-bit pixels for a float input are
// converted (a copy) as the command line converts a photo. The GIL is
// released while the pipeline runs, so threads of a Python program run pipelines at once.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <stipple/stipple.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

/// The Python exceptions: stipple.Error, and stipple.BadInput for the caller's mistakes
/// (also a ValueError, what Python code expects of a bad argument).
PyObject* error_type = nullptr;
PyObject* bad_input_type = nullptr;

[[noreturn]] void bad_input(const std::string& message) {
  throw stipple::Error(stipple::Error::Kind::BadInput, message);
}

stipple::ElementType element_type_of(const py::dtype& dt, const std::string& what) {
  // Compiled code reads the machine's byte order ('=' or '<' here; '|' for bytes).
  if (dt.byteorder() == '>') {
    bad_input(what + " is big-endian (dtype " + std::string(py::str(py::object(dt))) +
              "): pass a.astype(a.dtype.newbyteorder('='))");
  }
  switch (dt.kind()) {
    case 'u':
      if (dt.itemsize() == 1) return stipple::ElementType::UInt8;
      if (dt.itemsize() == 2) return stipple::ElementType::UInt16;
      if (dt.itemsize() == 4) return stipple::ElementType::UInt32;
      break;
    case 'i':
      if (dt.itemsize() == 1) return stipple::ElementType::Int8;
      if (dt.itemsize() == 2) return stipple::ElementType::Int16;
      if (dt.itemsize() == 4) return stipple::ElementType::Int32;
      break;
    case 'f':
      if (dt.itemsize() == 2) return stipple::ElementType::Float16;
      if (dt.itemsize() == 4) return stipple::ElementType::Float32;
      if (dt.itemsize() == 8) return stipple::ElementType::Float64;
      break;
    default: break;
  }
  bad_input(what + " has dtype " + std::string(py::str(py::object(dt))) +
            ", which no Stipple type matches (u8, u16, u32, i8, i16, i32, f16, f32, f64)");
}

py::dtype dtype_of(stipple::ElementType t) {
  switch (t) {
    case stipple::ElementType::UInt8: return py::dtype("uint8");
    case stipple::ElementType::UInt16: return py::dtype("uint16");
    case stipple::ElementType::UInt32: return py::dtype("uint32");
    case stipple::ElementType::Int8: return py::dtype("int8");
    case stipple::ElementType::Int16: return py::dtype("int16");
    case stipple::ElementType::Int32: return py::dtype("int32");
    case stipple::ElementType::Float16: return py::dtype("float16");
    case stipple::ElementType::Float32: return py::dtype("float32");
    case stipple::ElementType::Float64: return py::dtype("float64");
  }
  return py::dtype("float32");
}

/// The numpy axis of each program dimension (x, y, c) for an array of `ndim` axes.
std::vector<int> axes_of(const std::string& layout, int ndim, const std::string& what) {
  if (layout != "hwc" && layout != "chw") bad_input("layout '" + layout + "': give 'hwc' or 'chw'");
  if (ndim == 2) return {1, 0};
  if (ndim == 3) return layout == "hwc" ? std::vector<int>{1, 0, 2} : std::vector<int>{2, 1, 0};
  bad_input(what + " has " + std::to_string(ndim) + " axes; an image has 2 (H x W) or 3 (" +
            (layout == "hwc" ? "H x W x C" : "C x H x W") + ")");
}

stipple::BufferView view_of(const py::array& a, const std::string& layout, const std::string& what,
                            bool written) {
  if (written && !a.writeable()) bad_input(what + " is read-only");
  stipple::BufferView v;
  v.type = element_type_of(a.dtype(), what);
  v.data = const_cast<void*>(a.data());
  const auto size = static_cast<py::ssize_t>(a.itemsize());
  for (int axis : axes_of(layout, static_cast<int>(a.ndim()), what)) {
    const py::ssize_t stride = a.strides(axis);
    if (stride % size != 0) {
      bad_input(what + "'s axis " + std::to_string(axis) + " has a stride of " +
                std::to_string(stride) + " bytes, not a whole number of elements (" +
                std::to_string(size) + " bytes): pass np.ascontiguousarray(...)");
    }
    v.dims.push_back({static_cast<int64_t>(a.shape(axis)), static_cast<int64_t>(stride / size)});
  }
  return v;
}

class PyFunction {
 public:
  explicit PyFunction(stipple::Function f) : f_(std::move(f)) {}

  /// f(image | {name: image}, out=None, layout="hwc", **params)
  py::array call(const py::object& images, const std::optional<py::array>& out,
                 const std::string& layout, const py::kwargs& kwargs) const {
    std::map<std::string, double> params;
    for (const auto& [key, value] : kwargs) {
      const std::string name = py::str(key);
      if (py::isinstance<py::bool_>(value)) {
        bad_input("param '" + name + "' is a bool; params are numbers");
      }
      try {
        params[name] = value.cast<double>();
      } catch (const py::cast_error&) {
        bad_input("param '" + name + "' is " + std::string(py::str(py::type::of(value))) +
                  ", not a number");
      }
    }
    // The arrays are held here while the GIL is released: nothing frees their memory.
    std::vector<py::array> held;
    std::map<std::string, stipple::BufferView> inputs;
    auto add = [&](const std::string& name, const py::handle& value) {
      py::array a = py::array::ensure(value);
      if (!a) bad_input("input '" + name + "' is not an array");
      held.push_back(for_input(name, a));
      inputs[name] = view_of(held.back(), layout, "input '" + name + "'", false);
    };
    if (py::isinstance<py::dict>(images)) {
      for (const auto& [key, value] : images.cast<py::dict>()) add(py::str(key), value);
    } else {
      if (inputs_.size() != 1) {
        bad_input("this pipeline has " + std::to_string(inputs_.size()) +
                  " inputs: pass a dict {name: image}");
      }
      add(inputs_[0].name, images);
    }
    py::array result;
    if (out) {
      result = *out;
    } else {
      const std::vector<int64_t> e = f_.output_extents(inputs, params);  // x, y[, c]
      std::vector<py::ssize_t> shape;
      if (e.size() == 2) {
        shape = {e[1], e[0]};
      } else if (e.size() == 3) {
        shape = layout == "hwc" ? std::vector<py::ssize_t>{e[1], e[0], e[2]}
                                : std::vector<py::ssize_t>{e[2], e[1], e[0]};
      } else {
        bad_input("the output has " + std::to_string(e.size()) +
                  " dimensions; the module runs pipelines on images (2 or 3), the C++ library "
                  "on any");
      }
      result = py::array(dtype_of(f_.output_type()), shape);
    }
    const stipple::BufferView output = view_of(result, layout, "the output array", true);
    {
      py::gil_scoped_release unlocked;
      f_.realize(inputs, output, params);
    }
    return result;
  }

  void set_inputs(std::vector<stipple::PipelineInput> inputs) { inputs_ = std::move(inputs); }
  const std::string& schedule() const { return f_.schedule(); }
  std::string output_type() const { return stipple::element_type_name(f_.output_type()); }

 private:
  /// The array itself, or for a float input given 8- or 16-bit pixels (what cv2.imread
  /// and imageio return) a converted copy, scaled to [0, 1] as the command line scales a
  /// photo (v / 255 or v / 65535 in double, then rounded to the input's type).
  py::array for_input(const std::string& name, const py::array& a) const {
    const stipple::PipelineInput* decl = nullptr;
    for (const stipple::PipelineInput& in : inputs_) decl = in.name == name ? &in : decl;
    const bool float_input = decl && (decl->type == stipple::ElementType::Float16 ||
                                      decl->type == stipple::ElementType::Float32 ||
                                      decl->type == stipple::ElementType::Float64);
    const py::dtype dt = a.dtype();
    if (!float_input || dt.kind() != 'u' || (dt.itemsize() != 1 && dt.itemsize() != 2)) return a;
    const double peak = dt.itemsize() == 1 ? 255.0 : 65535.0;
    py::object scaled = a.attr("astype")(py::dtype("float64")).attr("__truediv__")(peak);
    return scaled.attr("astype")(dtype_of(decl->type));
  }

  stipple::Function f_;
  std::vector<stipple::PipelineInput> inputs_;
};

/// Paths as the library takes them, from a str, an os.PathLike or a list of them.
std::vector<std::string> paths_of(const py::object& value, const std::string& what) {
  std::vector<std::string> out;
  if (value.is_none()) return out;
  const py::module_ os = py::module_::import("os");
  auto add = [&](const py::handle& item) {
    py::object path;
    try {
      path = os.attr("fspath")(item);
    } catch (const py::error_already_set&) {
    }
    if (!path || !py::isinstance<py::str>(path)) {
      bad_input(what + " takes paths (str or os.PathLike, or a list of them), not " +
                std::string(py::str(py::type::of(item))));
    }
    out.push_back(path.cast<std::string>());
  };
  if (py::isinstance<py::str>(value) || py::hasattr(value, "__fspath__")) {
    add(value);
  } else if (py::isinstance<py::iterable>(value)) {
    for (const py::handle item : value) add(item);
  } else {
    add(value);  // says what it takes
  }
  return out;
}

std::string number_text(double v) {
  if (std::isnan(v)) return "nan";
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", v);
  return text;
}

/// A path from a str or an os.PathLike.
std::string path_of(const py::handle& value, const std::string& what) {
  std::vector<std::string> paths;
  if (py::isinstance<py::str>(value) || py::hasattr(value, "__fspath__")) {
    paths = paths_of(py::reinterpret_borrow<py::object>(value), what);
  }
  if (paths.size() != 1) {
    bad_input(what + " takes a path (str or os.PathLike), not " +
              std::string(py::str(py::type::of(value))));
  }
  return paths[0];
}

PyFunction compile(const stipple::Pipeline& p, const std::optional<std::string>& schedule,
                   const py::object& schedule_file_arg, const py::object& db_arg,
                   const std::optional<int64_t>& run, const std::optional<int>& variant) {
  std::optional<std::string> schedule_file, db;
  if (!schedule_file_arg.is_none()) schedule_file = path_of(schedule_file_arg, "schedule_file=");
  if (!db_arg.is_none()) db = path_of(db_arg, "db=");
  const int given = (schedule ? 1 : 0) + (schedule_file ? 1 : 0) + (db || run || variant ? 1 : 0);
  if (given > 1) bad_input("give one of schedule=, schedule_file= or db=, run=, variant=");
  if (schedule && schedule->find('\n') == std::string::npos && schedule->ends_with(".sched")) {
    bad_input("schedule= takes a schedule's text, not '" + *schedule +
              "': give a file as schedule_file=");
  }
  if ((db || run || variant) && !(db && run)) {
    bad_input("a front's variant needs db= and run= (and variant=, default 0)");
  }
  std::optional<stipple::Function> f;
  {
    py::gil_scoped_release unlocked;  // compiling takes a while
    if (schedule) {
      f = p.compile(*schedule);
    } else if (schedule_file) {
      f = p.compile_file(*schedule_file);
    } else if (db) {
      f = p.compile(stipple::FrontVariant{*db, *run, variant.value_or(0)});
    } else {
      f = p.compile();
    }
  }
  PyFunction pf(std::move(*f));
  pf.set_inputs(p.inputs());
  return pf;
}

/// The options of Pipeline.tune, by their Python names, read with messages that use them
/// (pybind11's own say only that the arguments did not match).
class TuneKeywords {
 public:
  static constexpr const char* kNames =
      "db, images, test_images, strategy, budget, time, seed, exact, baseline, runs, threads, "
      "deadline, thresholds, population, generations, remeasure, resume, benchmark_lock, "
      "progress";

  explicit TuneKeywords(const py::kwargs& kwargs) {
    for (const auto& [key, value] : kwargs) {
      const std::string name = py::str(key);
      if (value.is_none()) continue;  // None: the default
      read(name, value);
    }
    if (o.budget > 0 && o.time_s > 0) {
      bad_input("give budget= or time=, not both (a run stops at one of them)");
    }
  }

  stipple::TuneOptions o;
  py::object progress = py::none();

 private:
  void read(const std::string& name, const py::handle& v) {
    const std::string what = name + "=";
    if (name == "db") {
      o.database = path_of(v, what);
    } else if (name == "images") {
      o.images = paths_of(py::reinterpret_borrow<py::object>(v), what);
    } else if (name == "test_images") {
      o.test_images = paths_of(py::reinterpret_borrow<py::object>(v), what);
    } else if (name == "strategy") {
      o.strategy = text(v, what);
    } else if (name == "budget") {
      o.budget = integer(v, what, 1, int64_t(1) << 40);
    } else if (name == "time") {
      o.time_s = number(v, what, 1e-3, 1e7);
    } else if (name == "seed") {
      o.seed = static_cast<uint64_t>(integer(v, what, 0, INT64_MAX));
    } else if (name == "exact") {
      o.exact = flag(v, what);
    } else if (name == "baseline") {
      o.baseline = path_of(v, what);
    } else if (name == "runs") {
      o.runs = static_cast<int>(integer(v, what, 1, 1000));
    } else if (name == "threads") {
      o.threads = static_cast<int>(integer(v, what, 1, 1024));
    } else if (name == "deadline") {
      o.deadline_s = number(v, what, 1, 86400);
    } else if (name == "thresholds") {
      // One level or several; each a mean error > 0 (exact is always included).
      std::vector<py::handle> items;
      if (py::isinstance<py::str>(v) || !py::isinstance<py::iterable>(v)) {
        items.push_back(v);
      } else {
        for (const py::handle item : v) items.push_back(item);
      }
      for (const py::handle item : items) o.thresholds.push_back(number(item, what, 1e-12, 1e12));
    } else if (name == "population") {
      o.population = static_cast<int>(integer(v, what, 2, 100000));
    } else if (name == "generations") {
      o.generations = static_cast<int>(integer(v, what, 1, 100000));
    } else if (name == "remeasure") {
      o.remeasure = flag(v, what);
    } else if (name == "resume") {
      o.resume = integer(v, what, 1, INT64_MAX);
    } else if (name == "benchmark_lock") {
      o.benchmark_lock = py::isinstance<py::str>(v) ? text(v, what) : path_of(v, what);
    } else if (name == "progress") {
      if (!PyCallable_Check(v.ptr())) {
        bad_input("progress= takes a function of one argument (a stipple.TuneProgress)");
      }
      progress = py::reinterpret_borrow<py::object>(v);
    } else {
      bad_input("tune() has no option '" + name + "' (its options: " + kNames + ")");
    }
  }

  static std::string type_name(const py::handle& v) { return py::str(py::type::of(v)); }

  static std::string text(const py::handle& v, const std::string& what) {
    if (!py::isinstance<py::str>(v)) bad_input(what + " takes a str, not " + type_name(v));
    return v.cast<std::string>();
  }

  static bool flag(const py::handle& v, const std::string& what) {
    if (!py::isinstance<py::bool_>(v))
      bad_input(what + " takes True or False, not " + type_name(v));
    return v.cast<bool>();
  }

  static int64_t integer(const py::handle& v, const std::string& what, int64_t lo, int64_t hi) {
    // bool is an int in Python, but budget=True is a mistake.
    if (py::isinstance<py::bool_>(v) || !py::isinstance<py::int_>(v)) {
      bad_input(what + " takes an integer, not " + type_name(v));
    }
    const auto n = v.cast<long long>();
    if (n < lo || n > hi) {
      bad_input(what + " must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", not " +
                std::to_string(n));
    }
    return n;
  }

  static double number(const py::handle& v, const std::string& what, double lo, double hi) {
    if (py::isinstance<py::bool_>(v) ||
        !(py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v))) {
      bad_input(what + " takes a number, not " + type_name(v));
    }
    const double x = v.cast<double>();
    if (!(x >= lo && x <= hi)) {
      bad_input(what + " must be a number in " + number_text(lo) + ".." + number_text(hi) +
                ", not " + number_text(x));
    }
    return x;
  }
};

/// Pipeline.tune(**options): a local tuning run (<stipple/tuning.h>). The GIL is released
/// while candidates are measured and taken back for each progress report, where a
/// KeyboardInterrupt (Ctrl-C, noticed by Python on the main thread only) or the callback's
/// own exception stops the run after the batch being measured and is raised from tune().
stipple::TuneResult tune(const stipple::Pipeline& p, const py::args& args,
                         const py::kwargs& kwargs) {
  if (!args.empty()) {
    bad_input(std::string("tune() takes its options by name: ") + TuneKeywords::kNames);
  }
  const TuneKeywords k(kwargs);
  const py::object& progress = k.progress;
  auto report = [&](const stipple::TuneProgress& pr) {
    py::gil_scoped_acquire held;
    bool go_on = true;
    if (!progress.is_none()) {
      const py::object answer = progress(pr);
      if (!answer.is_none()) {  // None (a function without a return): go on
        const int truth = PyObject_IsTrue(answer.ptr());
        if (truth < 0) throw py::error_already_set();  // its __bool__ raised
        go_on = truth != 0;
      }
    }
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    return go_on;
  };
  py::gil_scoped_release unlocked;
  return p.tune(k.o, report);
}

}  // namespace

PYBIND11_MODULE(stipple, m) {
  m.doc() =
      "Stipple pipelines on numpy arrays: load a .stp program, compile it under a schedule or "
      "a tuned variant, call it on images (H x W x C, interleaved, without a copy).";
  static py::exception<stipple::Error> error(m, "Error");
  error_type = error.ptr();
  bad_input_type = PyErr_NewException(
      "stipple.BadInput", py::make_tuple(error, py::handle(PyExc_ValueError)).ptr(), nullptr);
  m.attr("BadInput") = py::handle(bad_input_type);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const stipple::Error& e) {
      PyErr_SetString(e.kind() == stipple::Error::Kind::BadInput ? bad_input_type : error_type,
                      e.what());
    }
  });

  py::class_<PyFunction>(m, "Function", "A pipeline compiled under one schedule for this machine.")
      .def("__call__", &PyFunction::call, py::arg("images"), py::kw_only(),
           py::arg("out") = py::none(), py::arg("layout") = "hwc",
           "Runs the pipeline on `images` (an array, or a dict of them by input name) and "
           "returns the output (a new array, or `out`); params as keyword arguments. "
           "layout: 'hwc' (H x W x C, the default) or 'chw'.")
      .def_property_readonly("schedule", &PyFunction::schedule,
                             "The schedule's text ('' for the default schedule).")
      .def_property_readonly("output_type", &PyFunction::output_type,
                             "The output's element type ('f32', 'u8', ...).");

  py::class_<stipple::Pipeline>(m, "Pipeline", "A .stp program, parsed and checked.")
      .def(py::init([](const py::object& path_arg) {
             const std::string path = path_of(path_arg, "Pipeline(path)");
             if (path.find('\n') != std::string::npos) {
               bad_input(
                   "Pipeline(path) reads a .stp file; for a program's text use "
                   "stipple.Pipeline.from_source(text)");
             }
             return stipple::Pipeline::load(path);
           }),
           py::arg("path"), "Reads and checks a .stp file.")
      .def_static("from_source", &stipple::Pipeline::from_source, py::arg("source"),
                  py::arg("file_name") = "pipeline.stp")
      .def_property_readonly("name", &stipple::Pipeline::name)
      .def_property_readonly(
          "inputs",
          [](const stipple::Pipeline& p) {
            py::list out;
            for (const stipple::PipelineInput& in : p.inputs()) {
              out.append(py::make_tuple(in.name, element_type_name(in.type), in.dimensions));
            }
            return out;
          })
      .def_property_readonly(
          "params",
          [](const stipple::Pipeline& p) {
            py::dict out;
            for (const stipple::PipelineParam& pp : p.params()) {
              const bool integer = pp.type != stipple::ElementType::Float16 &&
                                   pp.type != stipple::ElementType::Float32 &&
                                   pp.type != stipple::ElementType::Float64;
              out[py::str(pp.name)] =
                  integer ? py::object(py::int_(static_cast<int64_t>(pp.default_value)))
                          : py::object(py::float_(pp.default_value));
            }
            return out;
          })
      .def_property_readonly("output_type",
                             [](const stipple::Pipeline& p) {
                               return std::string(element_type_name(p.output_type()));
                             })
      .def("compile", &compile, py::kw_only(), py::arg("schedule") = py::none(),
           py::arg("schedule_file") = py::none(), py::arg("db") = py::none(),
           py::arg("run") = py::none(), py::arg("variant") = py::none(),
           "Compiles the pipeline: under the default schedule, a schedule's text, a schedule "
           "file, or a variant of a tuning run's front (db=, run=, variant=).")
      .def("tune", &tune,
           "tune(*, db='stipple.db', images=None, test_images=None, strategy='portfolio', "
           "budget=None, time=None, seed=1, exact=False, baseline=None, runs=5, threads=None, "
           "deadline=60, thresholds=(1, 2, 5), population=24, generations=200, remeasure=False, "
           "resume=None, benchmark_lock=None, progress=None) -> TuneResult\n\n"
           "Searches schedules and approximations on this machine, as `stipple tune` does, "
           "storing every measurement in db; returns a TuneResult whose front's variants "
           "compile(db=r.db, run=r.run, variant=i) takes. images/test_images: paths (files or "
           "folders; default: the bundled photos). budget= evaluations or time= seconds "
           "(default: 600 evaluations or 150 s). progress: called with a TuneProgress after "
           "each batch; returning False stops the run, as does an exception it raises or "
           "Ctrl-C (on the main thread). resume=RUN continues a stopped run of db.");

  py::class_<stipple::TuneProgress>(m, "TuneProgress",
                                    "A tuning run's progress, passed to tune(progress=...).")
      .def_readonly("evaluations", &stipple::TuneProgress::evaluations)
      .def_readonly("budget", &stipple::TuneProgress::budget)
      .def_readonly("time_budget_s", &stipple::TuneProgress::time_budget_s)
      .def_readonly("failures", &stipple::TuneProgress::failures)
      .def_readonly("elapsed_s", &stipple::TuneProgress::elapsed_s)
      .def_readonly("eta_s", &stipple::TuneProgress::eta_s)
      .def_readonly("baseline_ms", &stipple::TuneProgress::baseline_ms)
      .def_readonly("metric", &stipple::TuneProgress::metric)
      .def_readonly("thresholds", &stipple::TuneProgress::thresholds)
      .def_readonly("speedup_at", &stipple::TuneProgress::speedup_at)
      .def_readonly("phase", &stipple::TuneProgress::phase)
      .def("__repr__", [](const stipple::TuneProgress& p) {
        return "<TuneProgress " + p.phase + " " + std::to_string(p.evaluations) + " evaluations, " +
               number_text(p.elapsed_s) + " s>";
      });

  py::class_<stipple::FrontPoint>(m, "FrontPoint",
                                  "A variant of a run's front, numbered as `stipple front` does.")
      .def_readonly("variant", &stipple::FrontPoint::variant)
      .def_readonly("baseline", &stipple::FrontPoint::baseline)
      .def_readonly("train_ms", &stipple::FrontPoint::train_ms)
      .def_readonly("train_error", &stipple::FrontPoint::train_error)
      .def_readonly("test_ms", &stipple::FrontPoint::test_ms)
      .def_readonly("test_error", &stipple::FrontPoint::test_error)
      .def_readonly("speedup", &stipple::FrontPoint::speedup)
      .def_readonly("beside_front", &stipple::FrontPoint::beside_front,
                    "The baseline shown beside a front that dominates it: not a point of it.")
      .def_readonly("schedule", &stipple::FrontPoint::schedule)
      .def("__repr__", [](const stipple::FrontPoint& f) {
        return "<FrontPoint " + std::to_string(f.variant) + (f.baseline ? " (baseline)" : "") +
               ": " + number_text(f.train_ms) + " ms, error " + number_text(f.train_error) + ", " +
               number_text(f.speedup) + "x>";
      });

  py::class_<stipple::TuneResult>(m, "TuneResult", "What Pipeline.tune returns.")
      .def_readonly("db", &stipple::TuneResult::database)
      .def_readonly("run", &stipple::TuneResult::run)
      .def_readonly("stopped", &stipple::TuneResult::stopped,
                    "The progress callback stopped the run (`stipple tune --resume RUN` "
                    "continues it once this process has ended).")
      .def_readonly("metric", &stipple::TuneResult::metric)
      .def_readonly("front", &stipple::TuneResult::front)
      .def("__repr__", [](const stipple::TuneResult& r) {
        return "<TuneResult run " + std::to_string(r.run) + " of " + r.database + ": " +
               std::to_string(r.front.size()) + " variants" + (r.stopped ? ", stopped" : "") + ">";
      });

  m.def("set_threads", &stipple::set_threads, py::arg("threads"),
        "How many threads pipelines' parallel loops use (default: one per hardware thread).");
  m.def("threads", &stipple::threads);
}

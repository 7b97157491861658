// The embedding library (<stipple/stipple.h>, libstipple.so) through its public API only,
// as a user's program links it: results against references written here, in planar,
// interleaved, padded and bottom-up layouts; params; schedules; calls from several
// threads; and every kind of bad input refused with the command line's message before
// the output is touched.
#include <gtest/gtest.h>
#include <stipple/stipple.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

// A 3x3 box blur of each channel with clamped edges, then scaled by a param.
constexpr const char* kBox = R"(pipeline box
input in : f32[x, y, c]
param gain : f32 = 1.0
func h(x, y, c) = in(x - 1, y, c) + in(x, y, c) + in(x + 1, y, c)
func out(x, y, c) = gain * (h(x, y - 1, c) + h(x, y, c) + h(x, y + 1, c)) / 9.0
output out
)";

// The same arithmetic in the same order, by hand (f32 throughout, as the program).
std::vector<float> box_reference(const std::vector<float>& planar, int64_t w, int64_t h,
                                 int64_t channels, float gain) {
  auto at = [&](int64_t x, int64_t y, int64_t c) {
    x = std::clamp<int64_t>(x, 0, w - 1);
    y = std::clamp<int64_t>(y, 0, h - 1);
    return planar[static_cast<size_t>((c * h + y) * w + x)];
  };
  std::vector<float> out(planar.size());
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        auto row = [&](int64_t yy) { return at(x - 1, yy, c) + at(x, yy, c) + at(x + 1, yy, c); };
        out[static_cast<size_t>((c * h + y) * w + x)] =
            gain * (row(y - 1) + row(y) + row(y + 1)) / 9.0f;
      }
    }
  }
  return out;
}

std::vector<float> random_planar(int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = unit(rng);
  return v;
}

/// A planar image's values copied into an interleaved one with `pad` elements after each row.
std::vector<float> interleave(const std::vector<float>& planar, int64_t w, int64_t h, int64_t c,
                              int64_t pad) {
  std::vector<float> out(static_cast<size_t>((w * c + pad) * h), -7.0f);
  for (int64_t k = 0; k < c; ++k) {
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        out[static_cast<size_t>(y * (w * c + pad) + x * c + k)] =
            planar[static_cast<size_t>((k * h + y) * w + x)];
      }
    }
  }
  return out;
}

constexpr int64_t kW = 53, kH = 29, kC = 3;

class Embedding : public ::testing::Test {
 protected:
  stipple::Pipeline box = stipple::Pipeline::from_source(kBox, "box.stp");
  std::vector<float> in = random_planar(kW * kH * kC, 5);
  std::vector<float> expected = box_reference(in, kW, kH, kC, 1.0f);
};

TEST_F(Embedding, DeclarationsAreThePrograms) {
  EXPECT_EQ(box.name(), "box");
  ASSERT_EQ(box.inputs().size(), 1u);
  EXPECT_EQ(box.inputs()[0].name, "in");
  EXPECT_EQ(box.inputs()[0].type, stipple::ElementType::Float32);
  EXPECT_EQ(box.inputs()[0].dimensions, (std::vector<std::string>{"x", "y", "c"}));
  ASSERT_EQ(box.params().size(), 1u);
  EXPECT_EQ(box.params()[0].name, "gain");
  EXPECT_EQ(box.params()[0].default_value, 1.0);
  EXPECT_EQ(box.output_type(), stipple::ElementType::Float32);
}

TEST_F(Embedding, EveryLayoutComputesTheReference) {
  for (const char* schedule : {"", "out.vectorize(x, 8)\nh.compute_at(out, y).vectorize(x, 8)\n",
                               "out.split(y, yo, yi, 8).vectorize(x, "
                               "16).parallel(yo)\nh.compute_root().vectorize(x, 4)\n"}) {
    SCOPED_TRACE(schedule);
    const stipple::Function f = box.compile(schedule);
    // Planar.
    std::vector<float> out(in.size());
    f.realize(stipple::BufferView::planar(in.data(), kW, kH, kC),
              stipple::BufferView::planar(out.data(), kW, kH, kC));
    EXPECT_EQ(out, expected);
    // Interleaved, rows padded (a crop of a wider image), in and out.
    const std::vector<float> inter = interleave(in, kW, kH, kC, 5);
    std::vector<float> inter_out(inter.size(), -7.0f);
    f.realize(stipple::BufferView::interleaved(inter.data(), kW, kH, kC, kW * kC + 5),
              stipple::BufferView::interleaved(inter_out.data(), kW, kH, kC, kW * kC + 5));
    EXPECT_EQ(inter_out, interleave(expected, kW, kH, kC, 5));  // the padding untouched too
    // Interleaved in, planar out; and rows bottom up (a negative y stride), as BMP holds them.
    std::fill(out.begin(), out.end(), 0.0f);
    f.realize(stipple::BufferView::interleaved(inter.data(), kW, kH, kC, kW * kC + 5),
              stipple::BufferView::planar(out.data(), kW, kH, kC));
    EXPECT_EQ(out, expected);
    std::vector<float> flipped(in.size());
    for (int64_t c = 0; c < kC; ++c) {
      for (int64_t y = 0; y < kH; ++y) {
        std::copy_n(in.begin() + (c * kH + y) * kW, kW,
                    flipped.begin() + (c * kH + (kH - 1 - y)) * kW);
      }
    }
    stipple::BufferView up{flipped.data() + (kH - 1) * kW,
                           stipple::ElementType::Float32,
                           {{kW, 1}, {kH, -kW}, {kC, kW * kH}}};
    std::fill(out.begin(), out.end(), 0.0f);
    f.realize(up, stipple::BufferView::planar(out.data(), kW, kH, kC));
    EXPECT_EQ(out, expected);
  }
}

TEST_F(Embedding, ParamsAndScheduleFiles) {
  const std::string sched = (std::filesystem::temp_directory_path() / "embedding_test.sched");
  std::ofstream(sched) << "out.vectorize(x, 8)\n";
  const stipple::Function f = box.compile_file(sched);
  EXPECT_EQ(f.schedule(), "out.vectorize(x, 8)\n");
  std::vector<float> out(in.size());
  f.realize({{"in", stipple::BufferView::planar(in.data(), kW, kH, kC)}},
            stipple::BufferView::planar(out.data(), kW, kH, kC), {{"gain", 2.5}});
  EXPECT_EQ(out, box_reference(in, kW, kH, kC, 2.5f));
  std::filesystem::remove(sched);
}

TEST_F(Embedding, CallsFromSeveralThreadsAtOnce) {
  const stipple::Function f = box.compile("out.vectorize(x, 8)\n");
  std::vector<std::vector<float>> outs(4, std::vector<float>(in.size()));
  std::vector<std::thread> threads;
  for (auto& out : outs) {
    threads.emplace_back([&] {
      for (int k = 0; k < 20; ++k) {
        f.realize(stipple::BufferView::planar(in.data(), kW, kH, kC),
                  stipple::BufferView::planar(out.data(), kW, kH, kC));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const auto& out : outs) EXPECT_EQ(out, expected);
}

/// The message of the Error `f` throws, checked to be BadInput.
template <typename F>
std::string bad_input(F&& f) {
  try {
    f();
  } catch (const stipple::Error& e) {
    EXPECT_EQ(e.kind(), stipple::Error::Kind::BadInput) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST_F(Embedding, BadProgramsAndSchedulesNameTheirLocation) {
  EXPECT_NE(bad_input([] {
              stipple::Pipeline::from_source("pipeline bad\nfunc out(x, y) = in(x) + * 2\n",
                                             "bad.stp");
            }).find("bad.stp:2:"),
            std::string::npos);
  EXPECT_NE(
      bad_input([&] { box.compile("out.vectorize(q, 8)\n", "mine.sched"); }).find("mine.sched:1:"),
      std::string::npos);
  EXPECT_NE(bad_input([] {
              stipple::Pipeline::load("/nonexistent/blur.stp");
            }).find("/nonexistent/blur.stp"),
            std::string::npos);
  EXPECT_NE(bad_input([&] {
              box.compile(stipple::FrontVariant{"/nonexistent/stipple.db", 1, 0});
            }).find("no database"),
            std::string::npos);
}

TEST_F(Embedding, BadBuffersAreRefusedBeforeTheOutputIsTouched) {
  const stipple::Function f = box.compile();
  std::vector<float> out(in.size(), -3.0f);
  const std::vector<float> untouched = out;
  const auto input = stipple::BufferView::planar(in.data(), kW, kH, kC);
  const auto output = stipple::BufferView::planar(out.data(), kW, kH, kC);
  std::vector<uint8_t> bytes(in.size());
  struct Case {
    std::string expect;
    std::function<void()> call;
  };
  const std::vector<Case> cases = {
      {"element type u8",
       [&] { f.realize(stipple::BufferView::planar(bytes.data(), kW, kH, kC), output); }},
      {"dimensions",
       [&] { f.realize(stipple::BufferView::planar(in.data(), kW, kH * kC), output); }},
      {"the output buffer is 53x28x3 but pipeline 'box' computes 53x29x3",
       [&] { f.realize(input, stipple::BufferView::planar(out.data(), kW, kH - 1, kC)); }},
      {"shares memory with input 'in'",
       [&] { f.realize(input, stipple::BufferView::planar(in.data(), kW, kH, kC)); }},
      {"stride -1 in dimension 0",
       [&] {
         f.realize(stipple::BufferView{in.data() + kW - 1,
                                       stipple::ElementType::Float32,
                                       {{kW, -1}, {kH, kW}, {kC, kW * kH}}},
                   output);
       }},
      {"share memory",
       [&] {
         f.realize(input, stipple::BufferView{out.data(),
                                              stipple::ElementType::Float32,
                                              {{kW, 1}, {kH, 1}, {kC, kW * kH}}});
       }},
      {"no param named 'sigma'",
       [&] {
         f.realize(input, output, {{"sigma", 1.0}});
       }},
      {"has no input named 'im'",
       [&] {
         f.realize({{"im", input}}, output);
       }},
      {"no data",
       [&] {
         f.realize(stipple::BufferView::planar(static_cast<float*>(nullptr), kW, kH, kC), output);
       }},
  };
  for (const Case& c : cases) {
    const std::string message = bad_input(c.call);
    EXPECT_NE(message.find(c.expect), std::string::npos) << message;
    EXPECT_EQ(out, untouched) << c.expect;
  }
}

}  // namespace

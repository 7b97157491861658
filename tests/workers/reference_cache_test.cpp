// The reference-output cache: buffers of every scalar type and of 0 to 3 dimensions (with
// negative mins) read back as written; a file truncated at any length, with any byte
// flipped, missing, of another version, or with a valid checksum but absurd dimensions
// reads as a miss (std::nullopt), never as a crash or a wrong buffer; the cache key is
// deterministic and changes with each of its inputs. A Measurement with a cache folder
// computes each reference once and reads it back after; what it reads is what it
// compares against; a corrupted entry is computed and written again.
#include "workers/reference_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "compiler_core/support/content_hash.h"
#include "workers/measurement.h"

namespace stipple::workers {
namespace {

namespace fs = std::filesystem;

constexpr ScalarType kAllTypes[] = {ScalarType::Bool,  ScalarType::UInt8,   ScalarType::UInt16,
                                    ScalarType::Int32, ScalarType::Float32, ScalarType::Float64};

/// A fresh directory from mkdtemp, removed with its contents at the end of the test.
class ReferenceCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "reference_cache_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

/// Random contents of every bit pattern the type can hold (floats from random bits, so
/// NaNs, infinities and denormals included; Bool 0 or 1).
void fill_random(Buffer& b, std::mt19937_64& rng) {
  auto* bytes = static_cast<unsigned char*>(b.data());
  for (size_t i = 0; i < b.size_in_bytes(); ++i) bytes[i] = static_cast<unsigned char>(rng());
  if (b.type() == ScalarType::Bool) {
    for (size_t i = 0; i < b.size_in_bytes(); ++i) bytes[i] &= 1;
  }
}

Buffer random_buffer(std::mt19937_64& rng, ScalarType type, int dims) {
  std::uniform_int_distribution<int64_t> min_of(-40, 40), extent_of(1, 9);
  std::vector<int64_t> mins, extents;
  for (int d = 0; d < dims; ++d) {
    mins.push_back(min_of(rng));
    extents.push_back(extent_of(rng));
  }
  Buffer b(type, mins, extents);
  fill_random(b, rng);
  return b;
}

void expect_same(const Buffer& a, const Buffer& b) {
  ASSERT_EQ(a.type(), b.type());
  ASSERT_EQ(a.dimensions(), b.dimensions());
  for (int d = 0; d < a.dimensions(); ++d) {
    EXPECT_EQ(a.min(d), b.min(d)) << "dimension " << d;
    EXPECT_EQ(a.extent(d), b.extent(d)) << "dimension " << d;
    EXPECT_EQ(a.dim(d).stride, b.dim(d).stride) << "dimension " << d;
  }
  EXPECT_TRUE(a.same_contents(b));
}

void put_le(std::string& out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

/// A file in the cache's format, built by hand, with a correct checksum: so that only
/// the checks of its header can refuse it.
std::string hand_made_file(uint32_t type_code, const std::vector<std::pair<int64_t, int64_t>>& dims,
                           const std::string& data, const std::string& magic = "STPREF1\n") {
  std::string out = magic;
  put_le(out, type_code, 4);
  put_le(out, dims.size(), 4);
  for (auto [min, extent] : dims) {
    put_le(out, static_cast<uint64_t>(min), 8);
    put_le(out, static_cast<uint64_t>(extent), 8);
  }
  out += data;
  out += sha256_hex(out);
  return out;
}

TEST_F(ReferenceCacheTest, RoundTripsEveryTypeAndShape) {
  std::mt19937_64 rng(20240611);
  int n = 0;
  for (ScalarType type : kAllTypes) {
    for (int dims = 0; dims <= 3; ++dims) {
      for (int trial = 0; trial < 4; ++trial) {
        SCOPED_TRACE(testing::Message() << "type " << static_cast<int>(type) << ", " << dims
                                        << " dims, trial " << trial);
        Buffer b = random_buffer(rng, type, dims);
        const std::string file = path("ref" + std::to_string(n++));
        write_reference(file, b);
        std::optional<Buffer> back = read_reference(file);
        ASSERT_TRUE(back.has_value());
        expect_same(b, *back);
        // Element by element too, through the typed accessor.
        for (int64_t i = 0; i < b.element_count(); ++i) {
          const double x = b.get_flat(i), y = back->get_flat(i);
          EXPECT_TRUE(x == y || (std::isnan(x) && std::isnan(y))) << "element " << i;
        }
      }
    }
  }
  // No temporary files left behind.
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

TEST_F(ReferenceCacheTest, RoundTripsAnImageAndExtremeMins) {
  Buffer image(ScalarType::Float32, {-3, 0, 0}, {64, 48, 3});
  std::mt19937_64 rng(7);
  fill_random(image, rng);
  write_reference(path("image"), image);
  std::optional<Buffer> back = read_reference(path("image"));
  ASSERT_TRUE(back.has_value());
  expect_same(image, *back);

  // Mins near the ends of int64 whose min + extent still fits.
  Buffer far(ScalarType::Int32, {INT64_MIN, INT64_MAX - 2}, {2, 2});
  fill_random(far, rng);
  write_reference(path("far"), far);
  back = read_reference(path("far"));
  ASSERT_TRUE(back.has_value());
  expect_same(far, *back);

  // Zero elements.
  Buffer empty(ScalarType::UInt16, {5, -5}, {0, 7});
  write_reference(path("empty"), empty);
  back = read_reference(path("empty"));
  ASSERT_TRUE(back.has_value());
  expect_same(empty, *back);

  // Overwriting an existing entry replaces it.
  write_reference(path("image"), far);
  back = read_reference(path("image"));
  ASSERT_TRUE(back.has_value());
  expect_same(far, *back);
}

TEST_F(ReferenceCacheTest, RefusesAnUndefinedBuffer) {
  EXPECT_THROW(write_reference(path("undefined"), Buffer()), std::invalid_argument);
  EXPECT_FALSE(fs::exists(path("undefined")));
}

// Property: any strict prefix of a valid file, and a valid file with any one byte changed,
// reads as std::nullopt.
TEST_F(ReferenceCacheTest, TruncatedOrFlippedFilesAreMisses) {
  std::mt19937_64 rng(99);
  int checked = 0;
  for (int round = 0; round < 12; ++round) {
    const ScalarType type = kAllTypes[round % std::size(kAllTypes)];
    Buffer b = random_buffer(rng, type, 1 + round % 3);
    const std::string good = path("good");
    write_reference(good, b);
    const std::string bytes = read_bytes(good);
    ASSERT_TRUE(read_reference(good).has_value());

    const std::string bad = path("bad");
    std::uniform_int_distribution<size_t> length_of(0, bytes.size() - 1);
    std::set<size_t> lengths = {0, 1, 8, 16, bytes.size() - 64, bytes.size() - 1};
    while (lengths.size() < 50) lengths.insert(length_of(rng));
    for (size_t length : lengths) {
      write_bytes(bad, bytes.substr(0, length));
      EXPECT_FALSE(read_reference(bad).has_value()) << "truncated to " << length;
      ++checked;
    }
    for (int flip = 0; flip < 50; ++flip) {
      std::string corrupted = bytes;
      const size_t at = length_of(rng);
      corrupted[at] = static_cast<char>(corrupted[at] ^ (1 + rng() % 255));  // never unchanged
      write_bytes(bad, corrupted);
      EXPECT_FALSE(read_reference(bad).has_value()) << "byte " << at << " changed";
      ++checked;
    }
    // A byte appended is refused too.
    write_bytes(bad, bytes + "x");
    EXPECT_FALSE(read_reference(bad).has_value());
  }
  EXPECT_EQ(checked, 12 * 100);
}

TEST_F(ReferenceCacheTest, MissingFileOrDirectoryIsAMiss) {
  EXPECT_FALSE(read_reference(path("absent")).has_value());
  EXPECT_FALSE(read_reference(path("no/such/dir/file")).has_value());
  EXPECT_FALSE(read_reference(dir_.string()).has_value());  // a directory, not a file
  write_bytes(path("empty"), "");
  EXPECT_FALSE(read_reference(path("empty")).has_value());
}

// Files with a correct checksum whose header is wrong: each is refused before anything is
// allocated from its sizes.
TEST_F(ReferenceCacheTest, ValidChecksumButAbsurdHeaderIsAMiss) {
  const std::string f = path("hand");
  const std::string four_floats(16, '\0');
  // The hand-made writer agrees with write_reference: a well-formed file is accepted.
  write_bytes(f, hand_made_file(4, {{-1, 2}, {3, 2}}, four_floats));
  std::optional<Buffer> ok = read_reference(f);
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->type(), ScalarType::Float32);
  EXPECT_EQ(ok->min(0), -1);
  EXPECT_EQ(ok->extent(1), 2);

  struct Case {
    const char* what;
    std::string file;
  };
  const Case cases[] = {
      {"extents whose product overflows int64",
       hand_made_file(4, {{0, int64_t{1} << 40}, {0, int64_t{1} << 40}}, four_floats)},
      {"product * element size overflows", hand_made_file(5, {{0, int64_t{1} << 61}}, "")},
      {"extents whose product wraps to the data length (0)",
       hand_made_file(1, {{0, int64_t{1} << 32}, {0, int64_t{1} << 32}}, "")},
      {"extent larger than the data", hand_made_file(4, {{0, 1'000'000'000}}, four_floats)},
      {"extent smaller than the data", hand_made_file(4, {{0, 3}}, four_floats)},
      {"negative extent", hand_made_file(4, {{0, -4}}, four_floats)},
      {"negative extents whose product fits", hand_made_file(4, {{0, -2}, {0, -2}}, four_floats)},
      {"min + extent overflows", hand_made_file(4, {{INT64_MAX - 1, 4}}, four_floats)},
      {"unknown type code", hand_made_file(6, {{0, 4}}, four_floats)},
      {"huge type code", hand_made_file(0xffffffff, {{0, 4}}, four_floats)},
      {"too many dimensions", hand_made_file(1, std::vector<std::pair<int64_t, int64_t>>(17, {0, 1}),
                                             std::string(1, '\0'))},
      {"dimension count beyond the file", [&] {
         std::string out = "STPREF1\n";
         put_le(out, 4, 4);
         put_le(out, 3, 4);  // says 3 dimensions, has none
         out += sha256_hex(out);
         return out;
       }()},
      {"another format version", hand_made_file(4, {{0, 4}}, four_floats, "STPREF2\n")},
      {"not a reference file at all", hand_made_file(4, {{0, 4}}, four_floats, "GARBAGE!")},
  };
  for (const Case& c : cases) {
    write_bytes(f, c.file);
    EXPECT_FALSE(read_reference(f).has_value()) << c.what;
  }
}

TEST(ReferenceKey, IsDeterministicHexAndChangesWithEachInput) {
  const std::string source = "func out(x, y) = in(x, y) * gain;";
  const std::map<std::string, double> params = {{"gain", 1.0}, {"sigma", 2.5}};
  const std::string photo = sha256_hex("photo bytes");
  const std::string target = "x86_64-znver4-1a2b3c4d";
  const std::string key = reference_key(source, params, photo, target);

  EXPECT_EQ(key, reference_key(source, params, photo, target));
  ASSERT_EQ(key.size(), 64u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);

  std::set<std::string> keys = {key};
  auto differs = [&](const std::string& what, const std::string& k) {
    EXPECT_TRUE(keys.insert(k).second) << what << " gives a key already seen";
  };
  differs("source", reference_key(source + " ", params, photo, target));
  differs("param value 1 ulp",
          reference_key(source, {{"gain", 1.0000000000000002}, {"sigma", 2.5}}, photo, target));
  differs("param -0.0",
          reference_key(source, {{"gain", 1.0}, {"sigma", 2.5}, {"z", -0.0}}, photo, target));
  differs("param 0.0",
          reference_key(source, {{"gain", 1.0}, {"sigma", 2.5}, {"z", 0.0}}, photo, target));
  differs("param name", reference_key(source, {{"gain", 1.0}, {"sigmb", 2.5}}, photo, target));
  differs("param removed", reference_key(source, {{"gain", 1.0}}, photo, target));
  differs("no params", reference_key(source, {}, photo, target));
  differs("photo", reference_key(source, params, sha256_hex("other photo"), target));
  differs("target", reference_key(source, params, photo, "aarch64-neoverse-n1-5e6f7a8b"));

  // Values swapped between names give another key.
  EXPECT_NE(reference_key(source, {{"a", 1}, {"b", 2}}, photo, target),
            reference_key(source, {{"a", 2}, {"b", 1}}, photo, target));
  // Fields are length-prefixed: moving bytes from one field to the next changes the key.
  EXPECT_NE(reference_key("ab", {}, "c", "d"), reference_key("a", {}, "bc", "d"));
  EXPECT_NE(reference_key("a", {}, "b", "cd"), reference_key("a", {}, "bc", "d"));
  EXPECT_NE(reference_key("", {{"a", 1}}, "", ""), reference_key("", {{"a1", 1}}, "", ""));
}

const char* kScaledBlur = R"(pipeline scaled_blur
param gain : f32 = 1.0
input in : f32[x, y, c]
func bx(x, y, c) = (in(x - 1, y, c) + in(x, y, c) + in(x + 1, y, c)) / 3.0
func out(x, y, c) = gain * (bx(x, y - 1, c) + bx(x, y, c) + bx(x, y + 1, c)) / 3.0
output out
)";

EvaluationSetup scaled_blur_setup(double gain) {
  EvaluationSetup s;
  s.pipeline_source = kScaledBlur;
  s.pipeline_file = "scaled_blur.stp";
  s.params["gain"] = gain;
  s.images["train"] = {
      std::string(STIPPLE_SOURCE_DIR) + "/datasets/fixtures/natural-high-64x48.png",
      std::string(STIPPLE_SOURCE_DIR) + "/datasets/fixtures/man-made-low-64x48.png"};
  s.runs = 1;
  s.threads = 1;
  return s;
}

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(ReferenceCacheTest, AMeasurementComputesEachReferenceOnceThenReadsIt) {
  const std::string cache = path("references");
  const std::string exact = "bx.compute_root()\n";
  EvaluationResult computed;
  {
    Measurement m(scaled_blur_setup(1.0), {}, cache);
    EXPECT_EQ(m.references_read(), 0);
    computed = m.measure(exact, "train");
    ASSERT_TRUE(computed.ok()) << computed.reason;
    EXPECT_EQ(computed.error, 0);
  }
  const std::vector<fs::path> entries = files_in(cache);
  ASSERT_EQ(entries.size(), 2u);  // one per photo, no temporary file left
  {
    Measurement m(scaled_blur_setup(1.0), {}, cache);
    EXPECT_EQ(m.references_read(), 2);
    const EvaluationResult again = m.measure(exact, "train");
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again.error, 0);
    EXPECT_EQ(again.psnr, computed.psnr);
  }
  // Another param value is another reference: two more entries, none read.
  {
    Measurement m(scaled_blur_setup(0.5), {}, cache);
    EXPECT_EQ(m.references_read(), 0);
    EXPECT_EQ(files_in(cache).size(), 4u);
  }
  // What is read is what outputs are compared with: an entry replaced by zeros of the same
  // shape makes the exact schedule's output differ from "its reference" on that photo.
  for (const fs::path& entry : entries) {
    std::optional<Buffer> b = read_reference(entry.string());
    ASSERT_TRUE(b.has_value());
    Buffer zeros(b->type(), {b->extent(0), b->extent(1), b->extent(2)});
    write_reference(entry.string(), zeros);
  }
  {
    Measurement m(scaled_blur_setup(1.0), {}, cache);
    EXPECT_EQ(m.references_read(), 2);
    const EvaluationResult r = m.measure(exact, "train");
    ASSERT_TRUE(r.ok());
    EXPECT_GT(r.error, 0);
  }
  // A corrupted entry is a miss: computed again, written again, and right.
  for (const fs::path& entry : entries) {
    std::string bytes = read_bytes(entry.string());
    bytes[bytes.size() / 2] ^= 0x40;
    write_bytes(entry.string(), bytes);
  }
  {
    Measurement m(scaled_blur_setup(1.0), {}, cache);
    EXPECT_EQ(m.references_read(), 0);
    const EvaluationResult r = m.measure(exact, "train");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.error, 0);
  }
  for (const fs::path& entry : entries) EXPECT_TRUE(read_reference(entry.string()).has_value());
}

}  // namespace
}  // namespace stipple::workers

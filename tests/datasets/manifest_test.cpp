// The category table and manifest parsers, output naming, the train pick, and the
// consistency of the committed categories.tsv and manifest.tsv.
#include "datasets/benchmark/manifest.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "compiler_core/ir/error.h"
#include "compiler_core/support/files.h"
#include "datasets/benchmark/benchmark.h"

namespace stipple::dataset {
namespace {

const std::string kHashA(64, 'a');
const std::string kHashB = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

std::string header() {
  std::string h;
  for (const std::string& c : manifest_columns()) h += (h.empty() ? "" : "\t") + c;
  return h + "\n";
}

std::string row(const std::string& fields) { return fields + "\n"; }

TEST(Categories, ParsesRowsAndSkipsComments) {
  const auto entries = parse_categories(
      "# source\tcategory\tdescription\n"
      "data/baboon.jpg\tnatural\tmandrill face, close-up\n"
      "\n"
      "data/chessboard.png\texcluded\tsynthetic calibration pattern\r\n",
      "categories.tsv");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].source, "data/baboon.jpg");
  EXPECT_EQ(entries[0].category, "natural");
  EXPECT_EQ(entries[0].description, "mandrill face, close-up");
  EXPECT_EQ(entries[0].line, 2);
  EXPECT_EQ(entries[1].category, "excluded");
  EXPECT_EQ(entries[1].description, "synthetic calibration pattern");
}

TEST(Categories, RejectsBadLines) {
  EXPECT_THROW(parse_categories("a.jpg\tnatural\n", "c"), UserError);
  EXPECT_THROW(parse_categories("a.jpg\tanimals\tx\n", "c"), UserError);
  EXPECT_THROW(parse_categories("a.jpg\tpeople\tx\na.jpg\tnatural\ty\n", "c"), UserError);
  try {
    parse_categories("a.jpg\tpeople\tx\nb.jpg\tcars\ty\n", "cat.tsv");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("cat.tsv:2: unknown category 'cars'"), std::string::npos)
        << e.what();
  }
}

TEST(Manifest, RoundTrips) {
  Manifest m;
  m.meta["opencv-doc-version"] = "4.6.0+dfsg-12";
  m.meta["generator"] = "test";
  m.notes.push_back("excluded (mid texture 13.000): data/x.jpg (natural)");
  m.rows.push_back({"data/a.jpg", kHashA, "natural", 9.125, "low", "train", "820x614",
                    "820x614/data-a.png", kHashB});
  m.rows.push_back({"data/a.jpg", kHashA, "natural", 9.125, "low", "train", "256x192",
                    "256x192/data-a.png", kHashA});
  m.rows.push_back({"hfs/data/000.jpg", kHashB, "people", 21.5, "high", "test", "256x192",
                    "256x192/hfs-data-000.png", kHashB});
  const std::string text = format_manifest(m);
  const Manifest back = parse_manifest(text, "m.tsv");
  EXPECT_EQ(back.meta, m.meta);
  EXPECT_EQ(back.notes, m.notes);
  ASSERT_EQ(back.rows.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back.rows[i].source, m.rows[i].source);
    EXPECT_EQ(back.rows[i].source_sha256, m.rows[i].source_sha256);
    EXPECT_EQ(back.rows[i].category, m.rows[i].category);
    EXPECT_DOUBLE_EQ(back.rows[i].texture, m.rows[i].texture);
    EXPECT_EQ(back.rows[i].level, m.rows[i].level);
    EXPECT_EQ(back.rows[i].split, m.rows[i].split);
    EXPECT_EQ(back.rows[i].resolution, m.rows[i].resolution);
    EXPECT_EQ(back.rows[i].output, m.rows[i].output);
    EXPECT_EQ(back.rows[i].output_sha256, m.rows[i].output_sha256);
  }
  EXPECT_EQ(format_manifest(back), text);
}

TEST(Manifest, RejectsBadRows) {
  const std::string good =
      "data/a.jpg\t" + kHashA + "\tnatural\t9.5\tlow\ttest\t256x192\t" + "256x192/a.png\t" + kHashB;
  EXPECT_NO_THROW(parse_manifest(header() + row(good), "m"));
  EXPECT_THROW(parse_manifest(row(good), "m"), UserError);  // no header
  EXPECT_THROW(parse_manifest("", "m"), UserError);
  auto with = [&](int field, const std::string& value) {
    std::vector<std::string> f;
    size_t start = 0;
    for (size_t tab; (tab = good.find('\t', start)) != std::string::npos; start = tab + 1)
      f.push_back(good.substr(start, tab - start));
    f.push_back(good.substr(start));
    f[field] = value;
    std::string line;
    for (const auto& s : f) line += (line.empty() ? "" : "\t") + s;
    return header() + row(line);
  };
  EXPECT_THROW(parse_manifest(with(1, "abc"), "m"), UserError);                 // short hash
  EXPECT_THROW(parse_manifest(with(1, std::string(64, 'A')), "m"), UserError);  // upper case
  EXPECT_THROW(parse_manifest(with(2, "animals"), "m"), UserError);
  EXPECT_THROW(parse_manifest(with(3, "x"), "m"), UserError);
  EXPECT_THROW(parse_manifest(with(3, "-1"), "m"), UserError);
  EXPECT_THROW(parse_manifest(with(4, "mid"), "m"), UserError);
  EXPECT_THROW(parse_manifest(with(5, "validation"), "m"), UserError);
  EXPECT_THROW(parse_manifest(with(6, "256by192"), "m"), UserError);
  EXPECT_THROW(parse_manifest(with(7, "/abs.png"), "m"), UserError);
  EXPECT_THROW(parse_manifest(with(7, "../up.png"), "m"), UserError);
  EXPECT_THROW(parse_manifest(header() + row(good) + row(good), "m"), UserError);  // repeat
  EXPECT_THROW(parse_manifest(header() + row(good + "\textra"), "m"), UserError);
}

TEST(Manifest, ResolutionsAndOutputNames) {
  EXPECT_EQ(parse_resolution("820x614"), (std::pair{820, 614}));
  EXPECT_THROW(parse_resolution("820x"), UserError);
  EXPECT_THROW(parse_resolution("0x5"), UserError);
  EXPECT_THROW(parse_resolution("82ox614"), UserError);
  EXPECT_EQ(output_name("data/baboon.jpg", "820x614"), "820x614/data-baboon.png");
  EXPECT_EQ(output_name("hfs/data/000.jpg", "256x192"), "256x192/hfs-data-000.png");
  // Same stem in two folders stays distinct.
  EXPECT_NE(output_name("data/butterfly.jpg", "256x192"),
            output_name("dnn_superres/butterfly.png", "256x192"));
}

TEST(TrainingPick, ClosestToTheMedian) {
  EXPECT_EQ(pick_training_image({}), -1);
  EXPECT_EQ(pick_training_image({{"a", "natural", 3.0}}), 0);
  // Odd count: the median itself.
  EXPECT_EQ(pick_training_image({{"a", "n", 1.0}, {"b", "n", 9.0}, {"c", "n", 4.0}}), 2);
  // Even count: median 5.5 (of 4 and 7); 7 is 1.5 away, 4 is 1.5 away: tie -> "b" < "d".
  EXPECT_EQ(
      pick_training_image({{"d", "n", 4.0}, {"b", "n", 7.0}, {"a", "n", 1.0}, {"c", "n", 11.0}}),
      1);
}

// The committed tables must agree with each other and with the rules of §6.
TEST(CommittedManifest, IsConsistent) {
  const std::string dir = std::string(STIPPLE_SOURCE_DIR) + "/datasets/benchmark/";
  const Manifest m = parse_manifest(read_text_file(dir + "manifest.tsv"), "manifest.tsv");
  const auto categories =
      parse_categories(read_text_file(dir + "categories.tsv"), "categories.tsv");
  std::map<std::string, std::string> category_of;
  for (const auto& e : categories) category_of[e.source] = e.category;

  EXPECT_FALSE(m.meta.at("opencv-doc-version").empty());
  ASSERT_FALSE(m.rows.empty());
  std::map<std::string, std::set<std::string>> resolutions;
  std::map<std::string, std::set<std::string>> train_per_cell;
  for (const ManifestRow& r : m.rows) {
    ASSERT_TRUE(category_of.count(r.source)) << r.source << " is not in categories.tsv";
    EXPECT_EQ(category_of[r.source], r.category) << r.source;
    EXPECT_EQ(to_string(classify_texture(r.texture)), r.level) << r.source;
    EXPECT_EQ(r.output, output_name(r.source, r.resolution));
    resolutions[r.source].insert(r.resolution);
    if (r.split == "train") train_per_cell[r.category + "/" + r.level].insert(r.source);
  }
  for (const auto& [source, res] : resolutions) {
    EXPECT_EQ(res, (std::set<std::string>{"820x614", "256x192"})) << source;
  }
  for (const auto& [cell, sources] : train_per_cell) {
    EXPECT_EQ(sources.size(), 1u) << cell << " has more than one training photo";
  }
}

}  // namespace
}  // namespace stipple::dataset

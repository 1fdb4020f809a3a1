// Tests of memory/encoder/sentence_model.h: a model directory, text in,
// vectors out -- against the references end to end (reference_tokenizer.py
// for the ids, tiny_bert.py's numpy forward pass for the vectors), the
// Hugging Face cache layout, sharing, the length limit and bad directories.
#include "memory/encoder/sentence_model.h"
#include "state/test_util.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

namespace sentence_model_test {

using namespace limbic::memory::encoder;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kDir = LIMBIC_ENCODER_TEST_DIR;

// A scratch dir, as a path.
struct Scratch {
  limbic::testing::ScratchDir dir;
  fs::path path{dir.path()};
};

std::string Run(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  REQUIRE(::pclose(p) == 0);
  return out;
}

void MakeModel(const fs::path& dir, const std::string& args = "") {
  Run("/usr/bin/python3 " + kDir + "/tiny_bert.py make '" + dir.string() + "' " + args);
}

// The reference's vectors for `texts`: its tokenizer, then its forward pass.
std::vector<std::vector<double>> Reference(const fs::path& model, const std::vector<std::string>& texts,
                                           const fs::path& scratch, size_t max_length,
                                           bool lower = true) {
  // Bad UTF-8 goes over as U+FFFD, which the tokenizer drops as it drops the bytes.
  std::ofstream(scratch / "texts.json") << json(texts).dump(-1, ' ', false, json::error_handler_t::replace);
  const std::string ids = Run("/usr/bin/python3 " + kDir + "/reference_tokenizer.py tokenize '" +
                              (model / "vocab.txt").string() + "' --max-length " +
                              std::to_string(max_length) + (lower ? "" : " --no-lower") + " < '" +
                              (scratch / "texts.json").string() + "'");
  std::ofstream(scratch / "ids.json") << ids;
  const std::string vectors = Run("/usr/bin/python3 " + kDir + "/tiny_bert.py encode '" + model.string() +
                                  "' '" + (scratch / "ids.json").string() + "'");
  return json::parse(vectors).get<std::vector<std::vector<double>>>();
}

void RequireClose(const std::vector<std::vector<float>>& got,
                  const std::vector<std::vector<double>>& want) {
  REQUIRE(got.size() == want.size());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    REQUIRE(got[i].size() == want[i].size());
    for (size_t j = 0; j < got[i].size(); ++j)
      worst = std::max(worst, std::abs(static_cast<double>(got[i][j]) - want[i][j]));
  }
  INFO("largest difference " << worst);
  CHECK(worst <= 1e-5);
}

const std::vector<std::string> kTexts = {
    "",
    "hello",
    "The cat sat on the mat.",
    "Héllo, WORLD! Ünïcode accents are stripped.",
    "中国人 and 中 国 mixed with words",
    "running jumped walks talking",
    "a b c d e f g h i j k l m n o p q r s t u v w x y z 0 1 2 3 4 5 6 7 8 9",
    "unknown☃glyphs and\ttabs\nnewlines\x01controls",
    std::string("bad utf-8 \xff\xfe bytes"),
};

}  // namespace

TEST_CASE("a model directory encodes texts as the references do, to 1e-5", "[encoder]") {
  Scratch s;
  const fs::path model = s.path / "model";
  MakeModel(model, "--seed 5");
  auto loaded = SentenceModel::Load({model.string(), "model"});
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  const SentenceModel& m = **loaded;
  CHECK(m.dims() == 32);
  CHECK(m.hash().size() == 64);
  for (size_t batch : {1, 3, 32}) {
    auto got = m.Encode(kTexts, batch);
    REQUIRE(got.ok());
    RequireClose(*got, Reference(model, kTexts, s.path, m.max_length()));
  }
  auto four = m.Encode(kTexts, 4);
  REQUIRE(four.ok());
  for (const auto& v : *four) {
    double norm = 0;
    for (float x : v) norm += static_cast<double>(x) * x;
    CHECK(std::abs(std::sqrt(norm) - 1) < 1e-5);
  }
}

TEST_CASE("CLS pooling, a cased tokenizer and vocab.txt alone are read as configured", "[encoder]") {
  Scratch s;
  const fs::path model = s.path / "model";
  MakeModel(model, "--seed 9 --pooling cls --lowercase false");
  fs::remove(model / "tokenizer.json");  // vocab.txt + tokenizer_config.json
  auto loaded = SentenceModel::Load({model.string(), "model"});
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  CHECK((*loaded)->pooling() == Pooling::kCls);
  auto got = (*loaded)->Encode(kTexts, 8);
  REQUIRE(got.ok());
  RequireClose(*got, Reference(model, kTexts, s.path, (*loaded)->max_length(), false));
}

TEST_CASE("texts past the length limit are cut, and the limit is part of the hash", "[encoder]") {
  Scratch s;
  const fs::path model = s.path / "model";
  MakeModel(model, "--seed 2 --max-position 64");
  auto full = SentenceModel::Load({model.string(), "model"});
  REQUIRE(full.ok());
  CHECK((*full)->max_length() <= 64);
  auto cut = SentenceModel::Load({model.string(), "model"}, 8);
  REQUIRE(cut.ok());
  CHECK((*cut)->max_length() == 8);
  CHECK((*cut)->hash() != (*full)->hash());
  std::string longer;
  for (int i = 0; i < 200; ++i) longer += "the cat ";
  std::vector<std::string> texts = {longer, "the cat the cat the cat"};
  auto got = (*cut)->Encode(texts, 2);
  REQUIRE(got.ok());
  RequireClose(*got, Reference(model, texts, s.path, 8));
  // One model per directory and limit, shared while held.
  auto again = SentenceModel::Load({model.string(), "model"}, 8);
  REQUIRE(again.ok());
  CHECK(again->get() == cut->get());
}

TEST_CASE("a model allowing a million positions still cuts texts at 8192 tokens", "[encoder]") {
  Scratch s;
  const fs::path model = s.path / "model";
  MakeModel(model, "--seed 7 --layers 1 --hidden 8 --heads 1 --intermediate 8 --max-position 1000000");
  fs::remove(model / "sentence_bert_config.json");  // no limit but the config's and the tokenizer's
  std::ofstream(model / "tokenizer_config.json") << "{}";
  auto loaded = SentenceModel::Load({model.string(), "model"});
  REQUIRE(loaded.ok());
  CHECK((*loaded)->max_length() == kMaxSequenceTokens);
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "cat ";
  CHECK((*loaded)->tokenizer().Encode(text).size() == kMaxSequenceTokens);
  auto got = (*loaded)->Encode(std::vector<std::string>{text}, 1);
  REQUIRE(got.ok());
  CHECK(got->at(0).size() == 8);
  // The neighbouring case: a model's own smaller limit is kept.
  auto small = SentenceModel::Load({model.string(), "model"}, 300);
  REQUIRE(small.ok());
  CHECK((*small)->max_length() == 300);
}

TEST_CASE("FindModel reads the Hugging Face cache layout and says where it looked", "[encoder]") {
  Scratch s;
  const fs::path hub = s.path / "hf" / "hub";
  const fs::path repo = hub / "models--sentence-transformers--tiny";
  fs::create_directories(repo / "refs");
  MakeModel(repo / "snapshots" / "aaa111", "--seed 1");
  MakeModel(repo / "snapshots" / "bbb222", "--seed 1");
  std::ofstream(repo / "refs" / "main") << "bbb222\n";
  ::setenv("HF_HUB_CACHE", hub.c_str(), 1);
  auto found = FindModel("sentence-transformers/tiny");
  REQUIRE(found.ok());
  CHECK(found->dir == (repo / "snapshots" / "bbb222").string());
  CHECK(found->name == "sentence-transformers/tiny");
  // A bare name is also sentence-transformers/NAME.
  auto bare = FindModel("tiny");
  REQUIRE(bare.ok());
  CHECK(bare->name == "sentence-transformers/tiny");
  // A directory wins, by its own name.
  auto dir = FindModel((repo / "snapshots" / "aaa111").string());
  REQUIRE(dir.ok());
  CHECK(dir->name == "aaa111");
  // With a trailing "/" or "/.", the same directory and name.
  for (const std::string suffix : {"/", "/.", "/./"}) {
    auto slash = FindModel((repo / "snapshots" / "aaa111").string() + suffix);
    REQUIRE(slash.ok());
    CHECK(slash->dir == (repo / "snapshots" / "aaa111").string());
    CHECK(slash->name == "aaa111");
  }
  // refs/main naming "..", "." or a path is not followed: the newest snapshot instead.
  fs::last_write_time(repo / "snapshots" / "aaa111", fs::file_time_type::clock::now() + std::chrono::hours(1));
  for (const char* ref : {"..", ".", "../snapshots/bbb222", "bbb222/.."}) {
    std::ofstream(repo / "refs" / "main") << ref << "\n";
    auto fallback = FindModel("sentence-transformers/tiny");
    REQUIRE(fallback.ok());
    CHECK(fallback->dir == (repo / "snapshots" / "aaa111").string());
  }
  std::ofstream(repo / "refs" / "main") << "bbb222\n";
  auto missing = FindModel("acme/nothing");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().IsNotFound());
  CHECK_THAT(missing.status().message(),
             Catch::Contains((hub / "models--acme--nothing" / "snapshots").string()));
  ::unsetenv("HF_HUB_CACHE");
}

TEST_CASE("weights holding NaN give an error, never a vector", "[encoder]") {
  Scratch s;
  const fs::path model = s.path / "model";
  MakeModel(model, "--seed 6");
  const fs::path file = model / "model.safetensors";
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  uint64_t n = 0;
  f.read(reinterpret_cast<char*>(&n), 8);
  std::string header(n, '\0');
  f.read(header.data(), static_cast<std::streamsize>(n));
  const uint64_t begin = json::parse(header)["embeddings.LayerNorm.bias"]["data_offsets"][0];
  const float nan = std::nanf("");
  f.seekp(static_cast<std::streamoff>(8 + n + begin));
  f.write(reinterpret_cast<const char*>(&nan), 4);
  f.close();
  auto loaded = SentenceModel::Load({model.string(), "model"});
  REQUIRE(loaded.ok());  // the values are not read until they are used
  auto got = (*loaded)->Encode(std::vector<std::string>{"hello"}, 1);
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().code() == limbic::Status::Code::kCorruption);
  CHECK_THAT(got.status().message(), Catch::Contains(file.string()) && Catch::Contains("NaN"));
}

TEST_CASE("a model directory's bad parts are refused by file and key", "[encoder]") {
  Scratch s;
  const fs::path model = s.path / "model";
  MakeModel(model, "--seed 4");
  auto error = [&] {
    auto loaded = SentenceModel::Load({model.string(), "model"});
    REQUIRE_FALSE(loaded.ok());
    return loaded.status().message();
  };
  auto write = [&](const fs::path& p, const std::string& text) { std::ofstream(p) << text; };
  const std::string modules = (model / "modules.json").string();
  write(modules, R"([{"idx": 0, "path": "", "type": "sentence_transformers.models.Transformer"},
                     {"idx": 1, "path": "2_Dense", "type": "sentence_transformers.models.Dense"}])");
  CHECK_THAT(error(), Catch::Contains(modules) && Catch::Contains("Dense"));
  write(modules, R"([{"idx": 0, "path": "../elsewhere", "type": "sentence_transformers.models.Transformer"}])");
  CHECK_THAT(error(), Catch::Contains("leaves the model directory"));
  write(modules, R"([{"type": "sentence_transformers.models.Transformer"},
                     {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])");
  const std::string pooling = (model / "1_Pooling" / "config.json").string();
  write(pooling, R"({"pooling_mode_max_tokens": true})");
  CHECK_THAT(error(), Catch::Contains(pooling) && Catch::Contains("pooling_mode_max_tokens"));
  write(pooling, R"({"pooling_mode_mean_tokens": true, "pooling_mode_cls_token": true})");
  CHECK_THAT(error(), Catch::Contains("exactly one"));
  write(pooling, R"({"pooling_mode_mean_tokens": true})");
  const std::string st = (model / "sentence_bert_config.json").string();
  write(st, R"({"max_seq_length": -3})");
  CHECK_THAT(error(), Catch::Contains(st) && Catch::Contains("max_seq_length"));
  write(st, R"({"max_seq_length": 32})");
  REQUIRE(SentenceModel::Load({model.string(), "model"}).ok());
  fs::rename(model / "model.safetensors", model / "pytorch_model.bin");
  CHECK_THAT(error(), Catch::Contains("only safetensors is read"));
  fs::rename(model / "pytorch_model.bin", model / "model.safetensors");
  // FIFOs (opening one waits for a writer) and a directory: refused at once, by name.
  const fs::path config = model / "config.json";
  fs::rename(config, model / "config.saved");
  REQUIRE(::mkfifo(config.c_str(), 0600) == 0);
  CHECK_THAT(error(), Catch::Contains(config.string() + ": not a regular file"));
  fs::remove(config);
  fs::rename(model / "config.saved", config);
  fs::rename(pooling, model / "pooling.saved");
  REQUIRE(::mkfifo(pooling.c_str(), 0600) == 0);
  CHECK_THAT(error(), Catch::Contains(pooling + ": not a regular file"));
  fs::remove(pooling);
  fs::rename(model / "pooling.saved", pooling);
  fs::rename(model / "model.safetensors", model / "weights.saved");
  fs::create_directory(model / "model.safetensors");
  CHECK_THAT(error(), Catch::Contains((model / "model.safetensors").string() + ": not a regular file"));
  fs::remove(model / "model.safetensors");
  fs::rename(model / "weights.saved", model / "model.safetensors");
  REQUIRE(SentenceModel::Load({model.string(), "model"}).ok());
  fs::remove(model / "tokenizer.json");
  fs::remove(model / "vocab.txt");
  CHECK_THAT(error(), Catch::Contains("no tokenizer"));
}

}  // namespace sentence_model_test

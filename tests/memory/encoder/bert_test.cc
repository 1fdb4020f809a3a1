// Tests of memory/encoder/bert.h, against the numpy reference of
// tiny_bert.py (run with Debian's /usr/bin/python3 and python3-numpy):
// the script makes a model directory with random weights, and computes the
// vectors in float64 from the files it wrote.
#include "memory/encoder/bert.h"

#include <stdio.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "memory/encoder/bert_kernels.h"
#include "state/test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace bert_test {

using namespace limbic;
using namespace limbic::memory::encoder;
using Batch = std::vector<std::vector<int32_t>>;

namespace {

const std::string kPython = "/usr/bin/python3";
const std::string kScript = std::string(LIMBIC_ENCODER_TEST_DIR) + "/tiny_bert.py";
constexpr int32_t kCls = 2, kSep = 3;  // tiny_bert.py's vocabulary

using TempDir = limbic::testing::ScratchDir;

void MakeModel(const TempDir& dir, const std::string& options = "") {
  std::string cmd = kPython + " " + kScript + " make " + dir.path() + " " + options;
  INFO(cmd);
  REQUIRE(std::system(cmd.c_str()) == 0);
}

// tiny_bert.py's vectors for `batch`.
std::vector<std::vector<double>> Reference(const TempDir& dir, const Batch& batch) {
  std::ofstream(dir / "ids.json") << nlohmann::json(batch).dump();
  std::string cmd = kPython + " " + kScript + " encode " + dir.path() + " " + (dir / "ids.json");
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string text;
  char buf[65536];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) text.append(buf, n);
  INFO(cmd);
  REQUIRE(::pclose(p) == 0);
  return nlohmann::json::parse(text).get<std::vector<std::vector<double>>>();
}

struct Loaded {
  std::shared_ptr<const SafeTensors> file;
  std::unique_ptr<BertModel> model;
};

Loaded Load(const TempDir& dir) {
  auto config = BertConfig::FromJsonFile(dir / "config.json");
  REQUIRE(config.ok());
  auto file = SafeTensors::Open(dir / "model.safetensors");
  REQUIRE(file.ok());
  Loaded l{std::move(*file), nullptr};
  auto model = BertModel::Load(*config, l.file);
  INFO(model.status().ToString());
  REQUIRE(model.ok());
  l.model = std::move(*model);
  return l;
}

// [CLS] random pieces [SEP], one sequence per length.
Batch RandomBatch(const BertModel& model, std::vector<size_t> lengths, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> piece(5, int32_t(model.config().vocab_size) - 1);
  Batch batch;
  for (size_t n : lengths) {
    std::vector<int32_t> ids(n);
    for (auto& id : ids) id = piece(rng);
    ids.front() = kCls;
    if (n > 1) ids.back() = kSep;
    batch.push_back(std::move(ids));
  }
  return batch;
}

// Encode(batch) agrees with the reference within 1e-5 in every component.
void CheckMatches(const TempDir& dir, const BertModel& model, const Batch& batch,
                  Pooling pooling = Pooling::kMean) {
  auto got = model.Encode(batch, pooling);
  REQUIRE(got.ok());
  auto want = Reference(dir, batch);
  REQUIRE(got->size() == batch.size());
  REQUIRE(want.size() == batch.size());
  double worst = 0, worst_norm = 0;
  for (size_t s = 0; s < batch.size(); ++s) {
    REQUIRE((*got)[s].size() == model.dims());
    REQUIRE(want[s].size() == model.dims());
    double norm = 0;
    for (size_t c = 0; c < model.dims(); ++c) {
      worst = std::max(worst, std::fabs((*got)[s][c] - want[s][c]));
      norm += double((*got)[s][c]) * (*got)[s][c];
    }
    worst_norm = std::max(worst_norm, std::fabs(std::sqrt(norm) - 1));
  }
  INFO("largest difference " << worst << ", largest |norm - 1| " << worst_norm);
  CHECK(worst <= 1e-5);
  CHECK(worst_norm <= 1e-5);
}

std::string ErrorOf(const Result<std::vector<std::vector<float>>>& r) {
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().IsInvalidArgument());
  return r.status().message();
}

const char* kConfig = R"({"model_type": "bert", "vocab_size": 100, "hidden_size": 32,
  "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64})";

std::string ConfigError(const nlohmann::json& patch) {
  nlohmann::json c = nlohmann::json::parse(kConfig);
  c.merge_patch(patch);
  auto r = BertConfig::FromJson(c.dump(), "m/config.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().IsInvalidArgument());
  CHECK_THAT(r.status().message(), Catch::StartsWith("m/config.json: "));
  return r.status().message();
}

}  // namespace

TEST_CASE("bert: F32 and mean pooling match the numpy reference") {
  TempDir dir;
  MakeModel(dir, "--seed 7");
  Loaded l = Load(dir);
  CHECK(l.model->dims() == 32);
  // Different lengths in one batch (padding's case), one token, and a
  // sequence of exactly max_position_embeddings (64).
  CheckMatches(dir, *l.model, RandomBatch(*l.model, {5, 17, 1, 9, 64, 2, 33}, 1));
  CheckMatches(dir, *l.model, RandomBatch(*l.model, {12}, 2));
  CheckMatches(dir, *l.model, RandomBatch(*l.model, {64}, 3));
}

TEST_CASE("bert: CLS pooling matches the numpy reference") {
  TempDir dir;
  MakeModel(dir, "--seed 8 --pooling cls");
  Loaded l = Load(dir);
  CheckMatches(dir, *l.model, RandomBatch(*l.model, {7, 30, 3, 64}, 4), Pooling::kCls);
  CheckMatches(dir, *l.model, RandomBatch(*l.model, {10}, 5), Pooling::kCls);
}

TEST_CASE("bert: F16 and BF16 weights match the numpy reference") {
  for (std::string dtype : {"F16", "BF16"}) {
    INFO(dtype);
    TempDir dir;
    MakeModel(dir, "--seed 9 --dtype " + dtype);
    Loaded l = Load(dir);
    CHECK_FALSE(l.file->Mapped("embeddings.word_embeddings.weight"));
    CheckMatches(dir, *l.model, RandomBatch(*l.model, {6, 20, 1}, 6));
  }
}

TEST_CASE("bert: a bert. prefix, gamma and beta, and an I64 position_ids buffer are read") {
  TempDir dir;
  MakeModel(dir, "--seed 10 --prefix bert. --old-norm-names --position-ids");
  Loaded l = Load(dir);
  CHECK(l.file->Has("bert.embeddings.LayerNorm.gamma"));
  CHECK(l.file->tensors().at("bert.embeddings.position_ids").dtype == "I64");
  CheckMatches(dir, *l.model, RandomBatch(*l.model, {8, 3, 15}, 7));
}

TEST_CASE("bert: every activation matches the numpy reference") {
  for (std::string act : {"gelu_new", "gelu_pytorch_tanh", "relu"}) {
    INFO(act);
    TempDir dir;
    MakeModel(dir, "--seed 11 --act " + act);
    Loaded l = Load(dir);
    CHECK(l.model->config().act == act);
    CheckMatches(dir, *l.model, RandomBatch(*l.model, {9, 25, 4}, 8));
  }
}

TEST_CASE("bert: another shape (3 layers, 6 heads of 8) matches the numpy reference") {
  TempDir dir;
  MakeModel(dir, "--seed 12 --layers 3 --hidden 48 --heads 6 --intermediate 96 --max-position 40");
  Loaded l = Load(dir);
  CheckMatches(dir, *l.model, RandomBatch(*l.model, {40, 1, 13}, 9));
}

TEST_CASE("bert: a batch longer than one chunk of tokens matches the reference in order") {
  TempDir dir;
  MakeModel(dir, "--seed 13 --layers 1");
  Loaded l = Load(dir);
  std::vector<size_t> lengths(140, 64);  // 8960 tokens: two chunks
  for (size_t i = 0; i < lengths.size(); i += 3) lengths[i] = 1 + i % 60;
  CheckMatches(dir, *l.model, RandomBatch(*l.model, lengths, 10));
}

TEST_CASE("bert: texts longer than one block of attention rows match the reference") {
  TempDir dir;
  MakeModel(dir, "--seed 15 --layers 1 --max-position 700");
  Loaded l = Load(dir);
  // 256 query rows a block: one block exactly, one and a bit, two and a bit.
  CheckMatches(dir, *l.model, RandomBatch(*l.model, {256, 257, 700, 3}, 12));
}

TEST_CASE("bert: Encode from two threads at once gives the same vectors") {
  TempDir dir;
  MakeModel(dir, "--seed 14");
  Loaded l = Load(dir);
  Batch batch = RandomBatch(*l.model, {11, 40, 2, 64, 7}, 11);
  auto alone = l.model->Encode(batch, Pooling::kMean);
  REQUIRE(alone.ok());
  std::vector<std::vector<float>> a, b;
  std::thread t([&] { a = *l.model->Encode(batch, Pooling::kMean); });
  b = *l.model->Encode(batch, Pooling::kMean);
  t.join();
  CHECK(a == *alone);
  CHECK(b == *alone);
}

TEST_CASE("bert: an empty batch gives no vectors") {
  TempDir dir;
  MakeModel(dir, "--seed 15 --layers 1");
  Loaded l = Load(dir);
  auto r = l.model->Encode({}, Pooling::kMean);
  REQUIRE(r.ok());
  CHECK(r->empty());
}

TEST_CASE("bert: Encode refuses bad sequences, naming them") {
  TempDir dir;
  MakeModel(dir, "--seed 16 --layers 1");
  Loaded l = Load(dir);
  const int32_t vocab = int32_t(l.model->config().vocab_size);
  auto encode = [&](Batch b) { return l.model->Encode(b, Pooling::kMean); };
  CHECK_THAT(ErrorOf(encode({{kCls, kSep}, {kCls, vocab, kSep}})),
             Catch::Contains("sequence 1") && Catch::Contains(std::to_string(vocab)));
  CHECK_THAT(ErrorOf(encode({{kCls, -1}})), Catch::Contains("sequence 0") && Catch::Contains("-1"));
  CHECK_THAT(ErrorOf(encode({{kCls}, {}})), Catch::Contains("sequence 1 is empty"));
  CHECK_THAT(ErrorOf(encode({std::vector<int32_t>(65, kCls)})),
             Catch::Contains("sequence 0") && Catch::Contains("65"));
  CHECK(encode({std::vector<int32_t>(64, kCls)}).ok());
  CHECK(encode({{vocab - 1}}).ok());
}

TEST_CASE("bert: Load refuses a missing tensor or one misshapen for the config") {
  TempDir dir;
  MakeModel(dir, "--seed 17");
  auto config = BertConfig::FromJsonFile(dir / "config.json");
  REQUIRE(config.ok());
  std::shared_ptr<const SafeTensors> file = SafeTensors::Open(dir / "model.safetensors").value();
  BertConfig more = *config;
  more.layers = 3;
  auto r = BertModel::Load(more, file);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().IsInvalidArgument());
  CHECK_THAT(r.status().message(), Catch::Contains(dir / "model.safetensors") &&
                                       Catch::Contains("encoder.layer.2.attention.self.query.weight"));
  BertConfig wider = *config;
  wider.intermediate = 65;
  r = BertModel::Load(wider, file);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == dir / "model.safetensors" +
                                    ": tensor encoder.layer.0.intermediate.dense.weight has shape "
                                    "[64, 32], expected [65, 32]");
}

TEST_CASE("bert: config.json is checked, naming the file and the key") {
  CHECK(BertConfig::FromJson(kConfig, "m/config.json").ok());
  auto defaults = BertConfig::FromJson(kConfig, "m/config.json");
  CHECK(defaults->max_position == 512);
  CHECK(defaults->type_vocab == 2);
  CHECK(defaults->act == "gelu");
  CHECK_THAT(ConfigError({{"model_type", "roberta"}}), Catch::Contains("model_type roberta"));
  CHECK_THAT(ConfigError({{"num_attention_heads", 5}}),
             Catch::Contains("hidden_size 32") && Catch::Contains("num_attention_heads 5"));
  CHECK_THAT(ConfigError({{"vocab_size", nullptr}}), Catch::Contains("vocab_size"));
  CHECK_THAT(ConfigError({{"hidden_size", 0}}), Catch::Contains("hidden_size"));
  CHECK_THAT(ConfigError({{"intermediate_size", -64}}), Catch::Contains("intermediate_size"));
  CHECK_THAT(ConfigError({{"num_hidden_layers", "2"}}), Catch::Contains("num_hidden_layers"));
  CHECK_THAT(ConfigError({{"max_position_embeddings", 1 << 21}}), Catch::Contains("max_position_embeddings"));
  CHECK_THAT(ConfigError({{"hidden_act", "swish"}}), Catch::Contains("hidden_act swish"));
  CHECK_THAT(ConfigError({{"layer_norm_eps", -1}}), Catch::Contains("layer_norm_eps"));
  CHECK_THAT(ConfigError({{"position_embedding_type", "relative_key"}}),
             Catch::Contains("position_embedding_type"));
  CHECK_THAT(ConfigError({{"vocab_size", 1 << 20}, {"hidden_size", 4096}}),
             Catch::Contains("parameters"));

  TempDir dir;
  std::ofstream(dir / "config.json") << "{\"model_type\": ";
  auto r = BertConfig::FromJsonFile(dir / "config.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().IsInvalidArgument());
  CHECK_THAT(r.status().message(), Catch::Contains(dir / "config.json"));
  std::ofstream(dir / "config.json") << "[1]";
  CHECK_THAT(BertConfig::FromJsonFile(dir / "config.json").status().message(),
             Catch::Contains(dir / "config.json") && Catch::Contains("not a JSON object"));
  r = BertConfig::FromJsonFile(dir / "absent.json");
  CHECK(r.status().IsNotFound());
  CHECK_THAT(r.status().message(), Catch::Contains(dir / "absent.json"));
}

TEST_CASE("bert: Flops counts the matrix products") {
  TempDir dir;
  MakeModel(dir, "--seed 18");
  Loaded l = Load(dir);
  const double n = 10, h = 32, i = 64;
  CHECK(l.model->Flops(10) ==
        2 * (2 * n * h * 3 * h + 4 * n * n * h + 2 * n * h * h + 4 * n * h * i));
}

TEST_CASE("bert kernels: erf is within 1e-7 of the exact function") {
  std::vector<float> x, y;
  for (double v = -7; v <= 7; v += 1e-4) x.push_back(float(v));
  x.push_back(std::numeric_limits<float>::infinity());
  x.push_back(-std::numeric_limits<float>::infinity());
  y.resize(x.size());
  kernels::Erf(x.data(), y.data(), x.size());
  double worst = 0;
  for (size_t k = 0; k < x.size(); ++k) worst = std::max(worst, std::fabs(y[k] - std::erf(double(x[k]))));
  INFO(worst);
  CHECK(worst <= 1e-7);
}

}  // namespace bert_test

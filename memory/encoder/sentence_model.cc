#include "memory/encoder/sentence_model.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "base/input_json.h"
#include "base/sha256.h"

namespace limbic::memory::encoder {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A model's small JSON files (config, pooling, modules) are far below this.
constexpr uint64_t kMaxSmallJsonBytes = 1 << 20;

bool IsDir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}
bool IsFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);  // follows the cache's symlinks into blobs/
}

Result<std::string> ReadBounded(const fs::path& path, uint64_t max_bytes) {
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (fs::exists(st) && !fs::is_regular_file(st))
    return Status::InvalidArgument(path.string() + ": not a regular file");
  const uint64_t size = fs::file_size(path, ec);
  if (ec) return Status::NotFound(path.string() + ": " + ec.message());
  if (size > max_bytes)
    return Status::InvalidArgument(path.string() + ": " + std::to_string(size) +
                                   " bytes, more than the " + std::to_string(max_bytes) +
                                   " read for such a file");
  std::ifstream in(path, std::ios::binary);
  std::string text(size, '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(size)))
    return Status::IOError(path.string() + ": cannot read");
  return text;
}

Result<json> ReadJson(const fs::path& path) {
  auto text = ReadBounded(path, kMaxSmallJsonBytes);
  if (!text.ok()) return text.status();
  auto doc = ParseInputJson(*text, 32);
  if (!doc.ok()) return doc.status().WithContext(path.string());
  if (!doc->is_object()) return Status::InvalidArgument(path.string() + ": not a JSON object");
  return std::move(*doc);
}

// The snapshot a cache entry's refs/main names, else its only or newest one.
std::string PickSnapshot(const fs::path& repo) {
  if (auto ref = ReadBounded(repo / "refs" / "main", 4096); ref.ok()) {
    std::string rev = *ref;
    while (!rev.empty() && (rev.back() == '\n' || rev.back() == '\r' || rev.back() == ' '))
      rev.pop_back();
    // A revision is one name below snapshots/: not a path, not "." or "..".
    if (!rev.empty() && rev != "." && rev != ".." && rev.find('/') == std::string::npos &&
        IsDir(repo / "snapshots" / rev))
      return (repo / "snapshots" / rev).string();
  }
  std::error_code ec;
  std::string best;
  fs::file_time_type best_time{};
  for (const auto& e : fs::directory_iterator(repo / "snapshots", ec)) {
    if (!IsDir(e.path())) continue;
    auto t = fs::last_write_time(e.path(), ec);
    if (best.empty() || (!ec && t > best_time)) best = e.path().string(), best_time = t;
  }
  return best;
}

// The bytes' SHA-256, read in 1 MB pieces; a file the cache keeps as
// blobs/<sha256> (an LFS object) is named by its hash already.
Result<std::string> FileHash(const fs::path& path) {
  std::error_code ec;
  if (fs::is_symlink(path, ec)) {
    const std::string blob = fs::read_symlink(path, ec).filename().string();
    if (!ec && blob.size() == 64 &&
        blob.find_first_not_of("0123456789abcdef") == std::string::npos)
      return blob;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError(path.string() + ": cannot read");
  Sha256 h;
  std::string buf(1 << 20, '\0');
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    h.Update(std::string_view(buf.data(), static_cast<size_t>(in.gcount())));
  }
  return h.HexDigest();
}

struct Modules {
  fs::path transformer;  // where config.json and the weights are
  fs::path pooling;      // "" when there is no Pooling module
};

Result<Modules> ReadModules(const fs::path& dir) {
  Modules m{dir, {}};
  const fs::path file = dir / "modules.json";
  if (!IsFile(file)) {
    if (IsFile(dir / "1_Pooling" / "config.json")) m.pooling = dir / "1_Pooling";
    return m;
  }
  auto text = ReadBounded(file, kMaxSmallJsonBytes);
  if (!text.ok()) return text.status();
  auto doc = ParseInputJson(*text, 32);
  if (!doc.ok()) return doc.status().WithContext(file.string());
  if (!doc->is_array()) return Status::InvalidArgument(file.string() + ": not a JSON array");
  for (size_t i = 0; i < doc->size(); ++i) {
    const json& mod = (*doc)[i];
    const std::string where = file.string() + ": [" + std::to_string(i) + "]";
    if (!mod.is_object() || !mod.contains("type") || !mod["type"].is_string())
      return Status::InvalidArgument(where + ": a module needs a string \"type\"");
    const std::string type = mod["type"];
    const std::string path = mod.value("path", json("")).is_string() ? mod.value("path", "") : "";
    if (path.find("..") != std::string::npos || (!path.empty() && path[0] == '/'))
      return Status::InvalidArgument(where + ": path \"" + path + "\" leaves the model directory");
    const std::string kind = type.substr(type.rfind('.') == std::string::npos ? 0 : type.rfind('.') + 1);
    if (kind == "Transformer") {
      m.transformer = path.empty() ? dir : dir / path;
    } else if (kind == "Pooling") {
      m.pooling = dir / path;
    } else if (kind != "Normalize") {
      return Status::InvalidArgument(where + ": module " + type +
                                     " is not supported (only Transformer, Pooling and "
                                     "Normalize: a BERT-family sentence encoder)");
    }
  }
  return m;
}

Result<Pooling> ReadPooling(const fs::path& dir) {
  if (dir.empty()) return Pooling::kMean;
  const fs::path file = dir / "config.json";
  auto doc = ReadJson(file);
  if (!doc.ok()) return doc.status();
  bool mean = false, cls = false;
  for (auto it = doc->begin(); it != doc->end(); ++it) {
    if (it.key().rfind("pooling_mode_", 0) != 0) continue;
    if (!it->is_boolean()) return Status::InvalidArgument(file.string() + ": " + it.key() + " is not true or false");
    if (!it->get<bool>()) continue;
    if (it.key() == "pooling_mode_mean_tokens") mean = true;
    else if (it.key() == "pooling_mode_cls_token") cls = true;
    else
      return Status::InvalidArgument(file.string() + ": " + it.key() +
                                     " is not supported (mean_tokens or cls_token)");
  }
  if (mean == cls)
    return Status::InvalidArgument(file.string() +
                                   ": exactly one of pooling_mode_mean_tokens and "
                                   "pooling_mode_cls_token must be true");
  return cls ? Pooling::kCls : Pooling::kMean;
}

std::mutex& CacheMu() {
  static std::mutex mu;
  return mu;
}
std::map<std::string, std::weak_ptr<const SentenceModel>>& Cache() {
  static auto* cache = new std::map<std::string, std::weak_ptr<const SentenceModel>>;
  return *cache;
}

}  // namespace

std::vector<std::string> HubCacheDirs() {
  std::vector<std::string> dirs;
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  if (auto v = env("HF_HUB_CACHE"); !v.empty()) dirs.push_back(v);
  if (auto v = env("HUGGINGFACE_HUB_CACHE"); !v.empty()) dirs.push_back(v);
  if (auto v = env("HF_HOME"); !v.empty()) dirs.push_back(v + "/hub");
  if (auto v = env("XDG_CACHE_HOME"); !v.empty()) dirs.push_back(v + "/huggingface/hub");
  if (auto v = env("HOME"); !v.empty()) dirs.push_back(v + "/.cache/huggingface/hub");
  return dirs;
}

Result<ModelLocation> FindModel(const std::string& model) {
  if (model.empty()) return Status::InvalidArgument("no model named");
  std::error_code ec;
  if (IsDir(model)) {
    // "dir", "dir/" and "dir/." are one model: one path (the sharing's
    // key) and one name (the embedder's id).
    fs::path dir = fs::absolute(model, ec).lexically_normal();
    if (!dir.has_filename() && dir.has_relative_path()) dir = dir.parent_path();
    return ModelLocation{dir.string(), dir.filename().string()};
  }
  std::vector<std::string> names = {model};
  if (model.find('/') == std::string::npos) names.push_back("sentence-transformers/" + model);
  std::vector<std::string> looked = {
      (model[0] == '/' ? model : "./" + model) +
      (fs::exists(model, ec) ? " (not a directory)" : " (a directory)")};
  const bool path_like = model[0] == '/' || model[0] == '.' || model[0] == '~' ||
                         std::count(model.begin(), model.end(), '/') > 1;
  if (!path_like) {
    for (const std::string& cache : HubCacheDirs()) {
      for (const std::string& name : names) {
        std::string folder = "models--" + name;
        for (size_t p = 0; (p = folder.find('/', p)) != std::string::npos; p += 2)
          folder.replace(p, 1, "--");
        const fs::path repo = fs::path(cache) / folder;
        looked.push_back(repo.string() + "/snapshots/");
        if (!IsDir(repo / "snapshots")) continue;
        std::string snap = PickSnapshot(repo);
        if (!snap.empty()) return ModelLocation{snap, name};
      }
    }
  }
  std::string where;
  for (const std::string& l : looked) where += (where.empty() ? "" : ", ") + l;
  return Status::NotFound("model \"" + model + "\" not found: looked in " + where);
}

Result<std::shared_ptr<const SentenceModel>> SentenceModel::Load(const ModelLocation& where,
                                                                 size_t max_tokens) {
  const std::string key = where.dir + "\n" + std::to_string(max_tokens);
  std::lock_guard lock(CacheMu());  // one load per model, however many ask at once
  if (auto held = Cache()[key].lock()) return held;
  auto loaded = LoadUncached(where, max_tokens);
  if (loaded.ok()) Cache()[key] = *loaded;
  return loaded;
}

Result<std::shared_ptr<const SentenceModel>> SentenceModel::LoadUncached(const ModelLocation& where,
                                                                         size_t max_tokens) {
  const fs::path dir = where.dir;
  auto modules = ReadModules(dir);
  if (!modules.ok()) return modules.status();
  const fs::path t = modules->transformer;
  auto config = BertConfig::FromJsonFile((t / "config.json").string());
  if (!config.ok()) return config.status();
  auto pooling = ReadPooling(modules->pooling);
  if (!pooling.ok()) return pooling.status();

  // The length limit: the least of the model's, the tokenizer's, the caller's.
  WordPieceOptions wo;
  wo.max_length = std::min(config->max_position, kMaxSequenceTokens);
  if (max_tokens > 0) wo.max_length = std::min(wo.max_length, max_tokens);
  for (const fs::path& st : {t / "sentence_bert_config.json", dir / "sentence_bert_config.json"}) {
    if (!IsFile(st)) continue;
    auto doc = ReadJson(st);
    if (!doc.ok()) return doc.status();
    if (doc->contains("max_seq_length")) {
      const json& v = (*doc)["max_seq_length"];
      if (!v.is_number_unsigned() || v.get<uint64_t>() < 2)
        return Status::InvalidArgument(st.string() + ": max_seq_length is not a count >= 2");
      wo.max_length = std::min<size_t>(wo.max_length, v.get<uint64_t>());
    }
    break;
  }
  Result<WordPiece> tokenizer = Status::NotFound("");
  std::vector<fs::path> tokenizer_files;
  if (IsFile(t / "tokenizer.json")) {
    tokenizer_files = {t / "tokenizer.json"};
    tokenizer = WordPiece::FromTokenizerJson((t / "tokenizer.json").string(), wo);
  } else if (IsFile(t / "vocab.txt")) {
    tokenizer_files = {t / "vocab.txt"};
    std::string cfg;
    if (IsFile(t / "tokenizer_config.json")) {
      cfg = (t / "tokenizer_config.json").string();
      tokenizer_files.push_back(cfg);
    }
    tokenizer = WordPiece::FromVocabFile((t / "vocab.txt").string(), cfg, wo);
  } else {
    return Status::NotFound(dir.string() + ": no tokenizer: neither " + (t / "tokenizer.json").string() +
                            " nor " + (t / "vocab.txt").string());
  }
  if (!tokenizer.ok()) return tokenizer.status();
  if (tokenizer->vocab_size() > config->vocab_size)
    return Status::InvalidArgument((t / "config.json").string() + ": vocab_size " +
                                   std::to_string(config->vocab_size) + " is smaller than the tokenizer's " +
                                   std::to_string(tokenizer->vocab_size()) + " pieces");

  const fs::path weights = t / "model.safetensors";
  if (std::error_code ec; fs::exists(weights, ec) && !IsFile(weights))
    return Status::InvalidArgument(weights.string() + ": not a regular file");
  if (!IsFile(weights)) {
    if (IsFile(t / "pytorch_model.bin"))
      return Status::NotFound(weights.string() +
                              " is missing: only safetensors is read, not pytorch_model.bin "
                              "(download the model's model.safetensors, or convert it with "
                              "safetensors' convert script)");
    return Status::NotFound(weights.string() + " is missing");
  }
  auto file = SafeTensors::Open(weights.string());
  if (!file.ok()) return file.status();
  auto model = BertModel::Load(*config, std::shared_ptr<const SafeTensors>(std::move(*file)));
  if (!model.ok()) return model.status();

  Sha256 id;
  auto add_file = [&](const fs::path& p) -> Status {
    auto h = FileHash(p);
    if (!h.ok()) return h.status();
    id.Update(p.filename().string() + " " + *h + "\n");
    return Status::OK();
  };
  LIMBIC_RETURN_IF_ERROR(add_file(weights));
  for (const fs::path& p : tokenizer_files) LIMBIC_RETURN_IF_ERROR(add_file(p));
  id.Update(std::string("pooling ") + (*pooling == Pooling::kCls ? "cls" : "mean") + "\n");
  id.Update("max_length " + std::to_string(tokenizer->options().max_length) + "\n");

  std::shared_ptr<SentenceModel> out(new SentenceModel(where, std::move(*tokenizer)));
  out->model_ = std::move(*model);
  out->pooling_ = *pooling;
  out->hash_ = id.HexDigest();
  return std::shared_ptr<const SentenceModel>(std::move(out));
}

Result<std::vector<std::vector<float>>> SentenceModel::Encode(std::span<const std::string> texts,
                                                              size_t batch) const {
  batch = std::max<size_t>(1, batch);
  std::vector<std::vector<float>> out;
  out.reserve(texts.size());
  std::vector<std::vector<int32_t>> ids;
  for (size_t start = 0; start < texts.size(); start += batch) {
    const size_t end = std::min(texts.size(), start + batch);
    ids.clear();
    for (size_t i = start; i < end; ++i) ids.push_back(tokenizer_.Encode(texts[i]));
    auto vectors = model_->Encode(ids, pooling_);
    if (!vectors.ok()) return vectors.status();
    for (auto& v : *vectors) out.push_back(std::move(v));
  }
  return out;
}

}  // namespace limbic::memory::encoder

// Loading a WordPiece: a vocabulary, vocab.txt (+ tokenizer_config.json),
// or HF tokenizers' tokenizer.json. What is read:
//
//   vocab.txt             := (PIECE "\n")* [PIECE]      id = 0-based line number
//   tokenizer_config.json := { "do_lower_case"?: bool, "strip_accents"?: bool|null,
//                              "tokenize_chinese_chars"?: bool, "do_basic_tokenize"?: true,
//                              "unk_token"|"cls_token"|"sep_token"?: TOKEN,
//                              "model_max_length"?: number, ... }
//   TOKEN                 := string | { "content": string, ... }
//   tokenizer.json        := { "model": { "type": "WordPiece", "vocab": { PIECE: id, ... },
//                                         "unk_token"?, "continuing_subword_prefix"?,
//                                         "max_input_chars_per_word"? },
//                              "normalizer": null | BERTNORM | { "type": "Sequence",
//                                                                "normalizers": [BERTNORM] },
//                              "pre_tokenizer": { "type": "BertPreTokenizer" }
//                                               | { "type": "Sequence", "pretokenizers": [that] },
//                              "post_processor"?: null | POST | { "type": "Sequence",
//                                                                 "processors": [POST] },
//                              "truncation"?: null | { "max_length": uint, ... }, ... }
//   BERTNORM := { "type": "BertNormalizer", "clean_text"?, "handle_chinese_chars"?,
//                 "lowercase"?: bool, "strip_accents"?: bool|null }
//   POST     := { "type": "TemplateProcessing", "single": [{"SpecialToken": {"id": CLS}},
//                 {"Sequence": {"id": "A"}}, {"SpecialToken": {"id": SEP}}],
//                 "special_tokens"?: { NAME: { "ids": [id] } } }
//             | { "type": "BertProcessing", "cls": [CLS, id], "sep": [SEP, id] }
// Keys not listed are ignored (added_tokens: see the header's "Not done").
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <tuple>
#include <unordered_map>

#include "base/input_json.h"
#include "base/json.h"
#include "memory/encoder/wordpiece.h"

namespace limbic::memory::encoder {

namespace {

using nlohmann::json;

Result<std::string> ReadBounded(const std::string& path) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st)) return Status::NotFound(path + ": no such file");
  if (!std::filesystem::is_regular_file(st))
    return Status::InvalidArgument(path + ": not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError(path + ": cannot be opened");
  std::string text;
  // Read one byte past the bound, so a file that grew since any stat is caught too.
  text.resize(std::min<uint64_t>(std::filesystem::file_size(path, ec), kMaxTokenizerBytes) + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxTokenizerBytes)
    return Status::InvalidArgument(path + ": larger than " + std::to_string(kMaxTokenizerBytes) +
                                   " bytes, the most a tokenizer file may have");
  if (in.bad()) return Status::IOError(path + ": read failed");
  return text;
}

// Type-checked reads of one JSON file's fields; errors are
// "NAME: KEY: what" with KEY the path from the root ("model.vocab").
class Fields {
 public:
  explicit Fields(const std::string& name) : name_(name) {}

  Status Err(const std::string& key, const std::string& what) const {
    return Status::InvalidArgument(name_ + ": " + key + ": " + what);
  }
  Status NotA(const std::string& key, const json& v, const char* expected) const {
    return Err(key, std::string("is ") + v.type_name() + ", not " + expected);
  }
  // obj[field], or nullptr when it is absent or null.
  static const json* Get(const json& obj, const char* field) {
    auto it = obj.find(field);
    return it == obj.end() || it->is_null() ? nullptr : &*it;
  }
  Status Object(const std::string& key, const json& v) const {
    return v.is_object() ? Status::OK() : NotA(key, v, "an object");
  }
  Status Bool(const json& obj, const std::string& at, const char* field, bool* out) const {
    const json* v = Get(obj, field);
    if (!v) return Status::OK();
    if (!v->is_boolean()) return NotA(at + field, *v, "a boolean");
    *out = v->get<bool>();
    return Status::OK();
  }
  Status String(const json& obj, const std::string& at, const char* field, std::string* out) const {
    const json* v = Get(obj, field);
    if (!v) return Status::OK();
    if (!v->is_string()) return NotA(at + field, *v, "a string");
    *out = v->get<std::string>();
    return Status::OK();
  }
  // A string, or an added token's {"content": string}.
  Status Token(const json& obj, const std::string& at, const char* field, std::string* out) const {
    const json* v = Get(obj, field);
    if (v && v->is_object()) return String(*v, at + field + ".", "content", out);
    return String(obj, at, field, out);
  }
  Status Count(const json& v, const std::string& key, uint64_t* out) const {
    if (!v.is_number_unsigned()) return NotA(key, v, "a non-negative integer");
    *out = v.get<uint64_t>();
    return Status::OK();
  }
  // A max_length of the file: at least 2, lowering *max_length.
  Status MaxLength(const std::string& key, const json& given, size_t* max_length) const {
    const double v = given.get<double>();
    if (!(v >= 2)) return Err(key, given.dump() + " is below 2 ([CLS] and [SEP])");
    if (v < static_cast<double>(*max_length)) *max_length = static_cast<size_t>(v);
    return Status::OK();
  }
  // `type` of a typed object ({"type": ...}).
  Result<std::string> Type(const json& v, const std::string& key) const {
    LIMBIC_RETURN_IF_ERROR(Object(key, v));
    const json* t = Get(v, "type");
    if (!t || !t->is_string()) return Err(key + ".type", "missing, or not a string");
    return t->get<std::string>();
  }
  // The one element of a Sequence's list `field`, with its key.
  Result<std::pair<const json*, std::string>> Single(const json& v, const std::string& key,
                                                     const char* field) const {
    const json* list = Get(v, field);
    const std::string at = key + "." + field;
    if (!list || !list->is_array()) return Err(at, "missing, or not an array");
    if (list->size() != 1)
      return Err(at, "holds " + std::to_string(list->size()) + " entries; only one is supported");
    return std::make_pair(&(*list)[0], at + "[0]");
  }

 private:
  const std::string& name_;
};

Status ApplyConfig(const std::string& text, const std::string& name, WordPieceOptions* o) {
  auto parsed = ParseInputJson(text);
  if (!parsed.ok()) return parsed.status().WithContext(name);
  const json& j = *parsed;
  Fields f(name);
  if (!j.is_object()) return Status::InvalidArgument(name + ": not a JSON object");
  LIMBIC_RETURN_IF_ERROR(f.Bool(j, "", "do_lower_case", &o->lower_case));
  if (auto it = j.find("strip_accents"); it != j.end()) {
    if (it->is_null())
      o->strip_accents.reset();
    else if (it->is_boolean())
      o->strip_accents = it->get<bool>();
    else
      return f.NotA("strip_accents", *it, "a boolean or null");
  }
  LIMBIC_RETURN_IF_ERROR(f.Bool(j, "", "tokenize_chinese_chars", &o->chinese_chars));
  bool basic = true;
  LIMBIC_RETURN_IF_ERROR(f.Bool(j, "", "do_basic_tokenize", &basic));
  if (!basic) return f.Err("do_basic_tokenize", "false is not supported");
  LIMBIC_RETURN_IF_ERROR(f.Token(j, "", "unk_token", &o->unk));
  LIMBIC_RETURN_IF_ERROR(f.Token(j, "", "cls_token", &o->cls));
  LIMBIC_RETURN_IF_ERROR(f.Token(j, "", "sep_token", &o->sep));
  if (const json* m = Fields::Get(j, "model_max_length")) {
    if (!m->is_number()) return f.NotA("model_max_length", *m, "a number");
    LIMBIC_RETURN_IF_ERROR(f.MaxLength("model_max_length", *m, &o->max_length));
  }
  return Status::OK();
}

Status ApplyBertNormalizer(const Fields& f, const json& n, const std::string& key,
                           WordPieceOptions* o) {
  const std::string at = key + ".";
  LIMBIC_RETURN_IF_ERROR(f.Bool(n, at, "clean_text", &o->clean_text));
  LIMBIC_RETURN_IF_ERROR(f.Bool(n, at, "handle_chinese_chars", &o->chinese_chars));
  LIMBIC_RETURN_IF_ERROR(f.Bool(n, at, "lowercase", &o->lower_case));
  o->strip_accents.reset();
  if (const json* s = Fields::Get(n, "strip_accents")) {
    if (!s->is_boolean()) return f.NotA(at + "strip_accents", *s, "a boolean or null");
    o->strip_accents = s->get<bool>();
  }
  return Status::OK();
}

Status ApplyNormalizer(const Fields& f, const json& root, WordPieceOptions* o) {
  const json* n = Fields::Get(root, "normalizer");
  if (!n) {  // no normalizer: the text is split as it is
    o->clean_text = o->chinese_chars = o->lower_case = false;
    o->strip_accents = false;
    return Status::OK();
  }
  std::string key = "normalizer";
  auto type = f.Type(*n, key);
  if (!type.ok()) return type.status();
  if (*type == "Sequence") {
    auto one = f.Single(*n, key, "normalizers");
    if (!one.ok()) return one.status();
    n = one->first;
    key = one->second;
    type = f.Type(*n, key);
    if (!type.ok()) return type.status();
  }
  if (*type != "BertNormalizer")
    return f.Err(key + ".type", JsonQuote(*type) + " is not supported (only BertNormalizer)");
  return ApplyBertNormalizer(f, *n, key, o);
}

Status CheckPreTokenizer(const Fields& f, const json& root) {
  const json* p = Fields::Get(root, "pre_tokenizer");
  if (!p) return f.Err("pre_tokenizer", "null is not supported (only BertPreTokenizer)");
  std::string key = "pre_tokenizer";
  auto type = f.Type(*p, key);
  if (!type.ok()) return type.status();
  if (*type == "Sequence") {
    auto one = f.Single(*p, key, "pretokenizers");
    if (!one.ok()) return one.status();
    key = one->second;
    type = f.Type(*one->first, key);
    if (!type.ok()) return type.status();
  }
  if (*type != "BertPreTokenizer")
    return f.Err(key + ".type", JsonQuote(*type) + " is not supported (only BertPreTokenizer)");
  return Status::OK();
}

// The special token a TemplateProcessing's single[i] names.
Result<std::string> TemplateToken(const Fields& f, const json& single, const std::string& key,
                                  size_t i) {
  const std::string at = key + "[" + std::to_string(i) + "]";
  const json& item = single[i];
  const char* kind = i == 1 ? "Sequence" : "SpecialToken";
  const json* inner = item.is_object() ? Fields::Get(item, kind) : nullptr;
  const json* id = inner && inner->is_object() ? Fields::Get(*inner, "id") : nullptr;
  if (!id || !id->is_string() || (i == 1 && *id != "A"))
    return f.Err(key, "only [CLS] $A [SEP] is supported: " + at + " is not a " + kind);
  return id->get<std::string>();
}

// An id the post_processor gives a special token (at `key`).
struct SpecialId {
  std::string key, token;
  const json* id;
};

// [CLS]/[SEP] from the post_processor; `want` collects the ids the file
// gives them, checked against the vocabulary once it is made.
Status ApplyPostProcessor(const Fields& f, const json& root, WordPieceOptions* o,
                          std::vector<SpecialId>* want) {
  const json* p = Fields::Get(root, "post_processor");
  if (!p) return Status::OK();
  std::string key = "post_processor";
  auto type = f.Type(*p, key);
  if (!type.ok()) return type.status();
  if (*type == "Sequence") {
    auto one = f.Single(*p, key, "processors");
    if (!one.ok()) return one.status();
    p = one->first;
    key = one->second;
    type = f.Type(*p, key);
    if (!type.ok()) return type.status();
  }
  if (*type == "BertProcessing") {
    for (auto [field, out] : {std::pair{"cls", &o->cls}, std::pair{"sep", &o->sep}}) {
      const json* v = Fields::Get(*p, field);
      if (!v || !v->is_array() || v->size() != 2 || !(*v)[0].is_string())
        return f.Err(key + "." + field, "not a [token, id] pair");
      *out = (*v)[0].get<std::string>();
      want->push_back({key + "." + field + "[1]", *out, &(*v)[1]});
    }
    return Status::OK();
  }
  if (*type != "TemplateProcessing")
    return f.Err(key + ".type",
                 JsonQuote(*type) + " is not supported (only TemplateProcessing, BertProcessing)");
  const json* single = Fields::Get(*p, "single");
  if (!single || !single->is_array() || single->size() != 3)
    return f.Err(key + ".single", "only [CLS] $A [SEP] is supported");
  for (size_t i : {0, 1, 2}) {
    auto token = TemplateToken(f, *single, key + ".single", i);
    if (!token.ok()) return token.status();
    if (i == 0) o->cls = *token;
    if (i == 2) o->sep = *token;
  }
  if (const json* special = Fields::Get(*p, "special_tokens")) {
    LIMBIC_RETURN_IF_ERROR(f.Object(key + ".special_tokens", *special));
    for (const std::string* name : {&o->cls, &o->sep}) {
      auto it = special->find(*name);
      if (it == special->end()) continue;
      const std::string at = key + ".special_tokens[" + JsonQuote(*name) + "].ids";
      const json* ids = it->is_object() ? Fields::Get(*it, "ids") : nullptr;
      if (!ids || !ids->is_array() || ids->size() != 1) return f.Err(at, "not a list of one id");
      want->push_back({at, *name, &(*ids)[0]});
    }
  }
  return Status::OK();
}

Result<std::vector<std::string>> VocabOf(const Fields& f, const json& model) {
  const json* vocab = Fields::Get(model, "vocab");
  if (!vocab) return f.Err("model.vocab", "missing");
  LIMBIC_RETURN_IF_ERROR(f.Object("model.vocab", *vocab));
  const size_t n = vocab->size();
  if (n == 0) return f.Err("model.vocab", "empty");
  std::vector<std::string> pieces(n);
  std::vector<bool> seen(n);
  for (const auto& [piece, v] : vocab->items()) {
    const std::string key = "model.vocab[" + JsonQuote(piece) + "]";
    uint64_t id = 0;
    LIMBIC_RETURN_IF_ERROR(f.Count(v, key, &id));
    if (id >= n)
      return f.Err(key, "id " + std::to_string(id) + " leaves a gap (the ids of " +
                            std::to_string(n) + " pieces are 0.." + std::to_string(n - 1) + ")");
    if (seen[id])
      return f.Err(
          key, "id " + std::to_string(id) + " repeated (" + JsonQuote(pieces[id]) + " has it too)");
    seen[id] = true;
    pieces[id] = piece;
  }
  return pieces;
}

Result<WordPiece> ParseTokenizerJson(std::string_view text, const std::string& name,
                                     WordPieceOptions o) {
  if (text.size() > kMaxTokenizerBytes)
    return Status::InvalidArgument(name + ": larger than " + std::to_string(kMaxTokenizerBytes) +
                                   " bytes, the most a tokenizer file may have");
  auto parsed = ParseInputJson(text);
  if (!parsed.ok()) return parsed.status().WithContext(name);
  const json& root = *parsed;
  Fields f(name);
  if (!root.is_object()) return Status::InvalidArgument(name + ": not a JSON object");

  const json* model = Fields::Get(root, "model");
  if (!model) return f.Err("model", "missing");
  auto type = f.Type(*model, "model");
  if (!type.ok()) return type.status();
  if (*type != "WordPiece") return f.Err("model.type", JsonQuote(*type) + " is not WordPiece");
  auto pieces = VocabOf(f, *model);
  if (!pieces.ok()) return pieces.status();
  LIMBIC_RETURN_IF_ERROR(f.String(*model, "model.", "unk_token", &o.unk));
  LIMBIC_RETURN_IF_ERROR(
      f.String(*model, "model.", "continuing_subword_prefix", &o.continuing_prefix));
  if (const json* m = Fields::Get(*model, "max_input_chars_per_word")) {
    uint64_t chars = 0;
    LIMBIC_RETURN_IF_ERROR(f.Count(*m, "model.max_input_chars_per_word", &chars));
    o.max_chars_per_word = static_cast<size_t>(chars);
  }

  LIMBIC_RETURN_IF_ERROR(ApplyNormalizer(f, root, &o));
  LIMBIC_RETURN_IF_ERROR(CheckPreTokenizer(f, root));
  std::vector<SpecialId> want;
  LIMBIC_RETURN_IF_ERROR(ApplyPostProcessor(f, root, &o, &want));
  if (const json* t = Fields::Get(root, "truncation")) {
    LIMBIC_RETURN_IF_ERROR(f.Object("truncation", *t));
    if (const json* m = Fields::Get(*t, "max_length")) {
      uint64_t len = 0;
      LIMBIC_RETURN_IF_ERROR(f.Count(*m, "truncation.max_length", &len));
      LIMBIC_RETURN_IF_ERROR(f.MaxLength("truncation.max_length", *m, &o.max_length));
    }
  }

  auto wp = WordPiece::FromVocab(std::move(*pieces), std::move(o));
  if (!wp.ok()) return wp.status().WithContext(name);
  // The post_processor's ids for [CLS]/[SEP] must be the vocabulary's: they
  // are what HF would put in, and Encode puts in the vocabulary's.
  for (const SpecialId& w : want) {
    const int32_t id = wp->Id(w.token);
    if (!w.id->is_number_integer() || w.id->get<int64_t>() != id)
      return f.Err(w.key, w.id->dump() + " is not " + JsonQuote(w.token) + "'s id " +
                              std::to_string(id) + " in model.vocab");
  }
  return wp;
}

}  // namespace

Result<WordPiece> WordPiece::Make(std::vector<std::string> vocab, WordPieceOptions options,
                                  bool lines) {
  if (options.max_length < 2)
    return Status::InvalidArgument("max_length " + std::to_string(options.max_length) +
                                   " leaves no room for [CLS] and [SEP]");
  if (vocab.empty()) return Status::InvalidArgument("the vocabulary is empty");
  if (vocab.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
    return Status::InvalidArgument("the vocabulary has 2^31 pieces or more");
  WordPiece wp;
  wp.ids_.reserve(vocab.size());
  const std::string& prefix = options.continuing_prefix;
  for (size_t i = 0; i < vocab.size(); ++i) {
    const std::string& piece = vocab[i];
    auto [it, added] = wp.ids_.emplace(piece, static_cast<int32_t>(i));
    if (!added) {
      const size_t at = lines ? i + 1 : i, first = lines ? it->second + 1 : it->second;
      const char* unit = lines ? "line" : "id";
      return Status::InvalidArgument("piece " + JsonQuote(piece) + " at " + unit + " " +
                                     std::to_string(at) + " repeats " + unit + " " +
                                     std::to_string(first));
    }
    const bool continuing = !prefix.empty() && piece.size() > prefix.size() &&
                            piece.compare(0, prefix.size(), prefix) == 0;
    wp.max_piece_bytes_ =
        std::max(wp.max_piece_bytes_, piece.size() - (continuing ? prefix.size() : 0));
  }
  for (auto [token, id, what] : {std::tuple{&options.unk, &wp.unk_, "unknown"},
                                 std::tuple{&options.cls, &wp.cls_, "classifier"},
                                 std::tuple{&options.sep, &wp.sep_, "separator"}}) {
    auto it = wp.ids_.find(*token);
    if (it == wp.ids_.end())
      return Status::InvalidArgument("the vocabulary has no " + JsonQuote(*token) + " (the " +
                                     what + " token)");
    *id = it->second;
  }
  wp.pieces_ = std::move(vocab);
  wp.options_ = std::move(options);
  return wp;
}

Result<WordPiece> WordPiece::FromVocab(std::vector<std::string> vocab, WordPieceOptions options) {
  return Make(std::move(vocab), std::move(options), false);
}

Result<WordPiece> WordPiece::FromVocabFile(const std::string& vocab_path,
                                           const std::string& config_path,
                                           WordPieceOptions options) {
  auto text = ReadBounded(vocab_path);
  if (!text.ok()) return text.status();
  if (!config_path.empty()) {
    auto config = ReadBounded(config_path);
    if (!config.ok()) return config.status();
    LIMBIC_RETURN_IF_ERROR(ApplyConfig(*config, config_path, &options));
  }
  std::vector<std::string> pieces;
  std::string_view rest = *text;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    // Trailing whitespace goes, as HF's reader trims it: "\r" of a CRLF file.
    while (!line.empty() && (line.back() == ' ' || (line.back() >= '\t' && line.back() <= '\r')))
      line.remove_suffix(1);
    pieces.emplace_back(line);
  }
  auto wp = Make(std::move(pieces), std::move(options), true);
  if (!wp.ok()) return wp.status().WithContext(vocab_path);
  return wp;
}

Result<WordPiece> WordPiece::FromTokenizerJsonText(std::string_view text, const std::string& name,
                                                   WordPieceOptions options) {
  try {
    return ParseTokenizerJson(text, name, std::move(options));
  } catch (const std::exception& e) {  // a check missed: a refusal, not a crash
    return Status::Internal(name + ": " + e.what());
  }
}

Result<WordPiece> WordPiece::FromTokenizerJson(const std::string& path, WordPieceOptions options) {
  auto text = ReadBounded(path);
  if (!text.ok()) return text.status();
  return FromTokenizerJsonText(*text, path, std::move(options));
}

}  // namespace limbic::memory::encoder

// A day document to and from JSON, and its chain hash.
#include "archive/archive.h"
#include "base/sha256.h"

namespace limbic::archive {
namespace {

json OptionalString(const std::optional<std::string>& s) { return s ? json(*s) : json(nullptr); }

// Reads fields of one JSON object; errors say where ("links.social[2].delta").
class Fields {
 public:
  Fields(const json& j, std::string where) : j_(j), where_(std::move(where)) {}
  bool is_object() const { return j_.is_object(); }

  Status String(const char* name, std::string* out) const {
    const json* v = Find(name);
    if (!v || !v->is_string()) return Bad(name, "a string");
    *out = v->get<std::string>();
    return Status::OK();
  }
  Status Date(const char* name, std::string* out) const {
    LIMBIC_RETURN_IF_ERROR(String(name, out));
    if (!IsValidDate(*out)) return Bad(name, "a date (YYYY-MM-DD)");
    return Status::OK();
  }
  // null or a string; `date` asks for a date.
  Status Nullable(const char* name, std::optional<std::string>* out, bool date) const {
    const json* v = Find(name);
    if (v && v->is_null()) {
      out->reset();
      return Status::OK();
    }
    if (!v || !v->is_string() || (date && !IsValidDate(v->get_ref<const std::string&>())))
      return Bad(name, date ? "null or a date" : "null or a string");
    *out = v->get<std::string>();
    return Status::OK();
  }
  Status Number(const char* name, double* out) const {
    const json* v = Find(name);
    if (!v || !v->is_number()) return Bad(name, "a number");
    *out = v->get<double>();
    return Status::OK();
  }
  const json* Find(const char* name) const {
    auto it = j_.find(name);
    return it == j_.end() ? nullptr : &*it;
  }
  std::string Path(const char* name) const { return where_.empty() ? name : where_ + "." + name; }
  Status Bad(const char* name, const char* want) const {
    return Status::Corruption(Path(name) + (Find(name) ? " is not " : " is missing: want ") + want);
  }

 private:
  const json& j_;
  std::string where_;
};

// The array `name` of `f`, each element read by `read(fields, &item)`.
template <typename T, typename Read>
Status ReadArray(const Fields& f, const char* name, std::vector<T>* out, Read read) {
  const json* a = f.Find(name);
  if (!a || !a->is_array()) return f.Bad(name, "an array");
  for (size_t i = 0; i < a->size(); ++i) {
    Fields item((*a)[i], f.Path(name) + "[" + std::to_string(i) + "]");
    if (!item.is_object()) return Status::Corruption(f.Path(name) + "[" + std::to_string(i) +
                                                     "] is not an object");
    T t;
    LIMBIC_RETURN_IF_ERROR(read(item, &t));
    out->push_back(std::move(t));
  }
  return Status::OK();
}

Status ReadLinks(const Fields& doc, Links* links) {
  const json* l = doc.Find("links");
  if (!l || !l->is_object()) return doc.Bad("links", "an object");
  Fields f(*l, "links");
  const json* t = f.Find("temporal");
  if (!t || !t->is_object()) return f.Bad("temporal", "an object");
  Fields temporal(*t, "links.temporal");
  LIMBIC_RETURN_IF_ERROR(temporal.Nullable("prev", &links->prev, true));
  LIMBIC_RETURN_IF_ERROR(temporal.Nullable("next", &links->next, true));
  LIMBIC_RETURN_IF_ERROR(ReadArray(f, "semantic", &links->semantic,
                                   [](const Fields& item, SemanticLink* s) {
                                     LIMBIC_RETURN_IF_ERROR(item.Date("target", &s->target));
                                     return item.Number("score", &s->score);
                                   }));
  return ReadArray(f, "social", &links->social, [](const Fields& item, SocialLink* s) {
    LIMBIC_RETURN_IF_ERROR(item.Date("target", &s->target));
    LIMBIC_RETURN_IF_ERROR(item.String("direction", &s->direction));
    if (s->direction != "inward" && s->direction != "outward")
      return item.Bad("direction", "\"inward\" or \"outward\"");
    return item.Number("delta", &s->delta);
  });
}

}  // namespace

std::string ChainHash(const std::optional<std::string>& prev_hash, std::string_view content) {
  Sha256 h;
  if (prev_hash) h.Update(*prev_hash);
  h.Update(content);
  return h.HexDigest();
}

json DocumentToJson(const Document& doc) {
  json semantic = json::array(), social = json::array();
  for (const SemanticLink& s : doc.links.semantic)
    semantic.push_back({{"target", s.target}, {"score", s.score}});
  for (const SocialLink& s : doc.links.social)
    social.push_back({{"target", s.target}, {"direction", s.direction}, {"delta", s.delta}});
  return json{
      {"date", doc.date},
      {"content", doc.content},
      {"hash", doc.hash},
      {"prev_hash", OptionalString(doc.prev_hash)},
      {"metadata", doc.metadata},
      {"links",
       {{"temporal", {{"prev", OptionalString(doc.links.prev)}, {"next", OptionalString(doc.links.next)}}},
        {"semantic", std::move(semantic)},
        {"social", std::move(social)}}},
  };
}

Result<Document> DocumentFromJson(json&& j, std::string_view where) {
  std::string content;
  if (j.is_object()) {
    auto it = j.find("content");
    if (it != j.end() && it->is_string()) {
      content = std::move(it->get_ref<std::string&>());
      *it = "";
    }
  }
  auto doc = DocumentFromJson(static_cast<const json&>(j), where);
  if (doc.ok()) doc->content = std::move(content);
  return doc;
}

Result<Document> DocumentFromJson(const json& j, std::string_view where) {
  auto fail = [&](const Status& s) { return s.WithContext(where); };
  if (!j.is_object()) return Status::Corruption(std::string(where) + ": not a JSON object");
  Fields f(j, "");
  Document doc;
  if (Status s = f.Date("date", &doc.date); !s.ok()) return fail(s);
  if (Status s = f.String("content", &doc.content); !s.ok()) return fail(s);
  if (Status s = f.String("hash", &doc.hash); !s.ok()) return fail(s);
  if (Status s = f.Nullable("prev_hash", &doc.prev_hash, false); !s.ok()) return fail(s);
  const json* meta = f.Find("metadata");
  if (!meta || !meta->is_object()) return fail(f.Bad("metadata", "an object"));
  doc.metadata = *meta;
  if (Status s = ReadLinks(f, &doc.links); !s.ok()) return fail(s);
  return doc;
}

}  // namespace limbic::archive

// graph.jsonl: one JSON object per line, written in this key order:
//
//   {"subject":"Alice","predicate":"works at","object":"Acme","date":"2026-11-22"}
//
// Lines end in '\n'. A last line without one is either being written (a
// reader without the lock leaves it for later) or torn by a crash (a writer
// under the lock counts it as a bad line and ends it before appending).
#include "world/graph.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <deque>

#include "base/json.h"
#include "world/files.h"
#include "base/time.h"

namespace limbic::world {
namespace {

constexpr size_t kChunk = 1 << 20;
constexpr size_t kMaxLine = 1 << 20;  // longer lines are bad lines, never held whole
constexpr int kMaxHops = 5;

bool IsBlank(std::string_view s) {
  return s.find_first_not_of(" \t\r\n\f\v") == std::string_view::npos;
}

std::string EdgeKey(const std::string& subject_key, std::string_view predicate,
                    const std::string& object_key) {
  std::string key = subject_key;
  ((key += '\x1f') += predicate) += '\x1f';
  return key += object_key;
}

// "" when the triplet could have been written by Add, else what is wrong.
std::string Problem(const Triplet& t) {
  if (IsBlank(t.subject)) return "empty subject";
  if (IsBlank(t.predicate)) return "empty predicate";
  if (IsBlank(t.object)) return "empty object";
  if (!IsValidDate(t.date)) return "date " + JsonQuote(t.date) + " is not a date (YYYY-MM-DD)";
  return "";
}

std::optional<Triplet> ParseLine(std::string_view line) {
  json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  Triplet t;
  for (auto [field, out] : {std::pair{"subject", &t.subject}, std::pair{"predicate", &t.predicate},
                            std::pair{"object", &t.object}, std::pair{"date", &t.date}}) {
    auto it = j.find(field);
    if (it == j.end() || !it->is_string()) return std::nullopt;
    *out = it->get<std::string>();
  }
  if (!Problem(t).empty()) return std::nullopt;
  return t;
}

std::string EdgeLine(const Triplet& t) {
  return "{\"subject\":" + JsonQuote(t.subject) + ",\"predicate\":" + JsonQuote(t.predicate) +
         ",\"object\":" + JsonQuote(t.object) + ",\"date\":" + JsonQuote(t.date) + "}\n";
}

json EdgeJson(const Triplet& t) {
  return {
      {"subject", t.subject}, {"predicate", t.predicate}, {"object", t.object}, {"date", t.date}};
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

GraphStore::GraphStore(std::string path, Env* env) : path_(std::move(path)), env_(env) {}
GraphStore::~GraphStore() = default;

Result<std::unique_ptr<GraphStore>> GraphStore::Open(const std::string& path, Env* env) {
  std::unique_ptr<GraphStore> g(new GraphStore(path, env));
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0 && errno == ENOENT) return g;
  if (fd.get() < 0) return ErrnoStatus("open " + path, errno);
  bool unterminated = false;
  LIMBIC_RETURN_IF_ERROR(g->ReadFrom(fd.get(), 0, false, &unterminated));
  return g;
}

void GraphStore::Reset() {
  loaded_bytes_ = 0;
  bad_lines_ = 0;
  edges_.clear();
  edge_ends_.clear();
  edge_keys_.clear();
  by_entity_.clear();
}

Status GraphStore::ReadFrom(int fd, uint64_t offset, bool to_end, bool* unterminated) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return ErrnoStatus("stat " + path_, errno);
  file_dev_ = st.st_dev;
  file_ino_ = st.st_ino;
  *unterminated = false;
  std::string line, chunk(kChunk, '\0');
  bool too_long = false;  // skipping the rest of an over-long line
  auto take = [&] {
    if (too_long)
      ++bad_lines_;
    else if (!IsBlank(line)) {
      if (auto t = ParseLine(line))
        Insert(std::move(*t));
      else
        ++bad_lines_;
    }
    line.clear();
    too_long = false;
  };
  uint64_t pos = offset;
  for (;;) {
    ssize_t n = ::pread(fd, chunk.data(), chunk.size(), static_cast<off_t>(pos));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("read " + path_, errno);
    if (n == 0) break;
    std::string_view data(chunk.data(), static_cast<size_t>(n));
    pos += static_cast<uint64_t>(n);
    for (size_t nl; (nl = data.find('\n')) != std::string_view::npos; data.remove_prefix(nl + 1)) {
      if (!too_long) line.append(data.substr(0, nl));
      take();
      loaded_bytes_ = pos - data.size() + nl + 1;
    }
    if (!too_long) line.append(data);
    if (line.size() > kMaxLine) {
      line.clear();
      too_long = true;
    }
  }
  if (to_end && (too_long || !line.empty())) {
    take();
    loaded_bytes_ = pos;
    *unterminated = true;
  }
  return Status::OK();
}

void GraphStore::Insert(Triplet t) {
  std::string s = NameKey(t.subject), o = NameKey(t.object);
  if (!edge_keys_.insert(EdgeKey(s, t.predicate, o)).second)
    return;  // the first line of an edge wins
  const size_t i = edges_.size();
  by_entity_[s].push_back(i);
  if (o != s) by_entity_[o].push_back(i);
  edges_.push_back(std::move(t));
  edge_ends_.emplace_back(std::move(s), std::move(o));
}

Result<size_t> GraphStore::Add(const std::vector<Triplet>& triplets) {
  for (const Triplet& t : triplets)
    if (std::string why = Problem(t); !why.empty())
      return Status::InvalidArgument("triplet " + JsonQuote(t.subject) + " " + JsonQuote(t.predicate) +
                                     " " + JsonQuote(t.object) + " " + JsonQuote(t.date) + ": " + why);
  if (triplets.empty()) return size_t{0};

  auto lock = LockNamedFile(env_, path_);  // creates the file
  if (!lock.ok()) return lock.status();
  Fd fd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoStatus("open " + path_, errno);
  // What other writers appended since; all of it when the file was replaced.
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus("stat " + path_, errno);
  if (st.st_dev != file_dev_ || st.st_ino != file_ino_ ||
      static_cast<uint64_t>(st.st_size) < loaded_bytes_)
    Reset();
  bool unterminated = false;
  LIMBIC_RETURN_IF_ERROR(ReadFrom(fd.get(), loaded_bytes_, true, &unterminated));

  std::string out = unterminated ? "\n" : "";
  size_t added = 0;
  std::unordered_set<std::string> batch;
  for (const Triplet& t : triplets) {
    std::string key = EdgeKey(NameKey(t.subject), t.predicate, NameKey(t.object));
    if (edge_keys_.count(key) || !batch.insert(std::move(key)).second) continue;
    out += EdgeLine(t);
    ++added;
  }
  if (added == 0) return added;
  auto file = env_->NewAppendableFile(path_);
  if (!file.ok()) return file.status();
  Status wrote = (*file)->Append(out);
  if (Status closed = (*file)->Close(); wrote.ok()) wrote = closed;
  // A torn append is ended by the next writer, as after a crash.
  LIMBIC_RETURN_IF_ERROR(wrote);
  // Our own lines come back through the reader, as written.
  LIMBIC_RETURN_IF_ERROR(ReadFrom(fd.get(), loaded_bytes_, true, &unterminated));
  return added;
}

bool GraphStore::HasEntity(std::string_view name) const {
  return by_entity_.count(NameKey(name)) > 0;
}

bool GraphStore::HasEdge(std::string_view subject, std::string_view predicate,
                         std::string_view object) const {
  return edge_keys_.count(EdgeKey(NameKey(subject), predicate, NameKey(object))) > 0;
}

const std::string& GraphStore::NameOf(const std::string& key) const {
  size_t i = by_entity_.at(key).front();
  return edge_ends_[i].first == key ? edges_[i].subject : edges_[i].object;
}

Result<json> GraphStore::Neighbors(std::string_view name, int hops) const {
  if (hops < 1 || hops > kMaxHops)
    return Status::InvalidArgument("hops must be 1.." + std::to_string(kMaxHops) + ", got " +
                                   std::to_string(hops));
  const std::string start = NameKey(name);
  if (!by_entity_.count(start))
    return Status::NotFound("entity " + JsonQuote(name) + " is not in the graph");
  json neighbors = json::array();
  std::unordered_set<std::string> seen = {start};
  std::vector<std::string> frontier = {start};
  for (int d = 1; d <= hops && !frontier.empty(); ++d) {
    std::vector<std::string> next;
    for (const std::string& key : frontier) {
      for (size_t i : by_entity_.at(key)) {
        bool forward = edge_ends_[i].first == key;
        const std::string& other = forward ? edge_ends_[i].second : edge_ends_[i].first;
        if (!seen.insert(other).second) continue;
        neighbors.push_back({{"entity", forward ? edges_[i].object : edges_[i].subject},
                             {"hops", d},
                             {"edge", EdgeJson(edges_[i])}});
        next.push_back(other);
      }
    }
    frontier = std::move(next);
  }
  return json{{"entity", NameOf(start)}, {"hops", hops}, {"neighbors", std::move(neighbors)}};
}

Result<json> GraphStore::Path(std::string_view from, std::string_view to) const {
  const std::string a = NameKey(from), b = NameKey(to);
  for (auto [key, name] : {std::pair{&a, from}, std::pair{&b, to}})
    if (!by_entity_.count(*key))
      return Status::NotFound("entity " + JsonQuote(name) + " is not in the graph");
  // Breadth first from `a`; each entity remembers the edge it was reached by.
  std::unordered_map<std::string, size_t> via = {{a, SIZE_MAX}};
  std::deque<std::string> queue = {a};
  while (!queue.empty() && !via.count(b)) {
    std::string key = std::move(queue.front());
    queue.pop_front();
    for (size_t i : by_entity_.at(key)) {
      const std::string& other =
          edge_ends_[i].first == key ? edge_ends_[i].second : edge_ends_[i].first;
      if (via.emplace(other, i).second) queue.push_back(other);
    }
  }
  if (!via.count(b))
    return Status::NotFound("no path between " + JsonQuote(from) + " and " + JsonQuote(to) +
                            " in the graph");
  json path = json::array();
  for (std::string key = b; key != a;) {
    size_t i = via.at(key);
    path.insert(path.begin(), EdgeJson(edges_[i]));
    key = edge_ends_[i].first == key ? edge_ends_[i].second : edge_ends_[i].first;
  }
  return json{
      {"from", NameOf(a)}, {"to", NameOf(b)}, {"hops", path.size()}, {"path", std::move(path)}};
}

}  // namespace limbic::world

// `limbic memory ingest` beside a running `limbic run` (cli.h,
// IngestThroughApi). The command line's user has the files, so it reads
// them itself, with the listing and reading a local ingest uses
// (memory/ingest.h, unrestricted but for memory.ingest_max_bytes), and
// sends their content; the runtime does the rest (text, chunks, vectors,
// ids) as it would for a local ingest, so the result is the same.
#include <filesystem>
#include <map>

#include "base/base64.h"
#include "base/json.h"
#include "base/sha256.h"
#include "memory/ingest.h"
#include "runtime/cli/cli.h"
#include "runtime/mcp/api_client.h"

namespace limbic::runtime {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// What one request may carry besides its files' entries, and each entry
// besides its name and content: the JSON around them.
constexpr size_t kRequestOverhead = 1024;
constexpr size_t kEntryOverhead = 64;
// api.body_limit's default, when the runtime's api.json does not say.
constexpr size_t kDefaultBodyLimit = size_t{1} << 20;
// An ingest request may extract the text of large PDFs: give it time.
constexpr int kIngestTimeoutMs = 10 * 60 * 1000;

// `text` with a leading `name` written as `local` (an error the runtime
// gave about the name it was sent).
std::string AsLocal(std::string text, const std::string& name, const std::string& local) {
  if (size_t at = text.find(name); at != std::string::npos) text.replace(at, name.size(), local);
  return text;
}

// The requests of one ingest, filled file by file and sent when full.
class Sender {
 public:
  Sender(const CliContext& ctx, const std::string& episode_id, const Status& busy, json* answer)
      : ctx_(ctx), episode_id_(episode_id), busy_(busy), answer_(*answer) {
    const size_t limit = RunningApiBodyLimit(ctx.state_dir);
    limit_ = limit > kRequestOverhead * 2 ? limit : kDefaultBodyLimit;
  }

  // Adds the file read from `local` (its bytes `raw`); sends the requests
  // before it when it does not fit beside them.
  Status Add(const std::string& local, std::string raw) {
    const std::string name = fs::absolute(local).lexically_normal().string();
    local_of_[name] = local;
    json entry = {{"name", name}};
    size_t size = 2 * name.size() + kEntryOverhead;
    if (kRequestOverhead + size + Base64Size(raw.size()) > limit_) {
      // Too big for any request: kept where the runtime keeps originals
      // (KeepRaw writes it once, crash-safely; the runtime reads it back
      // and checks its hash), and named by its SHA-256.
      memory::LoadedFile kept;
      kept.path = local;
      kept.ext = memory::IngestExtension(local);
      kept.sha256 = Sha256::Hex(raw);
      kept.raw = std::move(raw);
      auto where = memory::KeepRaw(ctx_.state_dir + "/memory/raw", kept);
      if (!where.ok()) return where.status().WithContext(local);
      entry["sha256"] = kept.sha256;
      size += 64;
    } else {
      size += Base64Size(raw.size());
      entry["content"] = Base64Encode(raw);
    }
    if (batch_bytes_ + size > limit_) LIMBIC_RETURN_IF_ERROR(Send());
    batch_.push_back(std::move(entry));
    batch_bytes_ += size;
    return Status::OK();
  }

  // Sends what is left.
  Status Send() {
    if (batch_.empty()) return Status::OK();
    json body = {{"files", std::move(batch_)}};
    if (!episode_id_.empty()) body["episode_id"] = episode_id_;
    batch_ = json::array();
    batch_bytes_ = kRequestOverhead;
    auto reply =
        ForwardRequest(ctx_, "ingest", body, busy_, kIngestTimeoutMs);
    if (!reply.ok()) return reply.status();
    // The runtime's answer speaks of the names it was sent: the local paths again.
    for (const char* list : {"files", "errors", "skipped"}) {
      if (!(*reply)[list].is_array()) continue;
      for (json& item : (*reply)[list]) {
        const std::string name = item.value("path", "");
        auto local = local_of_.find(name);
        if (local == local_of_.end()) continue;
        item["path"] = local->second;
        if (item.contains("error") && item["error"].is_string())
          item["error"] = AsLocal(item["error"].get<std::string>(), name, local->second);
        answer_[list].push_back(std::move(item));
      }
    }
    if ((*reply)["seq"].is_number_unsigned()) answer_["seq"] = (*reply)["seq"];
    if ((*reply)["events_written"].is_number_unsigned())
      answer_["events_written"] =
          answer_.value("events_written", uint64_t{0}) + (*reply)["events_written"].get<uint64_t>();
    return Status::OK();
  }

 private:
  const CliContext& ctx_;
  const std::string& episode_id_;
  const Status& busy_;
  json& answer_;
  size_t limit_;
  json batch_ = json::array();
  size_t batch_bytes_ = kRequestOverhead;
  std::map<std::string, std::string> local_of_;  // the name sent -> the path listed
};

}  // namespace

Result<json> IngestThroughApi(const CliContext& ctx, const std::string& path,
                              const std::string& episode_id, uint64_t max_bytes,
                              const Status& busy) {
  memory::IngestScope scope;
  scope.max_bytes = max_bytes;
  std::vector<std::string> files;
  std::vector<memory::SkippedFile> skipped;
  LIMBIC_RETURN_IF_ERROR(memory::ListIngestable(path, &files, &skipped, scope));
  const bool single = !fs::is_directory(path);
  json answer = {{"files", json::array()}, {"skipped", json::array()}, {"errors", json::array()}};
  for (const memory::SkippedFile& s : skipped)
    answer["skipped"].push_back({{"path", s.path}, {"reason", s.reason}});
  Sender sender(ctx, episode_id, busy, &answer);
  for (const std::string& file : files) {
    auto raw = memory::ReadIngestFile(file, scope);
    Status fits = raw.ok() ? Status::OK() : raw.status();
    if (fits.ok() && !IsValidUtf8(fs::absolute(file).string()))
      fits = Status::InvalidArgument(file +
                                     ": its path is not UTF-8, which the API cannot carry; stop "
                                     "`limbic run` and ingest it locally");
    if (!fits.ok()) {
      if (single) return fits;
      answer["errors"].push_back({{"path", file}, {"error", fits.ToString()}});
      continue;
    }
    LIMBIC_RETURN_IF_ERROR(sender.Add(file, std::move(*raw)));
  }
  LIMBIC_RETURN_IF_ERROR(sender.Send());
  // One file named: its failure is the command's, as a local ingest's is.
  if (single && answer["files"].empty() && !answer["errors"].empty()) {
    std::string error = answer["errors"][0].value("error", std::string());
    if (size_t code = error.find(": "); code != std::string::npos) error.erase(0, code + 2);
    return Status::InvalidArgument(error);
  }
  return answer;
}

}  // namespace limbic::runtime

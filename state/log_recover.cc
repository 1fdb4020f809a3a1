// EventLog recovery: the scan of every segment at Open, seals, the torn
// tail (the rules are in event_log.h's header comment).
#include "state/log_impl.h"

namespace limbic::state {

// Checks one segment, decoding each line after the first `sealed` bytes
// against the expected seq and the previous ts; the sealed prefix (0 bytes
// when there is no seal) is only hashed, and *prefix_ok says whether it
// hashed to `seal_sha` and ended on a line boundary (when not, nothing else
// was checked: the caller decides what a changed segment means). Every
// complete line must decode; only bytes after the last '\n' of the last
// segment (a final line without its newline) are a torn write, truncated
// when `repair` (and the log is writable). *sha receives the hash of the
// bytes kept.
Status EventLog::Impl::ScanSegment(const Segment& seg, bool last, uint64_t sealed,
                                   const std::string& seal_sha, uint64_t* expected,
                                   LogRecovery* rec, Sha256* sha, bool* prefix_ok, bool repair) {
  Env* env = options_.env;
  *prefix_ok = true;
  auto file = env->NewSequentialFile(seg.path);
  if (!file.ok()) return file.status();
  auto where = [&](uint64_t off) { return seg.path + " offset " + std::to_string(off); };
  std::string buf, chunk;
  uint64_t base = 0;  // file offset of buf[0]
  bool eof = false;
  bool prefix_checked = sealed == 0;
  auto check_prefix = [&](uint64_t at) {
    prefix_checked = true;
    *prefix_ok = at == sealed && sha->PeekHexDigest() == seal_sha;
    return *prefix_ok;
  };
  for (;;) {
    size_t pos = 0;
    for (size_t nl; (nl = buf.find('\n', pos)) != std::string::npos; pos = nl + 1) {
      std::string_view line(buf.data() + pos, nl - pos);
      std::string_view with_nl(line.data(), line.size() + 1);
      uint64_t off = base + pos;
      if (off < sealed) {  // covered by the seal: hash only
        sha->Update(with_nl);
        continue;
      }
      if (!prefix_checked && !check_prefix(off)) return Status::OK();
      // A line that ends in '\n' was written whole: if it does not decode it
      // was damaged afterwards, and only a human may decide what it held.
      auto e = DecodeEvent(line);
      if (!e.ok())
        return Status::Corruption(where(off) +
                                  ": a damaged event (a complete line that does not "
                                  "decode: " +
                                  e.status().message() +
                                  "), not a torn write: nothing was changed");
      if (e->seq != *expected)
        return Status::Corruption(where(off) + ": seq " + std::to_string(e->seq) + " follows seq " +
                                  std::to_string(*expected - 1));
      if (e->ts < rec->last_ts)
        return Status::Corruption(where(off) + ": ts " + FormatTime(e->ts) + " of seq " +
                                  std::to_string(e->seq) + " is before the previous event's " +
                                  FormatTime(rec->last_ts));
      ++*expected;
      rec->last_ts = e->ts;
      if (rec->first_seq == 0) rec->first_seq = e->seq;
      sha->Update(with_nl);
    }
    buf.erase(0, pos);
    base += pos;
    if (eof) break;
    LIMBIC_RETURN_IF_ERROR((*file)->Read(1 << 20, &chunk));
    if (chunk.empty()) eof = true;
    buf += chunk;
  }
  if (!prefix_checked && !check_prefix(base)) return Status::OK();
  rec->bytes += base + buf.size();
  // What is left has no '\n': a final line whose write was cut short.
  const uint64_t torn_at = base;
  const uint64_t torn_bytes = buf.size();
  if (torn_bytes == 0) return Status::OK();
  if (!last)
    return Status::Corruption(where(base) + ": incomplete line at the end of a segment that is "
                              "followed by another");
  rec->truncated_bytes = torn_bytes;
  rec->truncated_file = seg.path;
  rec->truncated_offset = torn_at;
  if (options_.read_only || !repair) return Status::OK();
  options_.logger->warn("events log: truncating a torn final line in {} at offset {} ({} bytes)",
                        seg.path, torn_at, torn_bytes);
  LIMBIC_RETURN_IF_ERROR(env->TruncateFile(seg.path, torn_at));
  return Status::OK();
}

// One segment, through its seal when the seal still holds: the sealed
// prefix gives the seqs and the last ts it covers without decoding, and
// only what follows it is decoded. A closed segment without a seal is
// decoded in full and sealed for next time. A seal that no longer holds
// refuses the log, unless accept_changed_segments.
Status EventLog::Impl::RecoverSegment(const Segment& seg, bool last, uint64_t* expected,
                                      LogRecovery* rec, Sha256* sha) {
  if (seg.first_seq != *expected)
    return Status::Corruption(seg.path + " offset 0: segment name says first seq " +
                              std::to_string(seg.first_seq) + " but the log continues at seq " +
                              std::to_string(*expected));
  Env* env = options_.env;
  auto seal = ReadSeal(env, seg.path);
  std::string changed;  // why the seal no longer holds; empty when it does
  if (seal.ok() && (seal->first_seq != seg.first_seq || seal->last_seq + 1 < seal->first_seq)) {
    changed = "its seal " + SealFileName(seg.path) + " names seqs " +
              std::to_string(seal->first_seq) + "-" + std::to_string(seal->last_seq);
  } else if (seal.ok()) {
    LogRecovery trial = *rec;
    trial.last_ts = seal->last_ts;
    if (trial.first_seq == 0 && seal->last_seq >= seal->first_seq) trial.first_seq = seal->first_seq;
    uint64_t next = seal->last_seq + 1;
    Sha256 hashed;
    bool prefix_ok = false;
    LIMBIC_RETURN_IF_ERROR(ScanSegment(seg, last, seal->bytes, seal->sha256, &next, &trial, &hashed,
                                       &prefix_ok,
                                       /*repair=*/true));
    if (prefix_ok) {
      *expected = next;
      *rec = trial;
      *sha = std::move(hashed);
      return Status::OK();
    }
    auto size = env->GetFileSize(seg.path);
    changed =
        size.ok() && *size < seal->bytes
            ? "it is " + std::to_string(*size) + " bytes long, shorter than the " +
                  std::to_string(seal->bytes) + " its seal covers"
            : "those bytes no longer hash to the sha256 in its seal " + SealFileName(seg.path);
  } else if (!seal.status().IsNotFound()) {
    changed = seal.status().message();  // unreadable: written atomically, so damaged since
  }
  const uint64_t sealed_bytes = seal.ok() ? seal->bytes : 0;
  const bool refuse = !changed.empty() && !options_.accept_changed_segments;
  const uint64_t first = *expected;
  Sha256 full;
  bool unused = true;
  // A changed segment that is refused is still decoded, without repairing
  // anything, so that a damaged line is named by its offset.
  LogRecovery scratch = *rec;
  Status lines = ScanSegment(seg, last, 0, "", expected, refuse ? &scratch : rec, &full, &unused,
                             /*repair=*/!refuse);
  const std::string what = seg.path + " bytes 0-" + std::to_string(sealed_bytes) +
                           ": changed after it was sealed (" + changed + ")";
  if (refuse && !lines.ok()) return Status::Corruption(what + "; " + lines.message());
  if (refuse)
    return Status::Corruption(what +
                              ". Nothing was changed; `limbic fsck` lists every such "
                              "segment, and after a human decision `limbic fsck "
                              "--accept-changed-segments` takes the log as it now is");
  uint64_t bytes = 0;
  if (auto size = env->GetFileSize(seg.path); size.ok()) bytes = *size;
  if (!changed.empty()) {
    // Listed even when a line of it is damaged too, so that fsck names both.
    rec->changed_segments.push_back({seg.path, first, *expected - 1, sealed_bytes,
                                     seal.ok() ? seal->sha256 : std::string(), bytes,
                                     full.PeekHexDigest(), changed});
  }
  LIMBIC_RETURN_IF_ERROR(lines);
  if (changed.empty() && !last) {
    rec->unsealed_segments.push_back(seg.path);
  }
  // Decoded in full and good: seal it, so the next open only hashes it. The
  // last segment is sealed at the next clean close (or rotation) instead.
  if ((!last || !changed.empty()) && !options_.read_only) {
    Status s =
        WriteSeal(env, seg.path, {first, *expected - 1, bytes, rec->last_ts, full.PeekHexDigest()});
    if (!s.ok()) {
      if (!changed.empty()) return s.WithContext("resealing " + seg.path);
      options_.logger->warn("events log: could not seal {}: {}", seg.path, s.message());
    }
    if (!changed.empty())
      options_.logger->warn("events log: {} accepted as it now is and resealed ({})", seg.path,
                            changed);
  }
  *sha = std::move(full);
  return Status::OK();
}

Status EventLog::Impl::Recover(LogRecovery* rec) {
  *rec = LogRecovery{};
  Env* env = options_.env;
  if (!options_.read_only) LIMBIC_RETURN_IF_ERROR(env->CreateDirs(options_.dir));
  auto segments = ListSegments(env, options_.dir);
  if (!segments.ok()) return segments.status();
  rec->segments = segments->size();
  uint64_t expected = segments->empty() ? 1 : (*segments)[0].first_seq;
  if (expected != 1)
    return Status::Corruption((*segments)[0].path + " offset 0: the log starts at seq " +
                              std::to_string(expected) + ", not 1");
  for (size_t i = 0; i < segments->size(); ++i) {
    const bool last = i + 1 == segments->size();
    Sha256 sha;
    LIMBIC_RETURN_IF_ERROR(RecoverSegment((*segments)[i], last, &expected, rec, &sha));
    if (last) seg_sha_ = std::move(sha);
  }
  rec->last_seq = expected - 1;
  last_ts_ = rec->last_ts;
  submitted_seq_ = written_seq_ = synced_seq_ = unsynced_through_ = returned_seq_ = rec->last_seq;
  if (options_.read_only) return Status::OK();
  if (!segments->empty()) {
    // Keep appending to the last segment.
    auto file = env->NewAppendableFile(segments->back().path);
    if (!file.ok()) return file.status();
    file_ = std::move(file).value();
    seg_path_ = segments->back().path;
    seg_first_seq_ = segments->back().first_seq;
    if (rec->truncated_bytes > 0) LIMBIC_RETURN_IF_ERROR(file_->Sync());
  }
  started_ = true;
  writer_ = std::thread([this] { WriterLoop(); });
  return Status::OK();
}

}  // namespace limbic::state

// The ids file of a saved VectorIndex. Grammar (integers and floats
// little-endian):
//
//   ids_file := header entry{count} checksum
//   header   := "LMVI" u32:format (= 1) u32:dims u8:mode u64:slots u64:count
//               u64:graph_bytes u64:graph_checksum
//   mode     := 0   exact: there is no graph file; each entry carries its vector
//             | 1   graph: <path> is hnswlib's saveIndex output, graph_bytes
//                   long, with ChecksumFile graph_checksum; the vectors are
//                   read back from it
//   entry    := u32:id_length byte{id_length}:id u64:version u32:slot vector?
//   vector   := f32{dims}                    (mode 0 only)
//   checksum := u64: Checksum of every byte before it
//
// A slot is the entry's row in the index and its label in the graph; slots
// below `slots` that no entry names are free. The graph's size and checksum
// live here so that a pair from two different Saves (a crash between the
// two renames) or a damaged graph is Corruption before hnswlib, which
// trusts its input, reads a byte of it.
#include "memory/vector_index_file.h"

#include <bit>
#include <cstring>
#include <unordered_set>

namespace limbic::memory {

static_assert(std::endian::native == std::endian::little,
              "the ids file and hnswlib's graph are written in native (little-endian) order");

namespace {

constexpr char kMagic[4] = {'L', 'M', 'V', 'I'};
constexpr uint32_t kFormat = 1;
constexpr size_t kHeaderBytes = 4 + 4 + 4 + 1 + 8 * 4;
constexpr size_t kMinEntryBytes = 4 + 8 + 4;
// Checksum works on blocks of this size so that a file hashed block by
// block as it is read gives the same value as the bytes hashed at once.
constexpr size_t kBlock = 1 << 20;

constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;

uint64_t Mix(uint64_t x) {
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return x;
}

// Four independent lanes over 8-byte words keep the multiplier busy; each
// step is a bijection of the lane, so one damaged word always changes it.
uint64_t HashBlock(uint64_t seed, const char* p, size_t n) {
  uint64_t lane[4] = {seed ^ 0x243F6A8885A308D3ull, seed + kMul, seed ^ 0x13198A2E03707344ull, ~seed};
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int j = 0; j < 4; ++j) {
      uint64_t w;
      std::memcpy(&w, p + i + 8 * j, 8);
      lane[j] = (lane[j] ^ w) * kMul;
      lane[j] ^= lane[j] >> 29;
    }
  }
  for (int j = 0; i < n; ++j, i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, p + i, std::min<size_t>(8, n - i));
    lane[j] = (lane[j] ^ w) * kMul;
  }
  return Mix(lane[0] ^ Mix(lane[1] ^ Mix(lane[2] ^ Mix(lane[3] ^ n))));
}

template <typename T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof v);
}

// Reads fixed-size fields front to back; any read past the end fails.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  template <typename T>
  bool Get(T* v) {
    if (in_.size() < sizeof(T)) return false;
    std::memcpy(v, in_.data(), sizeof(T));
    in_.remove_prefix(sizeof(T));
    return true;
  }
  bool Bytes(size_t n, std::string_view* out) {
    if (in_.size() < n) return false;
    *out = in_.substr(0, n);
    in_.remove_prefix(n);
    return true;
  }
  size_t left() const { return in_.size(); }

 private:
  std::string_view in_;
};

}  // namespace

uint64_t Checksum(std::string_view bytes) {
  uint64_t h = 0;
  for (size_t at = 0; at < bytes.size(); at += kBlock)
    h = HashBlock(h, bytes.data() + at, std::min(kBlock, bytes.size() - at));
  return Mix(h ^ bytes.size());
}

Result<FileSum> ChecksumFile(Env* env, const std::string& path) {
  auto file = env->NewSequentialFile(path);
  if (!file.ok()) return file.status();
  FileSum sum;
  uint64_t h = 0;
  std::string block, chunk;
  for (bool eof = false; !eof;) {
    block.clear();
    // Read may return less than asked: fill whole blocks, as Checksum sees them.
    while (block.size() < kBlock) {
      LIMBIC_RETURN_IF_ERROR((*file)->Read(kBlock - block.size(), &chunk));
      if (chunk.empty()) {
        eof = true;
        break;
      }
      block += chunk;
    }
    if (!block.empty()) h = HashBlock(h, block.data(), block.size());
    sum.bytes += block.size();
  }
  sum.checksum = Mix(h ^ sum.bytes);
  return sum;
}

std::string EncodeIdsFile(const IdsFile& file) {
  std::string out;
  size_t id_bytes = 0;
  for (const IdsFileEntry& e : file.entries) id_bytes += e.id.size();
  out.reserve(kHeaderBytes + file.entries.size() * kMinEntryBytes + id_bytes +
              file.vectors.size() * 4 + 8);
  out.append(kMagic, 4);
  Put<uint32_t>(&out, kFormat);
  Put<uint32_t>(&out, file.dims);
  Put<uint8_t>(&out, file.has_graph ? 1 : 0);
  Put<uint64_t>(&out, file.slots);
  Put<uint64_t>(&out, file.entries.size());
  Put<uint64_t>(&out, file.graph_bytes);
  Put<uint64_t>(&out, file.graph_checksum);
  for (size_t i = 0; i < file.entries.size(); ++i) {
    const IdsFileEntry& e = file.entries[i];
    Put<uint32_t>(&out, static_cast<uint32_t>(e.id.size()));
    out += e.id;
    Put<uint64_t>(&out, e.version);
    Put<uint32_t>(&out, e.slot);
    if (!file.has_graph)
      out.append(reinterpret_cast<const char*>(file.vectors.data() + i * file.dims), file.dims * 4);
  }
  Put<uint64_t>(&out, Checksum(out));
  return out;
}

Result<IdsFile> DecodeIdsFile(std::string_view bytes) {
  if (bytes.size() < kHeaderBytes + 8) return Status::Corruption("ids file: truncated header");
  uint64_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - 8, 8);
  bytes.remove_suffix(8);
  if (Checksum(bytes) != stored) return Status::Corruption("ids file: checksum mismatch");

  Reader in(bytes);
  std::string_view magic;
  uint32_t format = 0;
  uint8_t mode = 0;
  uint64_t count = 0;
  IdsFile file;
  (void)in.Bytes(4, &magic);
  if (magic != std::string_view(kMagic, 4)) return Status::Corruption("ids file: bad magic");
  (void)in.Get(&format);
  if (format != kFormat)
    return Status::Corruption("ids file: unsupported format " + std::to_string(format));
  (void)(in.Get(&file.dims) && in.Get(&mode) && in.Get(&file.slots) && in.Get(&count) &&
         in.Get(&file.graph_bytes) && in.Get(&file.graph_checksum));
  if (mode > 1) return Status::Corruption("ids file: unknown mode " + std::to_string(mode));
  file.has_graph = mode == 1;
  const size_t entry_min = kMinEntryBytes + (file.has_graph ? 0 : file.dims * 4);
  if (count > in.left() / entry_min || file.slots > UINT32_MAX || count > file.slots)
    return Status::Corruption("ids file: " + std::to_string(count) + " entries in " +
                              std::to_string(file.slots) + " slots do not fit the file");

  file.entries.resize(count);
  if (!file.has_graph) file.vectors.resize(count * file.dims);
  std::vector<bool> slot_used(file.slots);
  std::unordered_set<std::string_view> ids;
  for (size_t i = 0; i < count; ++i) {
    IdsFileEntry& e = file.entries[i];
    uint32_t len;
    std::string_view id, vec;
    if (!(in.Get(&len) && in.Bytes(len, &id) && in.Get(&e.version) && in.Get(&e.slot) &&
          (file.has_graph || in.Bytes(file.dims * 4, &vec))))
      return Status::Corruption("ids file: entry " + std::to_string(i) + " is truncated");
    if (e.slot >= file.slots || slot_used[e.slot])
      return Status::Corruption("ids file: entry " + std::to_string(i) + " has a bad slot");
    if (!ids.insert(id).second)
      return Status::Corruption("ids file: id " + std::string(id) + " is repeated");
    slot_used[e.slot] = true;
    e.id = id;
    if (!vec.empty()) std::memcpy(file.vectors.data() + i * file.dims, vec.data(), vec.size());
  }
  if (in.left() != 0) return Status::Corruption("ids file: trailing bytes after the entries");
  return file;
}

}  // namespace limbic::memory

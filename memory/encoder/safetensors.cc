#include "memory/encoder/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

namespace limbic::memory::encoder {
namespace {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; this reader copies it as is");

using json = nlohmann::json;

// Every dtype of the format, with its size in bytes: a header may hold any
// of them (old HF checkpoints carry an I64 embeddings.position_ids buffer
// beside the weights), and each is checked against its byte range; Floats
// then reads only the float ones.
struct DtypeSize {
  const char* name;
  uint64_t bytes;
};
constexpr DtypeSize kDtypes[] = {
    {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"F64", 8},    {"I64", 8},     {"U64", 8},
    {"I32", 4}, {"U32", 4}, {"I16", 2},  {"U16", 2},    {"I8", 1},      {"U8", 1},
    {"BOOL", 1}, {"F8_E5M2", 1}, {"F8_E4M3", 1},
};

uint64_t DtypeBytes(const std::string& dtype) {
  for (const auto& d : kDtypes)
    if (dtype == d.name) return d.bytes;
  return 0;
}

bool IsFloat(const std::string& dtype) {
  return dtype == "F32" || dtype == "F16" || dtype == "BF16";
}

std::string ShapeString(std::span<const uint64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// What the header's bytes say before nlohmann's recursive parser sees them:
// nesting deeper than kMaxDepth (the deepest legal header is object >
// tensor > shape) and NUL bytes (nlohmann takes one as the end of the text,
// so "{}\0junk" would parse) are refused. Empty when the scan passes.
constexpr int kMaxDepth = 4;
std::string ScanHeader(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\0') return "header holds a NUL byte at " + std::to_string(i);
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return "header nests deeper than 4";
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return "";
}

Status Bad(const std::string& path, const std::string& what) {
  return Status::InvalidArgument(path + ": " + what);
}

// One tensor's entry; `name` only for messages.
Result<TensorInfo> ParseTensor(const std::string& name, const json& v, uint64_t data_bytes,
                               const std::string& path) {
  auto bad = [&](const std::string& what) { return Bad(path, "tensor " + name + ": " + what); };
  if (!v.is_object()) return bad("not an object");
  auto dtype = v.find("dtype"), shape = v.find("shape"), offsets = v.find("data_offsets");
  if (dtype == v.end() || shape == v.end() || offsets == v.end())
    return bad("needs dtype, shape and data_offsets");
  if (!dtype->is_string()) return bad("dtype is not a string");
  TensorInfo t;
  t.dtype = dtype->get<std::string>();
  uint64_t elem = DtypeBytes(t.dtype);
  if (elem == 0) return bad("unknown dtype " + t.dtype);
  if (!shape->is_array()) return bad("shape is not an array");
  uint64_t count = 1;
  for (const auto& d : *shape) {
    if (!d.is_number_unsigned()) return bad("shape holds a value that is not a u64");
    uint64_t n = d.get<uint64_t>();
    if (n != 0 && count > std::numeric_limits<uint64_t>::max() / n)
      return bad("shape " + shape->dump() + " overflows");
    count *= n;
    t.shape.push_back(n);
  }
  if (count > std::numeric_limits<uint64_t>::max() / elem)
    return bad("shape " + ShapeString(t.shape) + " overflows");
  if (!offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
      !(*offsets)[1].is_number_unsigned())
    return bad("data_offsets is not [u64, u64]");
  t.begin = (*offsets)[0].get<uint64_t>();
  t.end = (*offsets)[1].get<uint64_t>();
  std::string range = "data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "]";
  if (t.end < t.begin) return bad(range + " are reversed");
  if (t.end > data_bytes)
    return bad(range + " run past the data section's " + std::to_string(data_bytes) +
               " bytes (truncated file?)");
  if (t.end - t.begin != count * elem)
    return bad(range + " hold " + std::to_string(t.end - t.begin) + " bytes but " + t.dtype +
               " " + ShapeString(t.shape) + " needs " + std::to_string(count * elem));
  return t;
}

float HalfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);  // inf, nan
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else {  // subnormal: normalise the mantissa
    int e = 113;
    while (!(man & 0x400)) {
      man <<= 1;
      --e;
    }
    bits = sign | (uint32_t(e) << 23) | ((man & 0x3ff) << 13);
  }
  return std::bit_cast<float>(bits);
}

}  // namespace

Result<std::map<std::string, TensorInfo>> SafeTensors::ParseHeader(std::string_view header,
                                                                   uint64_t data_bytes,
                                                                   const std::string& path) {
  if (std::string why = ScanHeader(header); !why.empty()) return Bad(path, why);
  json doc = json::parse(header, nullptr, false);
  if (doc.is_discarded()) return Bad(path, "header is not JSON");
  if (!doc.is_object()) return Bad(path, "header is not a JSON object");
  std::map<std::string, TensorInfo> tensors;
  for (const auto& [name, v] : doc.items()) {
    if (name == "__metadata__") {
      if (!v.is_object()) return Bad(path, "__metadata__ is not an object");
      for (const auto& [key, value] : v.items())
        if (!value.is_string()) return Bad(path, "__metadata__ " + key + " is not a string");
      continue;
    }
    auto t = ParseTensor(name, v, data_bytes, path);
    if (!t.ok()) return t.status();
    tensors.emplace(name, std::move(*t));
  }
  // Overlaps: sorted by begin, each non-empty range must start at or after
  // the end of the one before.
  std::vector<std::pair<const std::string*, const TensorInfo*>> order;
  for (const auto& [name, t] : tensors)
    if (t.end > t.begin) order.emplace_back(&name, &t);
  std::sort(order.begin(), order.end(),
            [](const auto& a, const auto& b) { return a.second->begin < b.second->begin; });
  for (size_t i = 1; i < order.size(); ++i)
    if (order[i].second->begin < order[i - 1].second->end)
      return Bad(path, "tensor " + *order[i].first + " overlaps tensor " + *order[i - 1].first);
  return tensors;
}

Result<std::unique_ptr<SafeTensors>> SafeTensors::Open(const std::string& path) {
  // O_NONBLOCK: a FIFO opens at once (and is refused below) rather than
  // waiting for a writer; it changes nothing for a regular file.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int e = errno;
    std::string why = path + ": " + std::strerror(e);
    return e == ENOENT ? Status::NotFound(why) : Status::IOError(why);
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    std::string why = path + ": " + std::strerror(errno);
    ::close(fd);
    return Status::IOError(why);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Bad(path, "not a regular file");
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size < 8) {
    ::close(fd);
    return Bad(path, std::to_string(size) + " bytes, shorter than the 8-byte header length");
  }
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);  // the mapping keeps the file
  if (map == MAP_FAILED) return Status::IOError(path + ": mmap: " + std::strerror(errno));
  std::unique_ptr<SafeTensors> st_file(new SafeTensors());
  st_file->path_ = path;
  st_file->map_ = static_cast<const uint8_t*>(map);
  st_file->map_bytes_ = size;

  uint64_t n = 0;
  std::memcpy(&n, st_file->map_, 8);
  if (n < 2 || n > kMaxHeaderBytes)
    return Bad(path, "header length " + std::to_string(n) + " is outside [2, " +
                         std::to_string(kMaxHeaderBytes) + "]");
  if (n > size - 8)
    return Bad(path, "truncated: the header says " + std::to_string(n) + " bytes, the file has " +
                         std::to_string(size - 8) + " after the length");
  std::string_view header(reinterpret_cast<const char*>(st_file->map_ + 8), n);
  auto tensors = ParseHeader(header, size - 8 - n, path);
  if (!tensors.ok()) return tensors.status();
  st_file->tensors_ = std::move(*tensors);
  st_file->data_ = st_file->map_ + 8 + n;
  return st_file;
}

SafeTensors::~SafeTensors() {
  if (map_) ::munmap(const_cast<uint8_t*>(map_), map_bytes_);
}

bool SafeTensors::Mapped(const std::string& name) const {
  auto it = tensors_.find(name);
  return it != tensors_.end() && it->second.dtype == "F32" &&
         reinterpret_cast<uintptr_t>(data_ + it->second.begin) % alignof(float) == 0;
}

Result<std::span<const float>> SafeTensors::Floats(const std::string& name,
                                                   std::span<const uint64_t> shape) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) return Status::NotFound(path_ + ": no tensor " + name);
  const TensorInfo& t = it->second;
  if (!std::equal(t.shape.begin(), t.shape.end(), shape.begin(), shape.end()))
    return Bad(path_, "tensor " + name + " has shape " + ShapeString(t.shape) + ", expected " +
                          ShapeString(shape));
  if (!IsFloat(t.dtype))
    return Bad(path_, "tensor " + name + " has dtype " + t.dtype +
                          "; only F32, F16 and BF16 are read");
  const uint8_t* src = data_ + t.begin;
  size_t count = (t.end - t.begin) / DtypeBytes(t.dtype);
  if (Mapped(name)) return std::span<const float>(reinterpret_cast<const float*>(src), count);

  std::lock_guard<std::mutex> lock(mu_);
  auto& out = converted_[name];
  if (out.size() != count) {  // a 0-element tensor converts to nothing, again and again
    out.resize(count);
    if (t.dtype == "F32") {
      std::memcpy(out.data(), src, 4 * count);  // unaligned in the mapping
    } else {
      const bool half = t.dtype == "F16";
      for (size_t i = 0; i < count; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        out[i] = half ? HalfToFloat(h) : std::bit_cast<float>(uint32_t(h) << 16);
      }
    }
  }
  return std::span<const float>(out);
}

}  // namespace limbic::memory::encoder

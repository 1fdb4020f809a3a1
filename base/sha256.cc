#include "base/sha256.h"

#include <openssl/evp.h>

#include <cstdlib>

namespace limbic {

struct Sha256::Ctx {
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  ~Ctx() { EVP_MD_CTX_free(md); }
  void Init() {
    // Only fails when OpenSSL cannot allocate: nothing sensible to do.
    if (!md || EVP_DigestInit_ex(md, EVP_sha256(), nullptr) != 1) std::abort();
  }
};

Sha256::Sha256() : ctx_(std::make_unique<Ctx>()) { ctx_->Init(); }
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::Update(std::string_view data) {
  if (!data.empty()) EVP_DigestUpdate(ctx_->md, data.data(), data.size());
}

std::string Sha256::HexDigest() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx_->md, md, &len);
  ctx_->Init();
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  hex.reserve(len * 2);
  for (unsigned i = 0; i < len; ++i) {
    hex.push_back(kHex[md[i] >> 4]);
    hex.push_back(kHex[md[i] & 15]);
  }
  return hex;
}

std::string Sha256::PeekHexDigest() const {
  Sha256 copy;
  if (EVP_MD_CTX_copy_ex(copy.ctx_->md, ctx_->md) != 1) std::abort();
  return copy.HexDigest();
}

std::string Sha256::Hex(std::string_view data) {
  Sha256 h;
  h.Update(data);
  return h.HexDigest();
}

}  // namespace limbic

// SHA-256 (OpenSSL EVP), incrementally or in one call; hex output.
//
// Used for the state digest, the seals of closed log segments, and later
// content hashes. Thread-safety: a Sha256 object belongs to one thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace limbic {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;

  void Update(std::string_view data);
  // The digest of everything given so far, as 64 lowercase hex digits. The
  // object starts over afterwards.
  std::string HexDigest();
  // The same, leaving the object as it was (more data may follow).
  std::string PeekHexDigest() const;

  // Shorthand: the hex digest of `data`.
  static std::string Hex(std::string_view data);

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

}  // namespace limbic

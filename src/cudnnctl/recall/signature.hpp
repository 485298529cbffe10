// SPDX-License-Identifier: Apache-2.0
// Ed25519 public keys from PEM and verification of raw signatures through OpenSSL EVP
// (EVP_DigestVerify with a NULL digest: Ed25519 signs the message itself, not a hash).
#pragma once

#include "core/result.hpp"

#include <memory>
#include <string>
#include <string_view>

struct evp_pkey_st; // EVP_PKEY, forward-declared so only signature.cpp sees OpenSSL

namespace cudnnctl::recall {

// --- Interface ---

inline constexpr size_t k_ed25519_signature_size = 64;

class PublicKey {
public:
  // Parses one PEM public key ("-----BEGIN PUBLIC KEY-----", as `openssl pkey -pubout`
  // writes it). Not PEM, not a public key, or not Ed25519: ErrorCode::usage naming `name`.
  [[nodiscard]] static Result<PublicKey> from_pem(std::string_view pem, const std::string& name);

  // Whether `signature` (raw, 64 bytes) is this key's Ed25519 signature of exactly `data`.
  // false for a wrong signature or size; ErrorCode::internal when OpenSSL fails otherwise.
  [[nodiscard]] Result<bool> verify(std::string_view data, std::string_view signature) const;

  const std::string& name() const { return m_name; }

private:
  struct Deleter {
    void operator()(evp_pkey_st* key) const;
  };
  PublicKey(evp_pkey_st* key, std::string name) : m_key(key), m_name(std::move(name)) {}
  std::unique_ptr<evp_pkey_st, Deleter> m_key;
  std::string m_name;
};

} // namespace cudnnctl::recall

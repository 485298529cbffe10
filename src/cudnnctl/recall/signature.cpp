// SPDX-License-Identifier: Apache-2.0
#include "recall/signature.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

namespace cudnnctl::recall {

namespace {

struct BioDeleter {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

// The first queued OpenSSL error as text (and the queue cleared), for messages.
std::string openssl_error() {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) {
    return "no detail from OpenSSL";
  }
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

} // namespace

void PublicKey::Deleter::operator()(evp_pkey_st* key) const {
  EVP_PKEY_free(key);
}

Result<PublicKey> PublicKey::from_pem(std::string_view pem, const std::string& name) {
  if (pem.size() > static_cast<size_t>(INT32_MAX)) {
    return fail(ErrorCode::usage, name + ": too large for a key");
  }
  std::unique_ptr<BIO, BioDeleter> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) {
    return fail(ErrorCode::internal, "OpenSSL: BIO_new_mem_buf failed: " + openssl_error());
  }
  EVP_PKEY* key = PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr);
  if (!key) {
    return fail(ErrorCode::usage, name + ": not a PEM public key (" + openssl_error() +
                                      "); write one with: openssl pkey -in KEY.pem -pubout -out " +
                                      name);
  }
  PublicKey pk(key, name);
  if (EVP_PKEY_get_id(key) != EVP_PKEY_ED25519) {
    return fail(ErrorCode::usage,
                name + ": a " +
                    std::string(EVP_PKEY_get0_type_name(key) ? EVP_PKEY_get0_type_name(key)
                                                             : "non-Ed25519") +
                    " key, not Ed25519 (make one with: openssl genpkey "
                    "-algorithm ed25519)");
  }
  return pk;
}

Result<bool> PublicKey::verify(std::string_view data, std::string_view signature) const {
  if (signature.size() != k_ed25519_signature_size) {
    return false;
  }
  std::unique_ptr<EVP_MD_CTX, MdCtxDeleter> ctx(EVP_MD_CTX_new());
  if (!ctx) {
    return fail(ErrorCode::internal, "OpenSSL: EVP_MD_CTX_new failed: " + openssl_error());
  }
  // Ed25519 is a one-shot scheme: no digest (NULL), and EVP_DigestVerify, not Update/Final.
  if (EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, m_key.get()) != 1) {
    return fail(ErrorCode::internal,
                "OpenSSL: EVP_DigestVerifyInit failed for " + m_name + ": " + openssl_error());
  }
  int rc = EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                            signature.size(), reinterpret_cast<const unsigned char*>(data.data()),
                            data.size());
  if (rc == 1) {
    return true;
  }
  // 0: the signature does not match; a negative value is an error, which for a well-formed
  // key and a 64-byte signature means a malformed signature: both are "not valid".
  ERR_clear_error();
  return false;
}

} // namespace cudnnctl::recall

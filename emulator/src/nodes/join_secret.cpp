#include "omnilearn/emulator/join_secret.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace omnilearn::emulator {
namespace {

std::string hex(const unsigned char* data, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out.append({kDigits[data[i] >> 4], kDigits[data[i] & 15]});
  return out;
}

std::string hmac_hex(std::string_view secret, const std::string& message) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &len);
  return hex(mac, len);
}

}  // namespace

Result<std::string> random_challenge() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return Status::internal("no random bytes for the join challenge");
  return hex(bytes, sizeof bytes);
}

std::string join_proof(std::string_view secret, std::string_view challenge, int rank) {
  return hmac_hex(secret, std::string("join|").append(challenge).append("|").append(std::to_string(rank)));
}

std::string serve_proof(std::string_view secret, std::string_view challenge, std::string_view nonce, int rank) {
  return hmac_hex(secret, std::string("serve|").append(challenge).append("|").append(nonce).append("|").append(
                              std::to_string(rank)));
}

bool proofs_equal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

Result<std::string> read_secret_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return Status::not_found("--secret-file " + path + ": " + std::strerror(errno));
  }
  if ((st.st_mode & 077) != 0) {
    return Status::permission_denied("--secret-file " + path + ": readable by other users; chmod 600 it");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::io_error("--secret-file " + path + ": cannot read it");
  std::string secret((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
  if (secret.empty()) return Status::invalid_argument("--secret-file " + path + ": empty (expected the shared secret)");
  return secret;
}

}  // namespace omnilearn::emulator

// The several-hosts join check: every node proves, through the (unauthenticated) c10d store, that it knows the
// run's shared secret, without the secret ever being written there. Rank 0 posts a fresh random challenge and each
// other rank a fresh random nonce; each rank answers HMAC-SHA256(secret, "join|<challenge>|<rank>"), rank 0 answers
// each rank with HMAC(secret, "serve|<challenge>|<nonce>|<rank>"), and each side checks the other's answer before
// any training traffic. Both answers cover a value the checking side chose afresh, so a recorded answer of an
// earlier run cannot be replayed in either direction. Pure functions except random_challenge:
// thread-safe (OpenSSL's RNG is).
#pragma once

#include <string>
#include <string_view>

#include "omnilearn/base/status.h"

namespace omnilearn::emulator {

// The environment variable that carries the secret (the launcher puts it in its workers' environment, never on a
// command line).
inline constexpr const char* kSecretEnv = "OMNILEARN_SECRET";

// 32 random bytes as 64 hex digits.
Result<std::string> random_challenge();
// A rank's answer ("join") or rank 0's ("serve"), 64 hex digits.
std::string join_proof(std::string_view secret, std::string_view challenge, int rank);
std::string serve_proof(std::string_view secret, std::string_view challenge, std::string_view nonce, int rank);
// Constant-time comparison.
bool proofs_equal(std::string_view a, std::string_view b);

// The secret in `path`: its contents without a trailing newline. Errors name the file: unreadable, empty, or
// readable by other users (mode & 077; keep it chmod 600).
Result<std::string> read_secret_file(const std::string& path);

}  // namespace omnilearn::emulator

/*
 * C tests of libpqkit_ffi: known answers from the standards and every misuse the API must reject.
 * Built and run against both the static and the shared library by crates/pqkit-ffi/tests/c_abi.rs.
 * Exit status 0 only if every check passed.
 */
#include "check.h"

int failures = 0;
int checks = 0;

size_t unhex(const char *hex, uint8_t *out, size_t cap) {
  size_t n = 0;
  while (hex[0] && hex[1]) {
    unsigned v;
    if (hex[0] == ' ') { hex++; continue; }
    if (n >= cap || sscanf(hex, "%2x", &v) != 1) { fprintf(stderr, "bad hex\n"); exit(2); }
    out[n++] = (uint8_t)v;
    hex += 2;
  }
  return n;
}

int all_zero(const uint8_t *p, size_t n) {
  uint8_t acc = 0;
  for (size_t i = 0; i < n; i++) acc |= p[i];
  return acc == 0;
}

/* RFC 8439 section 2.8.2. */
static void test_chacha20poly1305_rfc8439(void) {
  uint8_t key[32], nonce[12], aad[12], expect[200], out[256], back[256];
  const char *pt = "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the "
                   "future, sunscreen would be it.";
  size_t pt_len = strlen(pt), out_len = 0, back_len = 0;
  unhex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f", key, sizeof key);
  unhex("070000004041424344454647", nonce, sizeof nonce);
  unhex("50515253c0c1c2c3c4c5c6c7", aad, sizeof aad);
  size_t n = unhex("d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b"
                   "1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
                   "3ff4def08e4b7a9de576d26586cec64b6116"
                   "1ae10b594f09e26a7e902ecbd0600691",
                   expect, sizeof expect);
  CHECK(n == pt_len + PQKIT_AEAD_TAG_LEN);

  PqkitAead *a = NULL;
  CHECK_STATUS(pqkit_aead_new(PQKIT_AEAD_ALG_CHACHA20_POLY1305, key, 32, &a), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_aead_seal(a, nonce, 12, aad, 12, (const uint8_t *)pt, pt_len, out, sizeof out, &out_len),
               PQKIT_STATUS_OK);
  CHECK(out_len == n && memcmp(out, expect, n) == 0);
  CHECK_STATUS(pqkit_aead_open(a, nonce, 12, aad, 12, out, out_len, back, sizeof back, &back_len), PQKIT_STATUS_OK);
  CHECK(back_len == pt_len && memcmp(back, pt, pt_len) == 0);

  /* Tag failure releases no plaintext: every modified byte (ciphertext, tag, aad, nonce) is rejected. */
  for (size_t i = 0; i < out_len; i += 7) {
    out[i] ^= 0x01;
    memset(back, 0xAA, sizeof back);
    back_len = 12345;
    CHECK_STATUS(pqkit_aead_open(a, nonce, 12, aad, 12, out, out_len, back, sizeof back, &back_len),
                 PQKIT_STATUS_AUTHENTICATION_FAILED);
    CHECK(back_len == 0 && all_zero(back, pt_len));
    out[i] ^= 0x01;
  }
  aad[0] ^= 1;
  CHECK_STATUS(pqkit_aead_open(a, nonce, 12, aad, 12, out, out_len, back, sizeof back, &back_len),
               PQKIT_STATUS_AUTHENTICATION_FAILED);
  CHECK(all_zero(back, pt_len));
  aad[0] ^= 1;
  CHECK(pqkit_last_error() != NULL && strstr(pqkit_last_error(), "ChaCha20-Poly1305") != NULL);

  /* Misuse: wrong nonce length, short buffers, NULL pointers, short sealed input. */
  CHECK_STATUS(pqkit_aead_seal(a, nonce, 11, aad, 12, (const uint8_t *)pt, pt_len, out, sizeof out, &out_len),
               PQKIT_STATUS_INVALID_LENGTH);
  out_len = 0;
  CHECK_STATUS(pqkit_aead_seal(a, nonce, 12, aad, 12, (const uint8_t *)pt, pt_len, out, pt_len, &out_len),
               PQKIT_STATUS_BUFFER_TOO_SMALL);
  CHECK(out_len == pt_len + PQKIT_AEAD_TAG_LEN);
  CHECK_STATUS(pqkit_aead_open(a, nonce, 12, aad, 12, expect, n, back, pt_len - 1, &back_len),
               PQKIT_STATUS_BUFFER_TOO_SMALL);
  CHECK(back_len == pt_len);
  CHECK_STATUS(pqkit_aead_open(a, nonce, 12, aad, 12, expect, 15, back, sizeof back, &back_len),
               PQKIT_STATUS_INVALID_LENGTH);
  CHECK_STATUS(pqkit_aead_seal(NULL, nonce, 12, aad, 12, (const uint8_t *)pt, pt_len, out, sizeof out, &out_len),
               PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_aead_seal(a, NULL, 12, aad, 12, (const uint8_t *)pt, pt_len, out, sizeof out, &out_len),
               PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_aead_seal(a, nonce, 12, NULL, 12, (const uint8_t *)pt, pt_len, out, sizeof out, &out_len),
               PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_aead_seal(a, nonce, 12, aad, 12, NULL, pt_len, out, sizeof out, &out_len),
               PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_aead_seal(a, nonce, 12, aad, 12, (const uint8_t *)pt, pt_len, NULL, sizeof out, &out_len),
               PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_aead_seal(a, nonce, 12, aad, 12, (const uint8_t *)pt, pt_len, out, sizeof out, NULL),
               PQKIT_STATUS_NULL_POINTER);
  /* NULL is fine with length 0: empty aad and empty plaintext. */
  CHECK_STATUS(pqkit_aead_seal(a, nonce, 12, NULL, 0, NULL, 0, out, sizeof out, &out_len), PQKIT_STATUS_OK);
  CHECK(out_len == PQKIT_AEAD_TAG_LEN);
  CHECK_STATUS(pqkit_aead_open(a, nonce, 12, NULL, 0, out, out_len, NULL, 0, &back_len), PQKIT_STATUS_OK);
  CHECK(back_len == 0);
  pqkit_aead_free(a);
  pqkit_aead_free(NULL);

  CHECK_STATUS(pqkit_aead_new(PQKIT_AEAD_ALG_CHACHA20_POLY1305, key, 31, &a), PQKIT_STATUS_INVALID_LENGTH);
  CHECK(strcmp(pqkit_last_error(), "ChaCha20-Poly1305 key must be 32 bytes, got 31") == 0);
  CHECK_STATUS(pqkit_aead_new(99, key, 32, &a), PQKIT_STATUS_UNKNOWN_ALGORITHM);
  CHECK_STATUS(pqkit_aead_new(PQKIT_AEAD_ALG_CHACHA20_POLY1305, NULL, 32, &a), PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_aead_new(PQKIT_AEAD_ALG_CHACHA20_POLY1305, key, 32, NULL), PQKIT_STATUS_NULL_POINTER);
}

/* AES-GCM (the original GCM paper / SP 800-38D test cases 1 and 2) and a round trip of every AEAD. */
static void test_aes_gcm_and_all_aeads(void) {
  uint8_t key[65] = {0}, nonce[24] = {0}, zero16[16] = {0}, out[64], expect[64], back[64];
  size_t out_len = 0, back_len = 0, n;
  PqkitAead *a = NULL;
  CHECK_STATUS(pqkit_aead_new(PQKIT_AEAD_ALG_AES128_GCM, key, 16, &a), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_aead_seal(a, nonce, 12, NULL, 0, NULL, 0, out, sizeof out, &out_len), PQKIT_STATUS_OK);
  n = unhex("58e2fccefa7e3061367f1d57a4e7455a", expect, sizeof expect);
  CHECK(out_len == n && memcmp(out, expect, n) == 0);
  CHECK_STATUS(pqkit_aead_seal(a, nonce, 12, NULL, 0, zero16, 16, out, sizeof out, &out_len), PQKIT_STATUS_OK);
  n = unhex("0388dace60b6a392f328c2b971b2fe78ab6e47d42cec13bdf53a67b21257bddf", expect, sizeof expect);
  CHECK(out_len == n && memcmp(out, expect, n) == 0);
  pqkit_aead_free(a);

  const uint32_t algs[] = {PQKIT_AEAD_ALG_CHACHA20_POLY1305, PQKIT_AEAD_ALG_X_CHACHA20_POLY1305,
                           PQKIT_AEAD_ALG_AES128_GCM, PQKIT_AEAD_ALG_AES256_GCM,
                           PQKIT_AEAD_ALG_KUSUMI512_POLY1305};
  for (size_t i = 0; i < sizeof algs / sizeof algs[0]; i++) {
    size_t klen = 0, nlen = 0;
    CHECK_STATUS(pqkit_aead_lengths(algs[i], &klen, &nlen), PQKIT_STATUS_OK);
    CHECK(klen <= sizeof key && nlen <= sizeof nonce);
    for (size_t j = 0; j < klen; j++) key[j] = (uint8_t)(j * 7 + i);
    CHECK_STATUS(pqkit_aead_new(algs[i], key, klen, &a), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_aead_seal(a, nonce, nlen, zero16, 3, (const uint8_t *)"hello", 5, out, sizeof out, &out_len),
                 PQKIT_STATUS_OK);
    CHECK(out_len == 5 + PQKIT_AEAD_TAG_LEN);
    CHECK_STATUS(pqkit_aead_open(a, nonce, nlen, zero16, 3, out, out_len, back, sizeof back, &back_len),
                 PQKIT_STATUS_OK);
    CHECK(back_len == 5 && memcmp(back, "hello", 5) == 0);
    CHECK_STATUS(pqkit_aead_open(a, nonce, nlen, zero16, 2, out, out_len, back, sizeof back, &back_len),
                 PQKIT_STATUS_AUTHENTICATION_FAILED);
    CHECK(all_zero(back, 5));
    CHECK_STATUS(pqkit_aead_new(algs[i], key, klen + 1, &a), PQKIT_STATUS_INVALID_LENGTH);
    pqkit_aead_free(a);
  }
  CHECK_STATUS(pqkit_aead_lengths(0, &out_len, &back_len), PQKIT_STATUS_UNKNOWN_ALGORITHM);
}

/* FIPS 180-4 / FIPS 202 / RFC 7693 known answers, one-shot and incremental. */
static void test_hashes(void) {
  uint8_t d[64], e[64];
  size_t len = 0;
  unhex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", e, sizeof e);
  CHECK_STATUS(pqkit_hash(PQKIT_HASH_ALG_SHA256, (const uint8_t *)"abc", 3, d, 32), PQKIT_STATUS_OK);
  CHECK(memcmp(d, e, 32) == 0);
  /* FIPS 180-4 two-block message, fed in pieces. */
  const char *m2 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  unhex("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1", e, sizeof e);
  PqkitHash *h = NULL;
  CHECK_STATUS(pqkit_hash_new(PQKIT_HASH_ALG_SHA256, &h), PQKIT_STATUS_OK);
  for (size_t i = 0; i < strlen(m2); i += 5) {
    size_t k = strlen(m2) - i < 5 ? strlen(m2) - i : 5;
    CHECK_STATUS(pqkit_hash_update(h, (const uint8_t *)m2 + i, k), PQKIT_STATUS_OK);
  }
  CHECK_STATUS(pqkit_hash_finalize(h, d, 31), PQKIT_STATUS_INVALID_LENGTH);
  CHECK_STATUS(pqkit_hash_finalize(h, d, 32), PQKIT_STATUS_OK);
  CHECK(memcmp(d, e, 32) == 0);
  /* After finalize the state is fresh again: SHA-256("") */
  CHECK_STATUS(pqkit_hash_finalize(h, d, 32), PQKIT_STATUS_OK);
  unhex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", e, sizeof e);
  CHECK(memcmp(d, e, 32) == 0);
  pqkit_hash_free(h);

  unhex("ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd"
        "454d4423643ce80e2a9ac94fa54ca49f", e, sizeof e);
  CHECK_STATUS(pqkit_hash(PQKIT_HASH_ALG_SHA512, (const uint8_t *)"abc", 3, d, 64), PQKIT_STATUS_OK);
  CHECK(memcmp(d, e, 64) == 0);
  unhex("3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532", e, sizeof e);
  CHECK_STATUS(pqkit_hash(PQKIT_HASH_ALG_SHA3_256, (const uint8_t *)"abc", 3, d, 32), PQKIT_STATUS_OK);
  CHECK(memcmp(d, e, 32) == 0);
  unhex("ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc95"
        "18d38aa8dbf1925ab92386edd4009923", e, sizeof e);
  CHECK_STATUS(pqkit_hash(PQKIT_HASH_ALG_BLAKE2B512, (const uint8_t *)"abc", 3, d, 64), PQKIT_STATUS_OK);
  CHECK(memcmp(d, e, 64) == 0);
  unhex("508c5e8c327c14e2e1a72ba34eeb452f37458b209ed63a294d999b4c86675982", e, sizeof e);
  CHECK_STATUS(pqkit_hash(PQKIT_HASH_ALG_BLAKE2S256, (const uint8_t *)"abc", 3, d, 32), PQKIT_STATUS_OK);
  CHECK(memcmp(d, e, 32) == 0);
  /* SHAKE128("", 32 bytes), FIPS 202. */
  unhex("7f9c2ba4e88f827d616045507605853ed73b8093f6efbc88eb1a6eacfa66ef26", e, sizeof e);
  CHECK_STATUS(pqkit_xof(PQKIT_XOF_ALG_SHAKE128, NULL, 0, d, 32), PQKIT_STATUS_OK);
  CHECK(memcmp(d, e, 32) == 0);
  CHECK_STATUS(pqkit_xof(7, NULL, 0, d, 32), PQKIT_STATUS_UNKNOWN_ALGORITHM);

  CHECK_STATUS(pqkit_hash_len(PQKIT_HASH_ALG_SHA384, &len), PQKIT_STATUS_OK);
  CHECK(len == 48);
  CHECK_STATUS(pqkit_hash(PQKIT_HASH_ALG_SHA256, (const uint8_t *)"abc", 3, d, 33), PQKIT_STATUS_INVALID_LENGTH);
  CHECK_STATUS(pqkit_hash(PQKIT_HASH_ALG_SHA256, NULL, 3, d, 32), PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_hash(PQKIT_HASH_ALG_SHA256, (const uint8_t *)"abc", 3, NULL, 32), PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_hash(0, (const uint8_t *)"abc", 3, d, 32), PQKIT_STATUS_UNKNOWN_ALGORITHM);
  CHECK_STATUS(pqkit_hash_new(PQKIT_HASH_ALG_SHA256, NULL), PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_hash_update(NULL, (const uint8_t *)"abc", 3), PQKIT_STATUS_NULL_POINTER);
}

/* RFC 4231 test cases 1, 2 and 6 (HMAC-SHA-256), RFC 5869 test case 1 (HKDF-SHA-256). */
static void test_hmac_hkdf(void) {
  uint8_t key[131], tag[64], e[64], prk[32], okm[82], ikm[22], salt[13], info[10];
  memset(key, 0x0b, 20);
  unhex("b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7", e, sizeof e);
  CHECK_STATUS(pqkit_hmac(PQKIT_HASH_ALG_SHA256, key, 20, (const uint8_t *)"Hi There", 8, tag, 32), PQKIT_STATUS_OK);
  CHECK(memcmp(tag, e, 32) == 0);
  unhex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", e, sizeof e);
  const char *msg = "what do ya want for nothing?";
  CHECK_STATUS(pqkit_hmac(PQKIT_HASH_ALG_SHA256, (const uint8_t *)"Jefe", 4, (const uint8_t *)msg, strlen(msg), tag,
                          32),
               PQKIT_STATUS_OK);
  CHECK(memcmp(tag, e, 32) == 0);
  CHECK_STATUS(pqkit_hmac_verify(PQKIT_HASH_ALG_SHA256, (const uint8_t *)"Jefe", 4, (const uint8_t *)msg,
                                 strlen(msg), e, 32),
               PQKIT_STATUS_OK);
  e[31] ^= 0x80;
  CHECK_STATUS(pqkit_hmac_verify(PQKIT_HASH_ALG_SHA256, (const uint8_t *)"Jefe", 4, (const uint8_t *)msg,
                                 strlen(msg), e, 32),
               PQKIT_STATUS_AUTHENTICATION_FAILED);
  CHECK_STATUS(pqkit_hmac_verify(PQKIT_HASH_ALG_SHA256, (const uint8_t *)"Jefe", 4, (const uint8_t *)msg,
                                 strlen(msg), e, 16),
               PQKIT_STATUS_INVALID_LENGTH);
  /* Test case 6: a 131-byte key (longer than a block), incremental. */
  memset(key, 0xaa, 131);
  const char *m6 = "Test Using Larger Than Block-Size Key - Hash Key First";
  unhex("60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54", e, sizeof e);
  PqkitHmac *h = NULL;
  CHECK_STATUS(pqkit_hmac_new(PQKIT_HASH_ALG_SHA256, key, 131, &h), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_hmac_update(h, (const uint8_t *)m6, 10), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_hmac_update(h, (const uint8_t *)m6 + 10, strlen(m6) - 10), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_hmac_finalize(h, tag, 32), PQKIT_STATUS_OK);
  CHECK(memcmp(tag, e, 32) == 0);
  CHECK_STATUS(pqkit_hmac_update(h, (const uint8_t *)m6, strlen(m6)), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_hmac_finalize_verify(h, e, 32), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_hmac_update(h, (const uint8_t *)m6, strlen(m6) - 1), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_hmac_finalize_verify(h, e, 32), PQKIT_STATUS_AUTHENTICATION_FAILED);
  CHECK_STATUS(pqkit_hmac_finalize(h, tag, 64), PQKIT_STATUS_INVALID_LENGTH);
  pqkit_hmac_free(h);
  pqkit_hmac_free(NULL);
  CHECK_STATUS(pqkit_hmac(PQKIT_HASH_ALG_SHA256, NULL, 4, (const uint8_t *)msg, 1, tag, 32),
               PQKIT_STATUS_NULL_POINTER);

  memset(ikm, 0x0b, sizeof ikm);
  unhex("000102030405060708090a0b0c", salt, sizeof salt);
  unhex("f0f1f2f3f4f5f6f7f8f9", info, sizeof info);
  unhex("077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5", e, sizeof e);
  CHECK_STATUS(pqkit_hkdf_extract(PQKIT_HASH_ALG_SHA256, salt, 13, ikm, 22, prk, 32), PQKIT_STATUS_OK);
  CHECK(memcmp(prk, e, 32) == 0);
  uint8_t want[42];
  unhex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865", want, sizeof want);
  CHECK_STATUS(pqkit_hkdf_expand(PQKIT_HASH_ALG_SHA256, prk, 32, info, 10, okm, 42), PQKIT_STATUS_OK);
  CHECK(memcmp(okm, want, 42) == 0);
  memset(okm, 0, sizeof okm);
  CHECK_STATUS(pqkit_hkdf(PQKIT_HASH_ALG_SHA256, salt, 13, ikm, 22, info, 10, okm, 42), PQKIT_STATUS_OK);
  CHECK(memcmp(okm, want, 42) == 0);
  /* 255 * 32 bytes is the most HKDF-SHA-256 gives. */
  uint8_t *big = malloc(255 * 32 + 1);
  CHECK(big != NULL);
  CHECK_STATUS(pqkit_hkdf(PQKIT_HASH_ALG_SHA256, salt, 13, ikm, 22, info, 10, big, 255 * 32), PQKIT_STATUS_OK);
  CHECK(pqkit_hkdf(PQKIT_HASH_ALG_SHA256, salt, 13, ikm, 22, info, 10, big, 255 * 32 + 1) != PQKIT_STATUS_OK);
  free(big);
  CHECK_STATUS(pqkit_hkdf_expand(PQKIT_HASH_ALG_SHA256, prk, 31, info, 10, okm, 42), PQKIT_STATUS_INVALID_LENGTH);
  CHECK_STATUS(pqkit_hkdf_extract(PQKIT_HASH_ALG_SHA256, salt, 13, ikm, 22, prk, 31), PQKIT_STATUS_INVALID_LENGTH);
  CHECK_STATUS(pqkit_hkdf(PQKIT_HASH_ALG_SHA256, salt, 13, ikm, 22, info, 10, NULL, 42), PQKIT_STATUS_NULL_POINTER);
  /* No zero-length output: a length of 0 is a mistake, reported as such (NULL or not). */
  CHECK_STATUS(pqkit_hkdf(PQKIT_HASH_ALG_SHA256, salt, 13, ikm, 22, info, 10, okm, 0), PQKIT_STATUS_INVALID_PARAMETER);
  CHECK_STATUS(pqkit_hkdf(PQKIT_HASH_ALG_SHA256, salt, 13, ikm, 22, info, 10, NULL, 0), PQKIT_STATUS_INVALID_PARAMETER);
  CHECK_STATUS(pqkit_hkdf_expand(PQKIT_HASH_ALG_SHA256, prk, 32, info, 10, okm, 0), PQKIT_STATUS_INVALID_PARAMETER);
}

/* RFC 8032 section 7.1 test 1 and RFC 7748 section 5.2 / 6.1: known answers, then round trips and refusals. */
static void test_ed25519_x25519(void) {
  uint8_t seed[32], pk[32], sig[64], want_pk[32], want_sig[64], msg[3] = {1, 2, 3};
  unhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", seed, sizeof seed);
  unhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", want_pk, sizeof want_pk);
  unhex("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
        want_sig, sizeof want_sig);
  CHECK_STATUS(pqkit_ed25519_public_key(seed, 32, pk, 32), PQKIT_STATUS_OK);
  CHECK(memcmp(pk, want_pk, 32) == 0);
  CHECK_STATUS(pqkit_ed25519_sign(seed, 32, NULL, 0, sig, 64), PQKIT_STATUS_OK);
  CHECK(memcmp(sig, want_sig, 64) == 0);
  CHECK_STATUS(pqkit_ed25519_verify(pk, 32, NULL, 0, sig, 64), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_ed25519_verify(pk, 32, msg, 3, sig, 64), PQKIT_STATUS_AUTHENTICATION_FAILED);
  CHECK_STATUS(pqkit_ed25519_verify(pk, 32, NULL, 0, sig, 63), PQKIT_STATUS_INVALID_LENGTH);
  CHECK_STATUS(pqkit_ed25519_sign(seed, 31, msg, 3, sig, 64), PQKIT_STATUS_INVALID_LENGTH);
  CHECK_STATUS(pqkit_ed25519_sign(seed, 32, msg, 3, NULL, 64), PQKIT_STATUS_NULL_POINTER);
  uint8_t pk2[32], seed2[32];
  CHECK_STATUS(pqkit_ed25519_keypair(pk2, 32, seed2, 32), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_ed25519_sign(seed2, 32, msg, 3, sig, 64), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_ed25519_verify(pk2, 32, msg, 3, sig, 64), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_ed25519_verify(pk, 32, msg, 3, sig, 64), PQKIT_STATUS_AUTHENTICATION_FAILED);

  uint8_t a_sk[32], a_pk[32], b_sk[32], b_pk[32], ss1[32], ss2[32], want[32];
  unhex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a", a_sk, 32);
  unhex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb", b_sk, 32);
  unhex("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742", want, 32);
  CHECK_STATUS(pqkit_x25519_public_key(a_sk, 32, a_pk, 32), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_x25519_public_key(b_sk, 32, b_pk, 32), PQKIT_STATUS_OK);
  unhex("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a", want_pk, 32);
  CHECK(memcmp(a_pk, want_pk, 32) == 0);
  CHECK_STATUS(pqkit_x25519(a_sk, 32, b_pk, 32, ss1, 32), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_x25519(b_sk, 32, a_pk, 32, ss2, 32), PQKIT_STATUS_OK);
  CHECK(memcmp(ss1, want, 32) == 0 && memcmp(ss2, want, 32) == 0);
  uint8_t zero[32] = {0};
  memset(ss1, 0xAA, 32);
  CHECK(pqkit_x25519(a_sk, 32, zero, 32, ss1, 32) != PQKIT_STATUS_OK);
  CHECK(all_zero(ss1, 32));
  CHECK_STATUS(pqkit_x25519(a_sk, 32, b_pk, 31, ss1, 32), PQKIT_STATUS_INVALID_LENGTH);
  CHECK_STATUS(pqkit_x25519_keypair(a_pk, 32, a_sk, 32), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_x25519(a_sk, 32, b_pk, 32, ss1, 32), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_x25519(b_sk, 32, a_pk, 32, ss2, 32), PQKIT_STATUS_OK);
  CHECK(memcmp(ss1, ss2, 32) == 0);
}

/* RFC 9106 5.3 (Argon2id) and the BLAKE2 reference KAT (keyed, key 00..3f / 00..1f, messages 00..n-1),
   RFC 7693 appendix A ("abc", unkeyed). */
static void test_argon2id_blake2(void) {
  uint8_t pwd[32], salt[16], secret[8], ad[12], tag[32], want[64];
  memset(pwd, 1, 32);
  memset(salt, 2, 16);
  memset(secret, 3, 8);
  memset(ad, 4, 12);
  unhex("0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659", want, 32);
  CHECK_STATUS(pqkit_argon2id(pwd, 32, salt, 16, secret, 8, ad, 12, 32, 3, 4, tag, 32), PQKIT_STATUS_OK);
  CHECK(memcmp(tag, want, 32) == 0);
  memset(tag, 0xAA, 32);
  CHECK(pqkit_argon2id(pwd, 32, salt, 7, NULL, 0, NULL, 0, 32, 3, 4, tag, 32) != PQKIT_STATUS_OK);
  CHECK(all_zero(tag, 32));
  CHECK(pqkit_argon2id(pwd, 32, salt, 16, NULL, 0, NULL, 0, 16, 3, 4, tag, 32) != PQKIT_STATUS_OK);
  CHECK(pqkit_argon2id(pwd, 32, salt, 16, NULL, 0, NULL, 0, 32, 3, 4, tag, 3) != PQKIT_STATUS_OK);

  uint8_t key[64], msg[2] = {0, 1}, out[64];
  for (int i = 0; i < 64; i++) key[i] = (uint8_t)i;
  unhex("10ebb67700b1868efb4417987acf4690ae9d972fb7a590c2f02871799aaa4786b5e996e8f0f4eb981fc214b005f42d2ff4233499391653df7aefcbc13fc51568",
        want, 64);
  CHECK_STATUS(pqkit_blake2b(key, 64, NULL, 0, NULL, 0, NULL, 0, out, 64), PQKIT_STATUS_OK);
  CHECK(memcmp(out, want, 64) == 0);
  unhex("961f6dd1e4dd30f63901690c512e78e4b45e4742ed197c3c5e45c549fd25f2e4187b0bc9fe30492b16b0d0bc4ef9b0f34c7003fac09a5ef1532e69430234cebd",
        want, 64);
  CHECK_STATUS(pqkit_blake2b(key, 64, NULL, 0, NULL, 0, msg, 1, out, 64), PQKIT_STATUS_OK);
  CHECK(memcmp(out, want, 64) == 0);
  unhex("40d15fee7c328830166ac3f918650f807e7e01e177258cdc0a39b11f598066f1", want, 32);
  CHECK_STATUS(pqkit_blake2s(key, 32, NULL, 0, NULL, 0, msg, 1, out, 32), PQKIT_STATUS_OK);
  CHECK(memcmp(out, want, 32) == 0);
  unhex("ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923",
        want, 64);
  CHECK_STATUS(pqkit_blake2b(NULL, 0, NULL, 0, NULL, 0, (const uint8_t *)"abc", 3, out, 64), PQKIT_STATUS_OK);
  CHECK(memcmp(out, want, 64) == 0);
  /* Salt and personalisation: answers of CPython's hashlib.blake2b(b"\0\1", digest_size=32, salt=b"\0\1")
     and (..., person=b"\0\1"), an independent implementation. Oversized ones are refused. */
  CHECK_STATUS(pqkit_blake2b(NULL, 0, msg, 2, NULL, 0, msg, 2, out, 32), PQKIT_STATUS_OK);
  unhex("919e9813aa3fc5a4ee833b1183b2a8812cd2592ad0a4bf99fbe8547a28b0a6ba", want, 32);
  CHECK(memcmp(out, want, 32) == 0);
  CHECK_STATUS(pqkit_blake2b(NULL, 0, NULL, 0, msg, 2, msg, 2, out, 32), PQKIT_STATUS_OK);
  unhex("b9db4d429168658a90fe70f7f1358aaf962def4155e301214d3ba154c06661ba", want, 32);
  CHECK(memcmp(out, want, 32) == 0);
  CHECK(pqkit_blake2b(key, 65, NULL, 0, NULL, 0, msg, 2, out, 64) != PQKIT_STATUS_OK);
  CHECK(pqkit_blake2s(NULL, 0, key, 9, NULL, 0, msg, 2, out, 32) != PQKIT_STATUS_OK);
  CHECK(pqkit_blake2b(NULL, 0, NULL, 0, NULL, 0, msg, 2, out, 0) != PQKIT_STATUS_OK);
}

/* RFC 6979 A.2.5 (P-256, SHA-256): the public key and both signatures byte for byte; secp256k1 and P-256
   round trips, ECDH agreement, refusals. */
static void test_ecdsa_ecdh(void) {
  uint8_t sk[32], pk[65], want_pk[65], sig[64], want_sig[64];
  unhex("c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721", sk, 32);
  unhex("04 60fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6"
        "7903fe1008b8bc99a41ae9e95628bc64f2f1b20c2d7e9f5177a3c294d4462299", want_pk, 65);
  CHECK_STATUS(pqkit_ec_public_key(PQKIT_EC_CURVE_P256, sk, 32, pk, 65), PQKIT_STATUS_OK);
  CHECK(memcmp(pk, want_pk, 65) == 0);
  unhex("efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716"
        "f7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8", want_sig, 64);
  CHECK_STATUS(pqkit_ecdsa_sign(PQKIT_EC_CURVE_P256, sk, 32, (const uint8_t *)"sample", 6, sig, 64), PQKIT_STATUS_OK);
  CHECK(memcmp(sig, want_sig, 64) == 0);
  unhex("f1abb023518351cd71d881567b1ea663ed3efcf6c5132b354f28d3b0b7d38367"
        "019f4113742a2b14bd25926b49c649155f267e60d3814b4c0cc84250e46f0083", want_sig, 64);
  CHECK_STATUS(pqkit_ecdsa_sign(PQKIT_EC_CURVE_P256, sk, 32, (const uint8_t *)"test", 4, sig, 64), PQKIT_STATUS_OK);
  CHECK(memcmp(sig, want_sig, 64) == 0);
  CHECK_STATUS(pqkit_ecdsa_verify(PQKIT_EC_CURVE_P256, pk, 65, (const uint8_t *)"test", 4, sig, 64), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_ecdsa_verify(PQKIT_EC_CURVE_P256, pk, 65, (const uint8_t *)"tesT", 4, sig, 64),
               PQKIT_STATUS_AUTHENTICATION_FAILED);
  CHECK_STATUS(pqkit_ecdsa_verify(PQKIT_EC_CURVE_P256, pk, 65, (const uint8_t *)"test", 4, sig, 63),
               PQKIT_STATUS_INVALID_LENGTH);
  CHECK_STATUS(pqkit_ecdsa_sign(99, sk, 32, NULL, 0, sig, 64), PQKIT_STATUS_UNKNOWN_ALGORITHM);
  const uint32_t curves[] = {PQKIT_EC_CURVE_P256, PQKIT_EC_CURVE_SECP256K1};
  for (size_t c = 0; c < 2; c++) {
    uint8_t a_sk[32], a_pk[65], b_sk[32], b_pk[65], ss1[32], ss2[32];
    CHECK_STATUS(pqkit_ec_keypair(curves[c], a_pk, 65, a_sk, 32), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_ec_keypair(curves[c], b_pk, 65, b_sk, 32), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_ec_public_key(curves[c], a_sk, 32, pk, 65), PQKIT_STATUS_OK);
    CHECK(memcmp(pk, a_pk, 65) == 0);
    CHECK_STATUS(pqkit_ecdsa_sign(curves[c], a_sk, 32, (const uint8_t *)"m", 1, sig, 64), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_ecdsa_verify(curves[c], a_pk, 65, (const uint8_t *)"m", 1, sig, 64), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_ecdsa_verify(curves[c], b_pk, 65, (const uint8_t *)"m", 1, sig, 64),
                 PQKIT_STATUS_AUTHENTICATION_FAILED);
    CHECK_STATUS(pqkit_ecdh(curves[c], a_sk, 32, b_pk, 65, ss1, 32), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_ecdh(curves[c], b_sk, 32, a_pk, 65, ss2, 32), PQKIT_STATUS_OK);
    CHECK(memcmp(ss1, ss2, 32) == 0 && !all_zero(ss1, 32));
    a_pk[64] ^= 1; /* off the curve */
    memset(ss1, 0xAA, 32);
    CHECK(pqkit_ecdh(curves[c], b_sk, 32, a_pk, 65, ss1, 32) != PQKIT_STATUS_OK);
    CHECK(all_zero(ss1, 32));
  }
}

static void test_mlkem(void) {
  const uint32_t algs[] = {PQKIT_MLKEM_ALG_MLKEM512, PQKIT_MLKEM_ALG_MLKEM768, PQKIT_MLKEM_ALG_MLKEM1024};
  const size_t want_ek[] = {800, 1184, 1568}, want_dk[] = {1632, 2400, 3168}, want_ct[] = {768, 1088, 1568};
  for (size_t i = 0; i < 3; i++) {
    size_t ekl = 0, dkl = 0, ctl = 0;
    CHECK_STATUS(pqkit_mlkem_lengths(algs[i], &ekl, &dkl, &ctl), PQKIT_STATUS_OK);
    CHECK(ekl == want_ek[i] && dkl == want_dk[i] && ctl == want_ct[i]);
    uint8_t *ek = malloc(ekl), *dk = malloc(dkl), *ct = malloc(ctl);
    uint8_t ss1[32], ss2[32], ss3[32], seed[64];
    CHECK(ek && dk && ct);
    CHECK_STATUS(pqkit_mlkem_keygen(algs[i], ek, ekl, dk, dkl), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_mlkem_encapsulate(algs[i], ek, ekl, ct, ctl, ss1, 32), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_mlkem_decapsulate(algs[i], dk, dkl, ct, ctl, ss2, 32), PQKIT_STATUS_OK);
    CHECK(memcmp(ss1, ss2, 32) == 0);
    /* Implicit rejection: a modified ciphertext decapsulates to an unrelated secret. */
    ct[5] ^= 1;
    CHECK_STATUS(pqkit_mlkem_decapsulate(algs[i], dk, dkl, ct, ctl, ss3, 32), PQKIT_STATUS_OK);
    CHECK(memcmp(ss1, ss3, 32) != 0);
    ct[5] ^= 1;
    /* A corrupted decapsulation key fails its hash check (FIPS 203 section 7.3). */
    dk[dkl - 40] ^= 1;
    CHECK_STATUS(pqkit_mlkem_decapsulate(algs[i], dk, dkl, ct, ctl, ss3, 32), PQKIT_STATUS_INVALID_ENCODING);
    dk[dkl - 40] ^= 1;
    /* A non-canonical encapsulation key (a coefficient >= q) is refused (FIPS 203 section 7.2). */
    uint8_t save0 = ek[0], save1 = ek[1];
    ek[0] = 0xff;
    ek[1] |= 0x0f;
    CHECK_STATUS(pqkit_mlkem_encapsulate(algs[i], ek, ekl, ct, ctl, ss3, 32), PQKIT_STATUS_INVALID_ENCODING);
    ek[0] = save0;
    ek[1] = save1;
    /* Wrong lengths and NULLs. */
    CHECK_STATUS(pqkit_mlkem_encapsulate(algs[i], ek, ekl - 1, ct, ctl, ss3, 32), PQKIT_STATUS_INVALID_LENGTH);
    CHECK_STATUS(pqkit_mlkem_encapsulate(algs[i], ek, ekl, ct, ctl + 1, ss3, 32), PQKIT_STATUS_INVALID_LENGTH);
    CHECK_STATUS(pqkit_mlkem_decapsulate(algs[i], dk, dkl, ct, ctl - 1, ss3, 32), PQKIT_STATUS_INVALID_LENGTH);
    CHECK_STATUS(pqkit_mlkem_decapsulate(algs[i], dk, dkl, ct, ctl, ss3, 31), PQKIT_STATUS_INVALID_LENGTH);
    CHECK_STATUS(pqkit_mlkem_keygen(algs[i], ek, ekl, NULL, dkl), PQKIT_STATUS_NULL_POINTER);
    CHECK_STATUS(pqkit_mlkem_keygen(algs[i], ek, ekl, dk, dkl - 1), PQKIT_STATUS_INVALID_LENGTH);
    CHECK_STATUS(pqkit_mlkem_keygen(algs[i], ek, ekl - 1, dk, dkl), PQKIT_STATUS_INVALID_LENGTH);
    CHECK_STATUS(pqkit_mlkem_decapsulate(algs[i], NULL, dkl, ct, ctl, ss3, 32), PQKIT_STATUS_NULL_POINTER);
    /* Seeded key generation is deterministic. */
    for (size_t j = 0; j < 64; j++) seed[j] = (uint8_t)j;
    uint8_t *ek2 = malloc(ekl), *dk2 = malloc(dkl);
    CHECK_STATUS(pqkit_mlkem_keygen_from_seed(algs[i], seed, 64, ek, ekl, dk, dkl), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_mlkem_keygen_from_seed(algs[i], seed, 64, ek2, ekl, dk2, dkl), PQKIT_STATUS_OK);
    CHECK(memcmp(ek, ek2, ekl) == 0 && memcmp(dk, dk2, dkl) == 0);
    CHECK_STATUS(pqkit_mlkem_keygen_from_seed(algs[i], seed, 63, ek, ekl, dk, dkl), PQKIT_STATUS_INVALID_LENGTH);
    free(ek2);
    free(dk2);
    free(ek);
    free(dk);
    free(ct);
  }
  size_t x;
  CHECK_STATUS(pqkit_mlkem_lengths(4, &x, &x, &x), PQKIT_STATUS_UNKNOWN_ALGORITHM);
}

static void test_mldsa(void) {
  const uint32_t algs[] = {PQKIT_MLDSA_ALG_MLDSA44, PQKIT_MLDSA_ALG_MLDSA65, PQKIT_MLDSA_ALG_MLDSA87};
  const size_t want_pk[] = {1312, 1952, 2592}, want_sk[] = {2560, 4032, 4896}, want_sig[] = {2420, 3309, 4627};
  const uint8_t *msg = (const uint8_t *)"a message to sign";
  const uint8_t *ctx = (const uint8_t *)"ctx";
  for (size_t i = 0; i < 3; i++) {
    size_t pkl = 0, skl = 0, sigl = 0;
    CHECK_STATUS(pqkit_mldsa_lengths(algs[i], &pkl, &skl, &sigl), PQKIT_STATUS_OK);
    CHECK(pkl == want_pk[i] && skl == want_sk[i] && sigl == want_sig[i]);
    uint8_t *pk = malloc(pkl), *sk = malloc(skl), *sig = malloc(sigl), *sig2 = malloc(sigl + 1); /* one spare byte: the sigl + 1 call below */
    CHECK(pk && sk && sig && sig2);
    CHECK_STATUS(pqkit_mldsa_keygen(algs[i], pk, pkl, sk, skl), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_mldsa_sign(algs[i], sk, skl, msg, 17, ctx, 3, 0, sig, sigl), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_mldsa_verify(algs[i], pk, pkl, msg, 17, ctx, 3, sig, sigl), PQKIT_STATUS_OK);
    /* Hedged signing differs each time; deterministic signing does not. */
    CHECK_STATUS(pqkit_mldsa_sign(algs[i], sk, skl, msg, 17, ctx, 3, 0, sig2, sigl), PQKIT_STATUS_OK);
    CHECK(memcmp(sig, sig2, sigl) != 0);
    CHECK_STATUS(pqkit_mldsa_sign(algs[i], sk, skl, msg, 17, ctx, 3, 1, sig, sigl), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_mldsa_sign(algs[i], sk, skl, msg, 17, ctx, 3, 1, sig2, sigl), PQKIT_STATUS_OK);
    CHECK(memcmp(sig, sig2, sigl) == 0);
    /* Wrong message, context or key, or a modified signature: rejected. */
    CHECK_STATUS(pqkit_mldsa_verify(algs[i], pk, pkl, msg, 16, ctx, 3, sig, sigl), PQKIT_STATUS_AUTHENTICATION_FAILED);
    CHECK_STATUS(pqkit_mldsa_verify(algs[i], pk, pkl, msg, 17, ctx, 2, sig, sigl), PQKIT_STATUS_AUTHENTICATION_FAILED);
    CHECK_STATUS(pqkit_mldsa_verify(algs[i], pk, pkl, msg, 17, NULL, 0, sig, sigl), PQKIT_STATUS_AUTHENTICATION_FAILED);
    sig[10] ^= 1;
    CHECK(pqkit_mldsa_verify(algs[i], pk, pkl, msg, 17, ctx, 3, sig, sigl) != PQKIT_STATUS_OK);
    sig[10] ^= 1;
    pk[100] ^= 1;
    CHECK_STATUS(pqkit_mldsa_verify(algs[i], pk, pkl, msg, 17, ctx, 3, sig, sigl), PQKIT_STATUS_AUTHENTICATION_FAILED);
    pk[100] ^= 1;
    /* Lengths, NULLs, a context over 255 bytes. */
    static uint8_t long_ctx[256];
    CHECK_STATUS(pqkit_mldsa_sign(algs[i], sk, skl, msg, 17, long_ctx, 256, 1, sig2, sigl),
                 PQKIT_STATUS_INVALID_LENGTH);
    CHECK(all_zero(sig2, sigl));
    CHECK_STATUS(pqkit_mldsa_verify(algs[i], pk, pkl, msg, 17, ctx, 3, sig, sigl - 1), PQKIT_STATUS_INVALID_LENGTH);
    CHECK_STATUS(pqkit_mldsa_verify(algs[i], pk, pkl - 1, msg, 17, ctx, 3, sig, sigl), PQKIT_STATUS_INVALID_LENGTH);
    CHECK_STATUS(pqkit_mldsa_sign(algs[i], sk, skl - 1, msg, 17, ctx, 3, 1, sig2, sigl), PQKIT_STATUS_INVALID_LENGTH);
    CHECK_STATUS(pqkit_mldsa_sign(algs[i], sk, skl, msg, 17, ctx, 3, 1, sig2, sigl + 1), PQKIT_STATUS_INVALID_LENGTH);
    CHECK_STATUS(pqkit_mldsa_sign(algs[i], sk, skl, NULL, 17, ctx, 3, 1, sig2, sigl), PQKIT_STATUS_NULL_POINTER);
    CHECK_STATUS(pqkit_mldsa_verify(algs[i], pk, pkl, msg, 17, ctx, 3, NULL, sigl), PQKIT_STATUS_NULL_POINTER);
    /* Seeded key generation is deterministic. */
    uint8_t seed[32] = {1, 2, 3};
    uint8_t *pk2 = malloc(pkl);
    CHECK_STATUS(pqkit_mldsa_keygen(algs[i], pk, pkl, sk, skl - 1), PQKIT_STATUS_INVALID_LENGTH);
    CHECK_STATUS(pqkit_mldsa_keygen_from_seed(algs[i], seed, 32, pk, pkl - 1, sk, skl), PQKIT_STATUS_INVALID_LENGTH);
    CHECK_STATUS(pqkit_mldsa_keygen_from_seed(algs[i], seed, 32, pk, pkl, sk, skl), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_mldsa_keygen_from_seed(algs[i], seed, 32, pk2, pkl, sk, skl), PQKIT_STATUS_OK);
    CHECK(memcmp(pk, pk2, pkl) == 0);
    CHECK_STATUS(pqkit_mldsa_keygen_from_seed(algs[i], seed, 31, pk2, pkl, sk, skl), PQKIT_STATUS_INVALID_LENGTH);
    free(pk2);
    free(pk);
    free(sk);
    free(sig);
    free(sig2);
  }
}

static void test_rng(void) {
  uint8_t a[100], b[100], seed[32] = {0};
  memset(a, 0, sizeof a);
  CHECK_STATUS(pqkit_random_bytes(a, sizeof a), PQKIT_STATUS_OK);
  CHECK(!all_zero(a, sizeof a));
  CHECK_STATUS(pqkit_random_bytes(NULL, 0), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_random_bytes(NULL, 1), PQKIT_STATUS_NULL_POINTER);
  PqkitRng *r1 = NULL, *r2 = NULL;
  CHECK_STATUS(pqkit_rng_new_from_seed(seed, 32, &r1), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_rng_new_from_seed(seed, 32, &r2), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_rng_fill(r1, a, 100), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_rng_fill(r2, b, 60), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_rng_fill(r2, b + 60, 40), PQKIT_STATUS_OK);
  CHECK(memcmp(a, b, 100) == 0);
  /* ChaCha20 keystream with an all-zero key and nonce, block 0 (RFC 8439 section A.1 test vector 1). */
  uint8_t e[64];
  unhex("76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7da41597c5157488d7724e03fb8d84a37"
        "6a43b8f41518a11cc387b669b2ee6586", e, sizeof e);
  CHECK(memcmp(a, e, 64) == 0);
  pqkit_rng_free(r1);
  pqkit_rng_free(r2);
  CHECK_STATUS(pqkit_rng_new(&r1), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_rng_fill(r1, a, 100), PQKIT_STATUS_OK);
  CHECK(memcmp(a, b, 100) != 0);
  pqkit_rng_free(r1);
  CHECK_STATUS(pqkit_rng_new_from_seed(seed, 31, &r1), PQKIT_STATUS_INVALID_LENGTH);
  CHECK_STATUS(pqkit_rng_new(NULL), PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_rng_fill(NULL, a, 1), PQKIT_STATUS_NULL_POINTER);
}

/* Streams: round trips at segment boundaries in odd pieces, and every stream attack is detected. */
static uint8_t *encrypt_stream(uint32_t alg, const uint8_t *key, const uint8_t *pt, size_t len, size_t piece,
                               size_t *out_total) {
  size_t cap = len + len / PQKIT_STREAM_SEGMENT_LEN * 16 + PQKIT_STREAM_MAX_HEADER_LEN + 2 * PQKIT_STREAM_SEGMENT_CT_LEN;
  uint8_t *out = malloc(cap);
  size_t o = 0, n = 0;
  PqkitStreamEncryptor *e = NULL;
  CHECK_STATUS(pqkit_stream_encryptor_new(alg, key, 32, &e), PQKIT_STATUS_OK);
  for (size_t i = 0; i < len; i += piece) {
    size_t k = len - i < piece ? len - i : piece;
    CHECK_STATUS(pqkit_stream_encryptor_update(e, pt + i, k, out + o, cap - o, &n), PQKIT_STATUS_OK);
    o += n;
  }
  CHECK_STATUS(pqkit_stream_encryptor_finish(e, out + o, cap - o, &n), PQKIT_STATUS_OK);
  o += n;
  CHECK_STATUS(pqkit_stream_encryptor_update(e, pt, 1, out, cap, &n), PQKIT_STATUS_BAD_STATE);
  CHECK_STATUS(pqkit_stream_encryptor_finish(e, out, cap, &n), PQKIT_STATUS_BAD_STATE);
  pqkit_stream_encryptor_free(e);
  *out_total = o;
  return out;
}

/* Decrypts in pieces; returns the final status, the plaintext in *pt_out (length *pt_len). */
static int decrypt_stream(const uint8_t *key, const uint8_t *ct, size_t len, size_t piece, uint8_t *pt_out,
                          size_t *pt_len) {
  PqkitStreamDecryptor *d = NULL;
  size_t o = 0, n = 0;
  int st = pqkit_stream_decryptor_new(key, 32, &d);
  if (st != PQKIT_STATUS_OK) return st;
  for (size_t i = 0; i < len && st == PQKIT_STATUS_OK; i += piece) {
    size_t k = len - i < piece ? len - i : piece;
    st = pqkit_stream_decryptor_update(d, ct + i, k, pt_out + o, k + PQKIT_STREAM_SEGMENT_LEN, &n);
    o += n;
  }
  if (st == PQKIT_STATUS_OK) {
    st = pqkit_stream_decryptor_finish(d, pt_out + o, PQKIT_STREAM_SEGMENT_LEN, &n);
    o += n;
  }
  pqkit_stream_decryptor_free(d);
  *pt_len = o;
  return st;
}

static void test_stream(void) {
  uint8_t key[32], other[32];
  for (int i = 0; i < 32; i++) { key[i] = (uint8_t)i; other[i] = (uint8_t)(i + 1); }
  const size_t S = PQKIT_STREAM_SEGMENT_LEN;
  const size_t lens[] = {0, 1, S - 1, S, S + 1, 2 * S, 3 * S + 17};
  const size_t pieces[] = {1000, S, 7 * S};
  const uint32_t algs[] = {PQKIT_STREAM_ALG_X_CHACHA20_POLY1305, PQKIT_STREAM_ALG_KUSUMI512_POLY1305,
                           PQKIT_STREAM_ALG_AES256_GCM};
  uint8_t *pt = malloc(3 * S + 17), *back = malloc(4 * S + 17 + 2 * S);
  for (size_t i = 0; i < 3 * S + 17; i++) pt[i] = (uint8_t)(i * 31 + 7);
  for (size_t a = 0; a < 3; a++) {
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
      size_t piece = pieces[(a + l) % 3], ct_len = 0, back_len = 0;
      uint8_t *ct = encrypt_stream(algs[a], key, pt, lens[l], piece, &ct_len);
      size_t segs = lens[l] == 0 ? 1 : (lens[l] + S - 1) / S;
      CHECK(ct_len == (a == 0 ? 75u : 63u) + lens[l] + 16 * segs);
      CHECK_STATUS(decrypt_stream(key, ct, ct_len, pieces[(a + l + 1) % 3], back, &back_len), PQKIT_STATUS_OK);
      CHECK(back_len == lens[l] && memcmp(back, pt, lens[l]) == 0);
      /* Wrong key: segment 0 fails. */
      CHECK_STATUS(decrypt_stream(other, ct, ct_len, 4096, back, &back_len), PQKIT_STATUS_AUTHENTICATION_FAILED);
      /* A flipped byte anywhere after the magic. */
      ct[ct_len / 2 + 9] ^= 1;
      CHECK(decrypt_stream(key, ct, ct_len, 4096, back, &back_len) != PQKIT_STATUS_OK);
      ct[ct_len / 2 + 9] ^= 1;
      /* Truncation: cut inside the last segment, or a whole final segment dropped. */
      CHECK(decrypt_stream(key, ct, ct_len - 1, 4096, back, &back_len) != PQKIT_STATUS_OK);
      if (segs > 1) {
        size_t hdr = a == 0 ? 75 : 63;
        CHECK_STATUS(decrypt_stream(key, ct, hdr + (segs - 1) * PQKIT_STREAM_SEGMENT_CT_LEN, 4096, back, &back_len),
                     PQKIT_STATUS_INVALID_ENCODING);
      }
      /* Appended data. */
      uint8_t *ext = malloc(ct_len + 20);
      memcpy(ext, ct, ct_len);
      memset(ext + ct_len, 0, 20);
      CHECK(decrypt_stream(key, ext, ct_len + 20, 4096, back, &back_len) != PQKIT_STATUS_OK);
      free(ext);
      free(ct);
    }
  }
  /* Misuse: short output buffers report the size and consume nothing; bad magic; NULLs; bad key length. */
  PqkitStreamEncryptor *e = NULL;
  size_t n = 0;
  uint8_t small[200];
  CHECK_STATUS(pqkit_stream_encryptor_new(PQKIT_STREAM_ALG_X_CHACHA20_POLY1305, key, 31, &e),
               PQKIT_STATUS_INVALID_LENGTH);
  CHECK_STATUS(pqkit_stream_encryptor_new(9, key, 32, &e), PQKIT_STATUS_UNKNOWN_ALGORITHM);
  CHECK_STATUS(pqkit_stream_encryptor_new(PQKIT_STREAM_ALG_X_CHACHA20_POLY1305, key, 32, &e), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_stream_encryptor_update(e, pt, 10, small, sizeof small, &n), PQKIT_STATUS_OK);
  CHECK(n == 75);
  CHECK_STATUS(pqkit_stream_encryptor_update(e, pt, S, small, sizeof small, &n), PQKIT_STATUS_BUFFER_TOO_SMALL);
  CHECK(n == PQKIT_STREAM_SEGMENT_CT_LEN);
  CHECK_STATUS(pqkit_stream_encryptor_update(e, pt, 5, NULL, 0, &n), PQKIT_STATUS_OK);
  CHECK(n == 0);
  CHECK_STATUS(pqkit_stream_encryptor_finish(e, small, 20, &n), PQKIT_STATUS_BUFFER_TOO_SMALL);
  CHECK(n == 15 + 16);
  CHECK_STATUS(pqkit_stream_encryptor_finish(e, small, sizeof small, NULL), PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_stream_encryptor_finish(e, small, sizeof small, &n), PQKIT_STATUS_OK);
  CHECK(n == 31);
  pqkit_stream_encryptor_free(e);
  pqkit_stream_encryptor_free(NULL);
  size_t bl = 0;
  CHECK_STATUS(decrypt_stream(key, (const uint8_t *)"NOTPQKIT-and-more-bytes", 23, 3, back, &bl),
               PQKIT_STATUS_INVALID_ENCODING);
  CHECK_STATUS(decrypt_stream(key, (const uint8_t *)"PQKITENC", 8, 8, back, &bl), PQKIT_STATUS_INVALID_ENCODING);
  CHECK_STATUS(decrypt_stream(key, NULL, 0, 1, back, &bl), PQKIT_STATUS_INVALID_ENCODING);
  PqkitStreamDecryptor *d = NULL;
  CHECK_STATUS(pqkit_stream_decryptor_new(key, 33, &d), PQKIT_STATUS_INVALID_LENGTH);
  CHECK_STATUS(pqkit_stream_decryptor_new(key, 32, NULL), PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_stream_decryptor_update(NULL, pt, 1, back, 10, &n), PQKIT_STATUS_NULL_POINTER);
  free(pt);
  free(back);
}

int main(void) {
  CHECK(strlen(pqkit_version()) > 0);
  CHECK(strcmp(pqkit_status_string(PQKIT_STATUS_AUTHENTICATION_FAILED), "authentication failed") == 0);
  CHECK(strcmp(pqkit_status_string(-1), "unknown status") == 0);
  test_chacha20poly1305_rfc8439();
  test_aes_gcm_and_all_aeads();
  test_hashes();
  test_hmac_hkdf();
  test_ed25519_x25519();
  test_argon2id_blake2();
  test_ecdsa_ecdh();
  test_mlkem();
  test_mldsa();
  test_rng();
  test_stream();
  test_keys();
  test_rsa();
  test_primitives();
  test_kem();
  test_recipients();
  test_bus();
  printf("pqkit C tests: %d checks, %d failures\n", checks, failures);
  return failures == 0 ? 0 : 1;
}

/*
 * Key handles: generate, import and export in every format, sign and verify, key agreement, and every
 * rejection (NULL, short buffers, formats a key type does not have, wrong PEM labels, mixed key types).
 * Known answers: RFC 8032 test 1 and the fixed DER prefixes of RFC 8410 and RFC 5480.
 */
#include "check.h"

static const uint32_t all_types[4] = {PQKIT_KEY_TYPE_ED25519, PQKIT_KEY_TYPE_X25519, PQKIT_KEY_TYPE_P256,
                                      PQKIT_KEY_TYPE_SECP256K1};

static int is_ec(uint32_t t) { return t == PQKIT_KEY_TYPE_P256 || t == PQKIT_KEY_TYPE_SECP256K1; }

/* Exports `f` of the private key, re-imports it and checks the raw key is unchanged. */
static void private_round_trip(PqkitPrivateKey *k, uint32_t t, uint32_t f) {
  uint8_t buf[512], raw1[32], raw2[32];
  size_t n = 0, r1 = 0, r2 = 0;
  PqkitPrivateKey *back = NULL;
  CHECK_STATUS(pqkit_private_key_export(k, f, buf, sizeof buf, &n), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_private_key_import(t, f, buf, n, &back), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_private_key_export(k, PQKIT_KEY_FORMAT_RAW, raw1, sizeof raw1, &r1), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_private_key_export(back, PQKIT_KEY_FORMAT_RAW, raw2, sizeof raw2, &r2), PQKIT_STATUS_OK);
  CHECK(r1 == 32 && r2 == 32 && memcmp(raw1, raw2, 32) == 0);
  if (f == PQKIT_KEY_FORMAT_PKCS8_PEM) CHECK(n > 28 && memcmp(buf, "-----BEGIN PRIVATE KEY-----\n", 28) == 0);
  if (f == PQKIT_KEY_FORMAT_SEC1_PEM) CHECK(n > 31 && memcmp(buf, "-----BEGIN EC PRIVATE KEY-----\n", 31) == 0);
  /* one byte short, in a heap block of exactly that size (AddressSanitizer sees any write past it): the size
   * needed, nothing written */
  {
    size_t need = 0;
    uint8_t *exact = malloc(n - 1);
    memset(exact, 0xAA, n - 1);
    CHECK_STATUS(pqkit_private_key_export(k, f, exact, n - 1, &need), PQKIT_STATUS_BUFFER_TOO_SMALL);
    CHECK(need == n);
    CHECK(exact[0] == 0xAA && exact[n - 2] == 0xAA);
    free(exact);
  }
  pqkit_private_key_free(back);
}

static void public_round_trip(PqkitPublicKey *p, uint32_t t, uint32_t f) {
  uint8_t buf[512], raw1[65], raw2[65];
  size_t n = 0, r1 = 0, r2 = 0, need = 0;
  PqkitPublicKey *back = NULL;
  CHECK_STATUS(pqkit_public_key_export(p, f, buf, sizeof buf, &n), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_public_key_import(t, f, buf, n, &back), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_public_key_export(p, PQKIT_KEY_FORMAT_RAW, raw1, sizeof raw1, &r1), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_public_key_export(back, PQKIT_KEY_FORMAT_RAW, raw2, sizeof raw2, &r2), PQKIT_STATUS_OK);
  CHECK(r1 == r2 && r1 == (is_ec(t) ? 65u : 32u) && memcmp(raw1, raw2, r1) == 0);
  if (f == PQKIT_KEY_FORMAT_SPKI_PEM) CHECK(n > 27 && memcmp(buf, "-----BEGIN PUBLIC KEY-----\n", 27) == 0);
  {
    uint8_t *exact = malloc(n - 1);
    CHECK_STATUS(pqkit_public_key_export(p, f, exact, n - 1, &need), PQKIT_STATUS_BUFFER_TOO_SMALL);
    CHECK(need == n);
    free(exact);
  }
  pqkit_public_key_free(back);
}

static void test_generate_import_export(void) {
  size_t i;
  for (i = 0; i < 4; i++) {
    uint32_t t = all_types[i], got = 0;
    PqkitPrivateKey *k = NULL;
    PqkitPublicKey *p = NULL;
    uint8_t buf[512];
    size_t n = 0;
    CHECK_STATUS(pqkit_private_key_generate(t, &k), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_private_key_type(k, &got), PQKIT_STATUS_OK);
    CHECK(got == t);
    CHECK_STATUS(pqkit_private_key_public_key(k, &p), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_public_key_type(p, &got), PQKIT_STATUS_OK);
    CHECK(got == t);
    private_round_trip(k, t, PQKIT_KEY_FORMAT_RAW);
    private_round_trip(k, t, PQKIT_KEY_FORMAT_PKCS8_DER);
    private_round_trip(k, t, PQKIT_KEY_FORMAT_PKCS8_PEM);
    public_round_trip(p, t, PQKIT_KEY_FORMAT_RAW);
    public_round_trip(p, t, PQKIT_KEY_FORMAT_SPKI_DER);
    public_round_trip(p, t, PQKIT_KEY_FORMAT_SPKI_PEM);
    if (is_ec(t)) {
      private_round_trip(k, t, PQKIT_KEY_FORMAT_SEC1_DER);
      private_round_trip(k, t, PQKIT_KEY_FORMAT_SEC1_PEM);
    } else {
      CHECK_STATUS(pqkit_private_key_export(k, PQKIT_KEY_FORMAT_SEC1_DER, buf, sizeof buf, &n),
                   PQKIT_STATUS_INVALID_PARAMETER);
      {
        PqkitPrivateKey *x = NULL;
        CHECK_STATUS(pqkit_private_key_import(t, PQKIT_KEY_FORMAT_SEC1_PEM, buf, 10, &x),
                     PQKIT_STATUS_INVALID_PARAMETER);
        CHECK(x == NULL);
      }
    }
    /* formats of the other half of the pair */
    CHECK_STATUS(pqkit_private_key_export(k, PQKIT_KEY_FORMAT_SPKI_DER, buf, sizeof buf, &n),
                 PQKIT_STATUS_INVALID_PARAMETER);
    CHECK_STATUS(pqkit_public_key_export(p, PQKIT_KEY_FORMAT_PKCS8_DER, buf, sizeof buf, &n),
                 PQKIT_STATUS_INVALID_PARAMETER);
    CHECK_STATUS(pqkit_public_key_export(p, PQKIT_KEY_FORMAT_SPKI_DER, buf, sizeof buf, &n), PQKIT_STATUS_OK);
    {
      PqkitPrivateKey *x = NULL;
      PqkitPublicKey *y = NULL;
      CHECK_STATUS(pqkit_private_key_import(t, PQKIT_KEY_FORMAT_SPKI_DER, buf, n, &x),
                   PQKIT_STATUS_INVALID_PARAMETER);
      CHECK(x == NULL);
      CHECK_STATUS(pqkit_public_key_import(t, PQKIT_KEY_FORMAT_PKCS8_DER, buf, n, &y),
                   PQKIT_STATUS_INVALID_PARAMETER);
      /* truncated DER, and a PEM with another label */
      CHECK_STATUS(pqkit_public_key_import(t, PQKIT_KEY_FORMAT_SPKI_DER, buf, n - 1, &y),
                   PQKIT_STATUS_INVALID_ENCODING);
      CHECK(y == NULL);
    }
    CHECK_STATUS(pqkit_private_key_export(k, PQKIT_KEY_FORMAT_PKCS8_PEM, buf, sizeof buf, &n), PQKIT_STATUS_OK);
    {
      PqkitPublicKey *y = NULL;
      PqkitPrivateKey *x = NULL;
      CHECK_STATUS(pqkit_public_key_import(t, PQKIT_KEY_FORMAT_SPKI_PEM, buf, n, &y), PQKIT_STATUS_INVALID_ENCODING);
      CHECK_STATUS(pqkit_private_key_import(t, PQKIT_KEY_FORMAT_PKCS8_PEM, buf, n - 30, &x),
                   PQKIT_STATUS_INVALID_ENCODING);
      /* the document of another key type */
      CHECK_STATUS(pqkit_private_key_import(t == PQKIT_KEY_TYPE_ED25519 ? PQKIT_KEY_TYPE_X25519
                                                                       : PQKIT_KEY_TYPE_ED25519,
                                            PQKIT_KEY_FORMAT_PKCS8_PEM, buf, n, &x),
                   PQKIT_STATUS_INVALID_ENCODING);
      CHECK(x == NULL && y == NULL);
    }
    /* NULL and unknown ids */
    CHECK_STATUS(pqkit_private_key_export(k, PQKIT_KEY_FORMAT_PKCS8_DER, buf, sizeof buf, NULL),
                 PQKIT_STATUS_NULL_POINTER);
    CHECK_STATUS(pqkit_private_key_export(NULL, PQKIT_KEY_FORMAT_PKCS8_DER, buf, sizeof buf, &n),
                 PQKIT_STATUS_NULL_POINTER);
    CHECK_STATUS(pqkit_private_key_export(k, 99, buf, sizeof buf, &n), PQKIT_STATUS_UNKNOWN_ALGORITHM);
    CHECK_STATUS(pqkit_public_key_export(p, 0, buf, sizeof buf, &n), PQKIT_STATUS_UNKNOWN_ALGORITHM);
    CHECK_STATUS(pqkit_public_key_export(NULL, PQKIT_KEY_FORMAT_RAW, buf, sizeof buf, &n), PQKIT_STATUS_NULL_POINTER);
    CHECK_STATUS(pqkit_private_key_public_key(k, NULL), PQKIT_STATUS_NULL_POINTER);
    CHECK_STATUS(pqkit_private_key_type(k, NULL), PQKIT_STATUS_NULL_POINTER);
    CHECK_STATUS(pqkit_public_key_type(NULL, &got), PQKIT_STATUS_NULL_POINTER);
    {
      PqkitPrivateKey *x = NULL;
      CHECK_STATUS(pqkit_private_key_import(t, PQKIT_KEY_FORMAT_RAW, NULL, 32, &x), PQKIT_STATUS_NULL_POINTER);
      CHECK_STATUS(pqkit_private_key_import(t, PQKIT_KEY_FORMAT_RAW, buf, 32, NULL), PQKIT_STATUS_NULL_POINTER);
      CHECK_STATUS(pqkit_private_key_import(t, PQKIT_KEY_FORMAT_RAW, buf, 31, &x), PQKIT_STATUS_INVALID_LENGTH);
      CHECK(x == NULL);
    }
    pqkit_public_key_free(p);
    pqkit_private_key_free(k);
  }
  {
    PqkitPrivateKey *k = NULL;
    CHECK_STATUS(pqkit_private_key_generate(0, &k), PQKIT_STATUS_UNKNOWN_ALGORITHM);
    CHECK_STATUS(pqkit_private_key_generate(5 + 100, &k), PQKIT_STATUS_UNKNOWN_ALGORITHM);
    CHECK_STATUS(pqkit_private_key_generate(PQKIT_KEY_TYPE_ED25519, NULL), PQKIT_STATUS_NULL_POINTER);
    CHECK(k == NULL);
  }
  pqkit_private_key_free(NULL);
  pqkit_public_key_free(NULL);
}

/* RFC 8032 test 1 and the PKCS#8 and SubjectPublicKeyInfo layouts of RFC 8410 (section 10). */
static void test_ed25519_known_answers(void) {
  uint8_t seed[32], pk[32], der[64], out[128], sig[64];
  size_t n = 0;
  PqkitPrivateKey *k = NULL;
  PqkitPublicKey *p = NULL;
  unhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", seed, sizeof seed);
  unhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", pk, sizeof pk);
  CHECK_STATUS(pqkit_private_key_import(PQKIT_KEY_TYPE_ED25519, PQKIT_KEY_FORMAT_RAW, seed, 32, &k), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_private_key_export(k, PQKIT_KEY_FORMAT_PKCS8_DER, out, sizeof out, &n), PQKIT_STATUS_OK);
  CHECK(n == 48 && unhex("302e020100300506032b657004220420", der, sizeof der) == 16 && memcmp(out, der, 16) == 0 &&
        memcmp(out + 16, seed, 32) == 0);
  CHECK_STATUS(pqkit_private_key_public_key(k, &p), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_public_key_export(p, PQKIT_KEY_FORMAT_SPKI_DER, out, sizeof out, &n), PQKIT_STATUS_OK);
  CHECK(n == 44 && unhex("302a300506032b6570032100", der, sizeof der) == 12 && memcmp(out, der, 12) == 0 &&
        memcmp(out + 12, pk, 32) == 0);
  /* RFC 8032 test 1 signs the empty message */
  CHECK_STATUS(pqkit_private_key_sign(k, NULL, 0, PQKIT_SIGNATURE_FORMAT_RAW, sig, sizeof sig, &n), PQKIT_STATUS_OK);
  unhex("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe2"
        "4655141438e7a100b",
        out, sizeof out);
  CHECK(n == 64 && memcmp(sig, out, 64) == 0);
  CHECK_STATUS(pqkit_public_key_verify(p, NULL, 0, PQKIT_SIGNATURE_FORMAT_RAW, sig, 64), PQKIT_STATUS_OK);
  sig[33] ^= 1; /* in S, which stays canonical */
  CHECK_STATUS(pqkit_public_key_verify(p, NULL, 0, PQKIT_SIGNATURE_FORMAT_RAW, sig, 64),
               PQKIT_STATUS_AUTHENTICATION_FAILED);
  CHECK_STATUS(pqkit_public_key_verify(p, NULL, 0, PQKIT_SIGNATURE_FORMAT_RAW, sig, 63), PQKIT_STATUS_INVALID_LENGTH);
  CHECK_STATUS(pqkit_public_key_verify(p, NULL, 0, PQKIT_SIGNATURE_FORMAT_DER, sig, 64),
               PQKIT_STATUS_INVALID_PARAMETER);
  CHECK_STATUS(pqkit_private_key_sign(k, NULL, 0, PQKIT_SIGNATURE_FORMAT_DER, sig, sizeof sig, &n),
               PQKIT_STATUS_INVALID_PARAMETER);
  CHECK_STATUS(pqkit_private_key_sign(k, NULL, 0, PQKIT_SIGNATURE_FORMAT_RAW, sig, 63, &n),
               PQKIT_STATUS_BUFFER_TOO_SMALL);
  CHECK(n == 64);
  CHECK_STATUS(pqkit_private_key_sign(k, NULL, 0, 3, sig, sizeof sig, &n), PQKIT_STATUS_UNKNOWN_ALGORITHM);
  CHECK_STATUS(pqkit_private_key_sign(k, NULL, 5, PQKIT_SIGNATURE_FORMAT_RAW, sig, sizeof sig, &n),
               PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_private_key_sign(k, NULL, 0, PQKIT_SIGNATURE_FORMAT_RAW, sig, sizeof sig, NULL),
               PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_public_key_verify(NULL, NULL, 0, PQKIT_SIGNATURE_FORMAT_RAW, sig, 64), PQKIT_STATUS_NULL_POINTER);
  /* An Ed25519 key cannot agree on a secret. */
  CHECK_STATUS(pqkit_private_key_agree(k, p, out, 32), PQKIT_STATUS_INVALID_PARAMETER);
  pqkit_public_key_free(p);
  pqkit_private_key_free(k);
}

/* ECDSA both encodings; the P-256 SubjectPublicKeyInfo prefix of RFC 5480; agreement on every curve. */
static void test_sign_and_agree(void) {
  size_t i;
  const uint8_t msg[] = "pqkit key handles";
  for (i = 0; i < 4; i++) {
    uint32_t t = all_types[i];
    PqkitPrivateKey *a = NULL, *b = NULL;
    PqkitPublicKey *ap = NULL, *bp = NULL;
    uint8_t s1[32], s2[32], sig[80];
    size_t n = 0;
    CHECK_STATUS(pqkit_private_key_generate(t, &a), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_private_key_generate(t, &b), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_private_key_public_key(a, &ap), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_private_key_public_key(b, &bp), PQKIT_STATUS_OK);
    if (t == PQKIT_KEY_TYPE_ED25519) {
      CHECK_STATUS(pqkit_private_key_agree(a, bp, s1, 32), PQKIT_STATUS_INVALID_PARAMETER);
    } else {
      CHECK_STATUS(pqkit_private_key_agree(a, bp, s1, 32), PQKIT_STATUS_OK);
      CHECK_STATUS(pqkit_private_key_agree(b, ap, s2, 32), PQKIT_STATUS_OK);
      CHECK(memcmp(s1, s2, 32) == 0 && !all_zero(s1, 32));
      CHECK_STATUS(pqkit_private_key_agree(a, bp, s1, 31), PQKIT_STATUS_INVALID_LENGTH);
      CHECK_STATUS(pqkit_private_key_agree(a, NULL, s1, 32), PQKIT_STATUS_NULL_POINTER);
      CHECK_STATUS(pqkit_private_key_agree(a, bp, NULL, 32), PQKIT_STATUS_NULL_POINTER);
    }
    if (t == PQKIT_KEY_TYPE_X25519) {
      CHECK_STATUS(pqkit_private_key_sign(a, msg, sizeof msg, PQKIT_SIGNATURE_FORMAT_RAW, sig, sizeof sig, &n),
                   PQKIT_STATUS_INVALID_PARAMETER);
      CHECK_STATUS(pqkit_public_key_verify(ap, msg, sizeof msg, PQKIT_SIGNATURE_FORMAT_RAW, sig, 64),
                   PQKIT_STATUS_INVALID_PARAMETER);
      /* an all-zero (small order) peer key gives no secret */
      {
        PqkitPublicKey *zero = NULL;
        uint8_t z[32] = {0};
        CHECK_STATUS(pqkit_public_key_import(t, PQKIT_KEY_FORMAT_RAW, z, 32, &zero), PQKIT_STATUS_OK);
        memset(s1, 0x55, 32);
        CHECK_STATUS(pqkit_private_key_agree(a, zero, s1, 32), PQKIT_STATUS_INVALID_ENCODING);
        CHECK(all_zero(s1, 32));
        pqkit_public_key_free(zero);
      }
    }
    if (is_ec(t)) {
      uint32_t f;
      for (f = PQKIT_SIGNATURE_FORMAT_RAW; f <= PQKIT_SIGNATURE_FORMAT_DER; f++) {
        CHECK_STATUS(pqkit_private_key_sign(a, msg, sizeof msg, f, sig, sizeof sig, &n), PQKIT_STATUS_OK);
        if (f == PQKIT_SIGNATURE_FORMAT_RAW) CHECK(n == 64);
        if (f == PQKIT_SIGNATURE_FORMAT_DER) CHECK(n >= 8 && n <= PQKIT_ECDSA_DER_SIGNATURE_MAX_LEN && sig[0] == 0x30);
        CHECK_STATUS(pqkit_public_key_verify(ap, msg, sizeof msg, f, sig, n), PQKIT_STATUS_OK);
        CHECK_STATUS(pqkit_public_key_verify(bp, msg, sizeof msg, f, sig, n), PQKIT_STATUS_AUTHENTICATION_FAILED);
        CHECK_STATUS(pqkit_public_key_verify(ap, msg, sizeof msg - 1, f, sig, n), PQKIT_STATUS_AUTHENTICATION_FAILED);
        CHECK(pqkit_public_key_verify(ap, msg, sizeof msg, f, sig, n - 1) != PQKIT_STATUS_OK);
      }
      /* the raw signature and the API over raw keys agree (RFC 6979 is deterministic) */
      {
        uint8_t raw_sk[32], sig2[64];
        size_t rl = 0;
        CHECK_STATUS(pqkit_private_key_sign(a, msg, sizeof msg, PQKIT_SIGNATURE_FORMAT_RAW, sig, sizeof sig, &n),
                     PQKIT_STATUS_OK);
        CHECK_STATUS(pqkit_private_key_export(a, PQKIT_KEY_FORMAT_RAW, raw_sk, sizeof raw_sk, &rl), PQKIT_STATUS_OK);
        CHECK_STATUS(pqkit_ecdsa_sign(t == PQKIT_KEY_TYPE_P256 ? PQKIT_EC_CURVE_P256 : PQKIT_EC_CURVE_SECP256K1, raw_sk,
                                      32, msg, sizeof msg, sig2, 64),
                     PQKIT_STATUS_OK);
        CHECK(memcmp(sig, sig2, 64) == 0);
      }
    }
    /* keys of two types do not agree */
    {
      PqkitPrivateKey *c = NULL;
      PqkitPublicKey *cp = NULL;
      uint32_t other = all_types[(i + 1) % 4];
      CHECK_STATUS(pqkit_private_key_generate(other, &c), PQKIT_STATUS_OK);
      CHECK_STATUS(pqkit_private_key_public_key(c, &cp), PQKIT_STATUS_OK);
      CHECK_STATUS(pqkit_private_key_agree(a, cp, s1, 32), PQKIT_STATUS_INVALID_PARAMETER);
      pqkit_public_key_free(cp);
      pqkit_private_key_free(c);
    }
    pqkit_public_key_free(ap);
    pqkit_public_key_free(bp);
    pqkit_private_key_free(a);
    pqkit_private_key_free(b);
  }
  {
    /* RFC 5480 P-256 SubjectPublicKeyInfo: id-ecPublicKey, prime256v1, then the uncompressed point */
    uint8_t sk[32], pk[65], prefix[32], out[128];
    size_t n = 0;
    PqkitPrivateKey *k = NULL;
    PqkitPublicKey *p = NULL;
    memset(sk, 0, 32);
    sk[31] = 7;
    CHECK_STATUS(pqkit_ec_public_key(PQKIT_EC_CURVE_P256, sk, 32, pk, 65), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_private_key_import(PQKIT_KEY_TYPE_P256, PQKIT_KEY_FORMAT_RAW, sk, 32, &k), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_private_key_public_key(k, &p), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_public_key_export(p, PQKIT_KEY_FORMAT_SPKI_DER, out, sizeof out, &n), PQKIT_STATUS_OK);
    CHECK(unhex("3059301306072a8648ce3d020106082a8648ce3d030107034200", prefix, sizeof prefix) == 26);
    CHECK(n == 91 && memcmp(out, prefix, 26) == 0 && memcmp(out + 26, pk, 65) == 0);
    /* the compressed point is accepted as input */
    {
      PqkitPublicKey *q = NULL;
      uint8_t c[33], raw[65];
      c[0] = (uint8_t)(2 + (pk[64] & 1));
      memcpy(c + 1, pk + 1, 32);
      CHECK_STATUS(pqkit_public_key_import(PQKIT_KEY_TYPE_P256, PQKIT_KEY_FORMAT_RAW, c, 33, &q), PQKIT_STATUS_OK);
      CHECK_STATUS(pqkit_public_key_export(q, PQKIT_KEY_FORMAT_RAW, raw, sizeof raw, &n), PQKIT_STATUS_OK);
      CHECK(n == 65 && memcmp(raw, pk, 65) == 0);
      pqkit_public_key_free(q);
    }
    /* a zero scalar is not a key */
    memset(sk, 0, 32);
    {
      PqkitPrivateKey *z = NULL;
      CHECK(pqkit_private_key_import(PQKIT_KEY_TYPE_P256, PQKIT_KEY_FORMAT_RAW, sk, 32, &z) != PQKIT_STATUS_OK);
      CHECK(z == NULL);
    }
    pqkit_public_key_free(p);
    pqkit_private_key_free(k);
  }
}

void test_keys(void) {
  test_generate_import_export();
  test_ed25519_known_answers();
  test_sign_and_agree();
}

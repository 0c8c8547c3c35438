/*
 * RSA through the key handles: generation, PKCS#1 / PKCS#8 / SubjectPublicKeyInfo round trips, PSS and
 * PKCS#1 v1.5 signatures, OAEP with and without a label, and the rejections (wrong key type, SHA-1 for
 * signatures, unknown ids, NULL, short buffers, a modified ciphertext). Interop with openssl is in
 * tests/keys_openssl.rs.
 */
#include "check.h"

static void rsa_formats(PqkitPrivateKey *k, PqkitPublicKey *p) {
  static const uint32_t priv_formats[4] = {PQKIT_KEY_FORMAT_PKCS8_DER, PQKIT_KEY_FORMAT_PKCS8_PEM,
                                           PQKIT_KEY_FORMAT_PKCS1_DER, PQKIT_KEY_FORMAT_PKCS1_PEM};
  static const uint32_t pub_formats[4] = {PQKIT_KEY_FORMAT_SPKI_DER, PQKIT_KEY_FORMAT_SPKI_PEM,
                                          PQKIT_KEY_FORMAT_PKCS1_DER, PQKIT_KEY_FORMAT_PKCS1_PEM};
  uint8_t *a = malloc(4096), *b = malloc(4096);
  size_t i, na = 0, nb = 0, need = 0;
  uint32_t t = 0;
  for (i = 0; i < 4; i++) {
    PqkitPrivateKey *k2 = NULL;
    PqkitPublicKey *p2 = NULL;
    CHECK_STATUS(pqkit_private_key_export(k, priv_formats[i], a, 4096, &na), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_private_key_import(PQKIT_KEY_TYPE_RSA, priv_formats[i], a, na, &k2), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_private_key_export(k2, priv_formats[i], b, 4096, &nb), PQKIT_STATUS_OK);
    CHECK(na == nb && memcmp(a, b, na) == 0);
    CHECK_STATUS(pqkit_private_key_type(k2, &t), PQKIT_STATUS_OK);
    CHECK(t == PQKIT_KEY_TYPE_RSA);
    CHECK_STATUS(pqkit_private_key_export(k, priv_formats[i], a, na - 1, &need), PQKIT_STATUS_BUFFER_TOO_SMALL);
    CHECK(need == na);
    CHECK_STATUS(pqkit_public_key_export(p, pub_formats[i], a, 4096, &na), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_public_key_import(PQKIT_KEY_TYPE_RSA, pub_formats[i], a, na, &p2), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_public_key_export(p2, pub_formats[i], b, 4096, &nb), PQKIT_STATUS_OK);
    CHECK(na == nb && memcmp(a, b, na) == 0);
    pqkit_public_key_free(p2);
    pqkit_private_key_free(k2);
  }
  CHECK_STATUS(pqkit_private_key_export(k, PQKIT_KEY_FORMAT_PKCS1_PEM, a, 4096, &na), PQKIT_STATUS_OK);
  CHECK(na > 32 && memcmp(a, "-----BEGIN RSA PRIVATE KEY-----\n", 32) == 0);
  CHECK_STATUS(pqkit_public_key_export(p, PQKIT_KEY_FORMAT_PKCS1_PEM, a, 4096, &na), PQKIT_STATUS_OK);
  CHECK(na > 31 && memcmp(a, "-----BEGIN RSA PUBLIC KEY-----\n", 31) == 0);
  /* formats RSA has not, and PKCS#1 for other key types */
  CHECK_STATUS(pqkit_private_key_export(k, PQKIT_KEY_FORMAT_RAW, a, 4096, &na), PQKIT_STATUS_INVALID_PARAMETER);
  CHECK_STATUS(pqkit_private_key_export(k, PQKIT_KEY_FORMAT_SEC1_DER, a, 4096, &na), PQKIT_STATUS_INVALID_PARAMETER);
  CHECK_STATUS(pqkit_public_key_export(p, PQKIT_KEY_FORMAT_RAW, a, 4096, &na), PQKIT_STATUS_INVALID_PARAMETER);
  {
    PqkitPrivateKey *ed = NULL, *x = NULL;
    PqkitPublicKey *y = NULL;
    CHECK_STATUS(pqkit_private_key_generate(PQKIT_KEY_TYPE_ED25519, &ed), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_private_key_export(ed, PQKIT_KEY_FORMAT_PKCS1_DER, a, 4096, &na),
                 PQKIT_STATUS_INVALID_PARAMETER);
    /* an RSA PKCS#1 document read as the wrong type or format */
    CHECK_STATUS(pqkit_private_key_export(k, PQKIT_KEY_FORMAT_PKCS1_DER, a, 4096, &na), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_private_key_import(PQKIT_KEY_TYPE_P256, PQKIT_KEY_FORMAT_PKCS1_DER, a, na, &x),
                 PQKIT_STATUS_INVALID_PARAMETER);
    CHECK_STATUS(pqkit_private_key_import(PQKIT_KEY_TYPE_RSA, PQKIT_KEY_FORMAT_PKCS8_DER, a, na, &x),
                 PQKIT_STATUS_INVALID_ENCODING);
    CHECK_STATUS(pqkit_private_key_import(PQKIT_KEY_TYPE_RSA, PQKIT_KEY_FORMAT_PKCS1_DER, a, na - 1, &x),
                 PQKIT_STATUS_INVALID_ENCODING);
    CHECK_STATUS(pqkit_public_key_import(PQKIT_KEY_TYPE_RSA, PQKIT_KEY_FORMAT_PKCS8_DER, a, na, &y),
                 PQKIT_STATUS_INVALID_PARAMETER);
    CHECK(x == NULL && y == NULL);
    pqkit_private_key_free(ed);
  }
  free(a);
  free(b);
}

static void rsa_sign_encrypt(PqkitPrivateKey *k, PqkitPublicKey *p) {
  const uint8_t msg[] = "an RSA message";
  uint8_t sig[256], sig2[256], ct[256], back[256];
  size_t n = 0, n2 = 0, bl = 0;
  uint32_t pad, h;
  for (pad = PQKIT_RSA_PADDING_PSS; pad <= PQKIT_RSA_PADDING_PKCS1V15; pad++) {
    /* SHA-256, SHA-384, SHA-512: the hashes both paddings sign with */
    for (h = PQKIT_RSA_HASH_SHA256; h <= PQKIT_RSA_HASH_SHA512; h++) {
      CHECK_STATUS(pqkit_rsa_sign(k, pad, h, msg, sizeof msg, sig, sizeof sig, &n), PQKIT_STATUS_OK);
      CHECK(n == 256);
      CHECK_STATUS(pqkit_rsa_verify(p, pad, h, msg, sizeof msg, sig, n), PQKIT_STATUS_OK);
      CHECK_STATUS(pqkit_rsa_verify(p, pad, h, msg, sizeof msg - 1, sig, n), PQKIT_STATUS_AUTHENTICATION_FAILED);
      CHECK_STATUS(pqkit_rsa_verify(p, pad == 1 ? 2 : 1, h, msg, sizeof msg, sig, n),
                   PQKIT_STATUS_AUTHENTICATION_FAILED);
      CHECK_STATUS(pqkit_rsa_verify(p, pad, h, msg, sizeof msg, sig, n - 1), PQKIT_STATUS_INVALID_LENGTH);
      /* PSS is randomised, PKCS#1 v1.5 deterministic */
      CHECK_STATUS(pqkit_rsa_sign(k, pad, h, msg, sizeof msg, sig2, sizeof sig2, &n2), PQKIT_STATUS_OK);
      CHECK((memcmp(sig, sig2, 256) == 0) == (pad == PQKIT_RSA_PADDING_PKCS1V15));
    }
  }
  CHECK_STATUS(pqkit_rsa_sign(k, PQKIT_RSA_PADDING_PSS, PQKIT_RSA_HASH_SHA224, msg, sizeof msg, sig, sizeof sig, &n),
               PQKIT_STATUS_INVALID_PARAMETER);
  CHECK_STATUS(pqkit_rsa_sign(k, PQKIT_RSA_PADDING_PSS, PQKIT_RSA_HASH_SHA1, msg, sizeof msg, sig, sizeof sig, &n),
               PQKIT_STATUS_INVALID_PARAMETER);
  CHECK_STATUS(pqkit_rsa_verify(p, PQKIT_RSA_PADDING_PKCS1V15, PQKIT_RSA_HASH_SHA1, msg, sizeof msg, sig, 256),
               PQKIT_STATUS_INVALID_PARAMETER);
  CHECK_STATUS(pqkit_rsa_sign(k, 3, PQKIT_RSA_HASH_SHA256, msg, sizeof msg, sig, sizeof sig, &n),
               PQKIT_STATUS_UNKNOWN_ALGORITHM);
  CHECK_STATUS(pqkit_rsa_sign(k, PQKIT_RSA_PADDING_PSS, 7, msg, sizeof msg, sig, sizeof sig, &n),
               PQKIT_STATUS_UNKNOWN_ALGORITHM);
  CHECK_STATUS(pqkit_rsa_sign(k, PQKIT_RSA_PADDING_PSS, PQKIT_RSA_HASH_SHA256, msg, sizeof msg, sig, 255, &n),
               PQKIT_STATUS_BUFFER_TOO_SMALL);
  CHECK(n == 256);
  CHECK_STATUS(pqkit_rsa_sign(k, PQKIT_RSA_PADDING_PSS, PQKIT_RSA_HASH_SHA256, msg, sizeof msg, sig, 256, NULL),
               PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_rsa_sign(NULL, PQKIT_RSA_PADDING_PSS, PQKIT_RSA_HASH_SHA256, msg, sizeof msg, sig, 256, &n),
               PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_rsa_verify(p, PQKIT_RSA_PADDING_PSS, PQKIT_RSA_HASH_SHA256, NULL, 3, sig, 256),
               PQKIT_STATUS_NULL_POINTER);
  /* an RSA key on the generic sign, and a non-RSA key on the RSA functions */
  CHECK_STATUS(pqkit_private_key_sign(k, msg, sizeof msg, PQKIT_SIGNATURE_FORMAT_RAW, sig, sizeof sig, &n),
               PQKIT_STATUS_INVALID_PARAMETER);
  CHECK_STATUS(pqkit_public_key_verify(p, msg, sizeof msg, PQKIT_SIGNATURE_FORMAT_RAW, sig, 256),
               PQKIT_STATUS_INVALID_PARAMETER);
  CHECK_STATUS(pqkit_private_key_agree(k, p, sig, 32), PQKIT_STATUS_INVALID_PARAMETER);
  {
    PqkitPrivateKey *ec = NULL;
    PqkitPublicKey *ecp = NULL;
    CHECK_STATUS(pqkit_private_key_generate(PQKIT_KEY_TYPE_P256, &ec), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_private_key_public_key(ec, &ecp), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_rsa_sign(ec, PQKIT_RSA_PADDING_PSS, PQKIT_RSA_HASH_SHA256, msg, sizeof msg, sig, 256, &n),
                 PQKIT_STATUS_INVALID_PARAMETER);
    CHECK_STATUS(pqkit_rsa_oaep_encrypt(ecp, PQKIT_RSA_HASH_SHA256, NULL, 0, msg, sizeof msg, ct, 256, &n),
                 PQKIT_STATUS_INVALID_PARAMETER);
    pqkit_public_key_free(ecp);
    pqkit_private_key_free(ec);
  }

  /* OAEP: every hash, with and without a label */
  for (h = PQKIT_RSA_HASH_SHA224; h <= PQKIT_RSA_HASH_SHA512_256 + 1; h++) {
    uint32_t hid = h > PQKIT_RSA_HASH_SHA512_256 ? PQKIT_RSA_HASH_SHA1 : h;
    const uint8_t label[] = "label";
    CHECK_STATUS(pqkit_rsa_oaep_encrypt(p, hid, label, 5, msg, sizeof msg, ct, sizeof ct, &n), PQKIT_STATUS_OK);
    CHECK(n == 256);
    memset(back, 0, sizeof back);
    CHECK_STATUS(pqkit_rsa_oaep_decrypt(k, hid, label, 5, ct, n, back, sizeof back, &bl), PQKIT_STATUS_OK);
    CHECK(bl == sizeof msg && memcmp(back, msg, bl) == 0);
    CHECK_STATUS(pqkit_rsa_oaep_decrypt(k, hid, label, 4, ct, n, back, sizeof back, &bl),
                 PQKIT_STATUS_INVALID_ENCODING);
    CHECK_STATUS(pqkit_rsa_oaep_decrypt(k, hid, NULL, 0, ct, n, back, sizeof back, &bl),
                 PQKIT_STATUS_INVALID_ENCODING);
    ct[100] ^= 1;
    CHECK_STATUS(pqkit_rsa_oaep_decrypt(k, hid, label, 5, ct, n, back, sizeof back, &bl),
                 PQKIT_STATUS_INVALID_ENCODING);
    ct[100] ^= 1;
    CHECK_STATUS(pqkit_rsa_oaep_decrypt(k, hid, label, 5, ct, n, back, sizeof msg - 1, &bl),
                 PQKIT_STATUS_BUFFER_TOO_SMALL);
    CHECK(bl == sizeof msg);
  }
  {
    /* 2048-bit modulus, SHA-256: at most 256 - 2*32 - 2 = 190 bytes */
    uint8_t big[191];
    memset(big, 7, sizeof big);
    CHECK_STATUS(pqkit_rsa_oaep_encrypt(p, PQKIT_RSA_HASH_SHA256, NULL, 0, big, 190, ct, sizeof ct, &n),
                 PQKIT_STATUS_OK);
    CHECK(pqkit_rsa_oaep_encrypt(p, PQKIT_RSA_HASH_SHA256, NULL, 0, big, 191, ct, sizeof ct, &n) != PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_rsa_oaep_encrypt(p, PQKIT_RSA_HASH_SHA256, NULL, 0, big, 10, ct, 255, &n),
                 PQKIT_STATUS_BUFFER_TOO_SMALL);
    CHECK(n == 256);
    CHECK_STATUS(pqkit_rsa_oaep_encrypt(p, PQKIT_RSA_HASH_SHA256, NULL, 0, big, 10, ct, 256, NULL),
                 PQKIT_STATUS_NULL_POINTER);
    CHECK(pqkit_rsa_oaep_decrypt(k, PQKIT_RSA_HASH_SHA256, NULL, 0, ct, 255, back, sizeof back, &bl) !=
          PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_rsa_oaep_decrypt(k, PQKIT_RSA_HASH_SHA256, NULL, 0, NULL, 256, back, sizeof back, &bl),
                 PQKIT_STATUS_NULL_POINTER);
  }
}

void test_rsa(void) {
  PqkitPrivateKey *k = NULL;
  PqkitPublicKey *p = NULL;
  CHECK_STATUS(pqkit_private_key_generate_rsa(1024, &k), PQKIT_STATUS_INVALID_PARAMETER);
  CHECK_STATUS(pqkit_private_key_generate_rsa(2048, NULL), PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_private_key_generate(PQKIT_KEY_TYPE_RSA, &k), PQKIT_STATUS_INVALID_PARAMETER);
  CHECK(k == NULL);
  CHECK_STATUS(pqkit_private_key_generate_rsa(2048, &k), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_private_key_public_key(k, &p), PQKIT_STATUS_OK);
  if (k != NULL && p != NULL) {
    rsa_formats(k, p);
    rsa_sign_encrypt(k, p);
  }
  pqkit_public_key_free(p);
  pqkit_private_key_free(k);
}

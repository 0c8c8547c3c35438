/*
 * HPKE (every KEM, the four modes, seal / open / export, export-only) and the hybrid KEMs X-Wing and
 * X25519MLKEM768 from C: round trips and every rejection (wrong keys, modified data, short buffers, NULL,
 * unknown ids, a sender asked to open). Published vectors are checked in tests/kem_vectors.rs.
 */
#include "check.h"

static void test_hybrid(void) {
  const uint32_t kems[2] = {PQKIT_HYBRID_KEM_XWING, PQKIT_HYBRID_KEM_X25519_MLKEM768};
  size_t i;
  for (i = 0; i < 2; i++) {
    size_t sl = 0, el = 0, cl = 0, ssl = 0;
    uint8_t seed[96], seed2[96], ek[1216], ek2[1216], ct[1120], ss1[64], ss2[64], ss3[64];
    CHECK_STATUS(pqkit_hybrid_kem_lengths(kems[i], &sl, &el, &cl, &ssl), PQKIT_STATUS_OK);
    CHECK(sl == (i == 0 ? 32u : 96u) && el == 1216 && cl == 1120 && ssl == (i == 0 ? 32u : 64u));
    CHECK_STATUS(pqkit_hybrid_kem_keygen(kems[i], seed, sl, ek, el), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_hybrid_kem_public_key(kems[i], seed, sl, ek2, el), PQKIT_STATUS_OK);
    CHECK(memcmp(ek, ek2, el) == 0);
    CHECK_STATUS(pqkit_hybrid_kem_encapsulate(kems[i], ek, el, ct, cl, ss1, ssl), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_hybrid_kem_decapsulate(kems[i], seed, sl, ct, cl, ss2, ssl), PQKIT_STATUS_OK);
    CHECK(memcmp(ss1, ss2, ssl) == 0 && !all_zero(ss1, ssl));
    /* another key: another secret (implicit rejection), still OK */
    CHECK_STATUS(pqkit_hybrid_kem_keygen(kems[i], seed2, sl, ek2, el), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_hybrid_kem_decapsulate(kems[i], seed2, sl, ct, cl, ss3, ssl), PQKIT_STATUS_OK);
    CHECK(memcmp(ss1, ss3, ssl) != 0);
    ct[5] ^= 1; /* in the ML-KEM part */
    CHECK_STATUS(pqkit_hybrid_kem_decapsulate(kems[i], seed, sl, ct, cl, ss3, ssl), PQKIT_STATUS_OK);
    CHECK(memcmp(ss1, ss3, ssl) != 0);
    /* lengths and NULL */
    CHECK_STATUS(pqkit_hybrid_kem_keygen(kems[i], seed, sl - 1, ek, el), PQKIT_STATUS_INVALID_LENGTH);
    CHECK_STATUS(pqkit_hybrid_kem_keygen(kems[i], seed, sl, ek, el + 1 > 1216 ? el - 1 : el), PQKIT_STATUS_INVALID_LENGTH);
    CHECK_STATUS(pqkit_hybrid_kem_public_key(kems[i], seed, sl + 1, ek, el), PQKIT_STATUS_INVALID_LENGTH);
    CHECK_STATUS(pqkit_hybrid_kem_public_key(kems[i], seed, sl, ek2, el - 1), PQKIT_STATUS_INVALID_LENGTH);
    CHECK_STATUS(pqkit_hybrid_kem_encapsulate(kems[i], ek, el - 1, ct, cl, ss1, ssl), PQKIT_STATUS_INVALID_LENGTH);
    CHECK_STATUS(pqkit_hybrid_kem_encapsulate(kems[i], ek, el, ct, cl - 1, ss1, ssl), PQKIT_STATUS_INVALID_LENGTH);
    CHECK_STATUS(pqkit_hybrid_kem_encapsulate(kems[i], ek, el, ct, cl, ss1, ssl - 1), PQKIT_STATUS_INVALID_LENGTH);
    memset(ss3, 0x77, sizeof ss3);
    CHECK_STATUS(pqkit_hybrid_kem_decapsulate(kems[i], seed, sl, ct, cl - 1, ss3, ssl), PQKIT_STATUS_INVALID_LENGTH);
    CHECK(all_zero(ss3, ssl));
    CHECK_STATUS(pqkit_hybrid_kem_decapsulate(kems[i], NULL, sl, ct, cl, ss3, ssl), PQKIT_STATUS_NULL_POINTER);
    CHECK_STATUS(pqkit_hybrid_kem_decapsulate(kems[i], seed, sl, ct, cl, ss3, ssl - 1), PQKIT_STATUS_INVALID_LENGTH);
    CHECK_STATUS(pqkit_hybrid_kem_decapsulate(kems[i], seed, sl - 1, ct, cl, ss3, ssl), PQKIT_STATUS_INVALID_LENGTH);
    CHECK_STATUS(pqkit_hybrid_kem_encapsulate(kems[i], ek, el, NULL, cl, ss1, ssl), PQKIT_STATUS_NULL_POINTER);
    CHECK_STATUS(pqkit_hybrid_kem_lengths(kems[i], &sl, NULL, &cl, &ssl), PQKIT_STATUS_NULL_POINTER);
  }
  {
    size_t x = 0;
    uint8_t b[32];
    CHECK_STATUS(pqkit_hybrid_kem_lengths(3, &x, &x, &x, &x), PQKIT_STATUS_UNKNOWN_ALGORITHM);
    CHECK_STATUS(pqkit_hybrid_kem_keygen(0, b, 32, b, 32), PQKIT_STATUS_UNKNOWN_ALGORITHM);
  }
}

/* One exchange in `mode` for the suite; checks seal/open in order, tampering and exports. */
static void hpke_exchange(uint32_t kem, uint32_t kdf, uint32_t aead, uint32_t mode_id) {
  size_t skl = 0, pkl = 0, encl = 0, n = 0, m = 0;
  uint8_t *skr, *pkr, *sks, *pks, *enc;
  uint8_t ct[64], pt[64], e1[40], e2[40];
  const uint8_t psk[32] = {1, 2, 3}, psk_id[] = "id";
  PqkitHpkeMode smode, rmode;
  PqkitHpkeContext *tx = NULL, *rx = NULL;
  CHECK_STATUS(pqkit_hpke_kem_lengths(kem, &skl, &pkl, &encl), PQKIT_STATUS_OK);
  skr = malloc(skl);
  sks = malloc(skl);
  pkr = malloc(pkl);
  pks = malloc(pkl);
  enc = malloc(encl);
  CHECK_STATUS(pqkit_hpke_generate_key_pair(kem, skr, skl, pkr, pkl), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_hpke_generate_key_pair(kem, sks, skl, pks, pkl), PQKIT_STATUS_OK);
  memset(&smode, 0, sizeof smode);
  smode.mode = mode_id;
  if (mode_id == PQKIT_HPKE_MODE_ID_PSK || mode_id == PQKIT_HPKE_MODE_ID_AUTH_PSK) {
    smode.psk = psk;
    smode.psk_len = sizeof psk;
    smode.psk_id = psk_id;
    smode.psk_id_len = 2;
  }
  rmode = smode;
  if (mode_id >= PQKIT_HPKE_MODE_ID_AUTH) {
    smode.auth_key = sks;
    smode.auth_key_len = skl;
    rmode.auth_key = pks;
    rmode.auth_key_len = pkl;
  }
  /* enc one byte short: the size needed, and no context */
  CHECK_STATUS(pqkit_hpke_sender_new(kem, kdf, aead, pkr, pkl, (const uint8_t *)"info", 4, &smode, enc, encl - 1, &n,
                                     &tx),
               PQKIT_STATUS_BUFFER_TOO_SMALL);
  CHECK(n == encl && tx == NULL);
  CHECK_STATUS(pqkit_hpke_sender_new(kem, kdf, aead, pkr, pkl, (const uint8_t *)"info", 4, &smode, enc, encl, &n, &tx),
               PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_hpke_recipient_new(kem, kdf, aead, enc, encl, skr, skl, (const uint8_t *)"info", 4, &rmode, &rx),
               PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_hpke_export(tx, (const uint8_t *)"e", 1, e1, sizeof e1), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_hpke_export(rx, (const uint8_t *)"e", 1, e2, sizeof e2), PQKIT_STATUS_OK);
  CHECK(memcmp(e1, e2, sizeof e1) == 0);
  if (aead == 0xffff) {
    CHECK_STATUS(pqkit_hpke_seal(tx, NULL, 0, (const uint8_t *)"x", 1, ct, sizeof ct, &n), PQKIT_STATUS_INVALID_PARAMETER);
  } else {
    CHECK_STATUS(pqkit_hpke_seal(tx, (const uint8_t *)"a", 1, (const uint8_t *)"first", 5, ct, sizeof ct, &n),
                 PQKIT_STATUS_OK);
    CHECK(n == 21);
    CHECK_STATUS(pqkit_hpke_open(rx, (const uint8_t *)"a", 1, ct, n, pt, 4, &m), PQKIT_STATUS_BUFFER_TOO_SMALL);
    CHECK(m == 5);
    CHECK_STATUS(pqkit_hpke_open(rx, (const uint8_t *)"b", 1, ct, n, pt, sizeof pt, &m),
                 PQKIT_STATUS_AUTHENTICATION_FAILED);
    ct[0] ^= 1;
    CHECK_STATUS(pqkit_hpke_open(rx, (const uint8_t *)"a", 1, ct, n, pt, sizeof pt, &m),
                 PQKIT_STATUS_AUTHENTICATION_FAILED);
    ct[0] ^= 1;
    /* failures did not advance the sequence number */
    CHECK_STATUS(pqkit_hpke_open(rx, (const uint8_t *)"a", 1, ct, n, pt, sizeof pt, &m), PQKIT_STATUS_OK);
    CHECK(m == 5 && memcmp(pt, "first", 5) == 0);
    CHECK_STATUS(pqkit_hpke_seal(tx, NULL, 0, (const uint8_t *)"second", 6, ct, 21, &n), PQKIT_STATUS_BUFFER_TOO_SMALL);
    CHECK(n == 22);
    CHECK_STATUS(pqkit_hpke_seal(tx, NULL, 0, (const uint8_t *)"second", 6, ct, sizeof ct, &n), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_hpke_open(rx, NULL, 0, ct, n, pt, sizeof pt, &m), PQKIT_STATUS_OK);
    CHECK(m == 6 && memcmp(pt, "second", 6) == 0);
    /* the wrong side of the exchange */
    CHECK_STATUS(pqkit_hpke_open(tx, NULL, 0, ct, n, pt, sizeof pt, &m), PQKIT_STATUS_BAD_STATE);
    CHECK_STATUS(pqkit_hpke_seal(rx, NULL, 0, pt, 1, ct, sizeof ct, &n), PQKIT_STATUS_BAD_STATE);
    CHECK_STATUS(pqkit_hpke_seal(tx, NULL, 0, pt, 1, ct, sizeof ct, NULL), PQKIT_STATUS_NULL_POINTER);
  }
  pqkit_hpke_context_free(tx);
  pqkit_hpke_context_free(rx);
  /* a different info or PSK on the recipient side: a different context (exports differ / opening fails) */
  rx = NULL;
  CHECK_STATUS(pqkit_hpke_recipient_new(kem, kdf, aead, enc, encl, skr, skl, (const uint8_t *)"inf0", 4, &rmode, &rx),
               PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_hpke_export(rx, (const uint8_t *)"e", 1, e2, sizeof e2), PQKIT_STATUS_OK);
  CHECK(memcmp(e1, e2, sizeof e1) != 0);
  pqkit_hpke_context_free(rx);
  free(skr);
  free(sks);
  free(pkr);
  free(pks);
  free(enc);
}

static void test_hpke(void) {
  const uint32_t kems[5] = {0x0020, 0x0040, 0x0041, 0x0042, 0x647a};
  size_t i;
  uint32_t mode;
  for (i = 0; i < 5; i++) {
    hpke_exchange(kems[i], 0x0001, 0x0003, PQKIT_HPKE_MODE_ID_BASE);
    hpke_exchange(kems[i], 0x0011, 0x0001, PQKIT_HPKE_MODE_ID_PSK);
  }
  for (mode = 0; mode <= 3; mode++) hpke_exchange(0x0020, 0x0003, 0x0002, mode);
  hpke_exchange(0x0020, 0x0002, 0xffff, PQKIT_HPKE_MODE_ID_BASE);
  {
    size_t skl = 0, pkl = 0, encl = 0, n = 0;
    uint8_t sk[32], pk[32], enc[32], ikm[16] = {0};
    PqkitHpkeContext *c = NULL;
    PqkitHpkeMode m;
    CHECK_STATUS(pqkit_hpke_kem_lengths(0x0021, &skl, &pkl, &encl), PQKIT_STATUS_UNKNOWN_ALGORITHM);
    CHECK_STATUS(pqkit_hpke_kem_lengths(0x0020, &skl, &pkl, NULL), PQKIT_STATUS_NULL_POINTER);
    CHECK_STATUS(pqkit_hpke_generate_key_pair(0x0020, sk, 31, pk, 32), PQKIT_STATUS_INVALID_LENGTH);
    CHECK_STATUS(pqkit_hpke_derive_key_pair(0x0020, ikm, sizeof ikm, sk, 32, pk, 32), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_hpke_sender_new(0x0020, 0x0001, 0x0004, pk, 32, NULL, 0, NULL, enc, 32, &n, &c),
                 PQKIT_STATUS_UNKNOWN_ALGORITHM);
    CHECK_STATUS(pqkit_hpke_sender_new(0x0020, 0x0001, 0x0001, pk, 31, NULL, 0, NULL, enc, 32, &n, &c),
                 PQKIT_STATUS_INVALID_LENGTH);
    CHECK_STATUS(pqkit_hpke_sender_new(0x0020, 0x0001, 0x0001, pk, 32, NULL, 0, NULL, enc, 32, &n, NULL),
                 PQKIT_STATUS_NULL_POINTER);
    memset(&m, 0, sizeof m);
    m.mode = PQKIT_HPKE_MODE_ID_PSK; /* no PSK given */
    CHECK_STATUS(pqkit_hpke_sender_new(0x0020, 0x0001, 0x0001, pk, 32, NULL, 0, &m, enc, 32, &n, &c),
                 PQKIT_STATUS_INVALID_LENGTH);
    m.mode = 4;
    CHECK_STATUS(pqkit_hpke_sender_new(0x0020, 0x0001, 0x0001, pk, 32, NULL, 0, &m, enc, 32, &n, &c),
                 PQKIT_STATUS_UNKNOWN_ALGORITHM);
    m.mode = PQKIT_HPKE_MODE_ID_PSK;
    m.psk_len = 32; /* a length without a pointer */
    CHECK_STATUS(pqkit_hpke_sender_new(0x0020, 0x0001, 0x0001, pk, 32, NULL, 0, &m, enc, 32, &n, &c),
                 PQKIT_STATUS_NULL_POINTER);
    CHECK(c == NULL);
    CHECK_STATUS(pqkit_hpke_export(NULL, NULL, 0, sk, 32), PQKIT_STATUS_NULL_POINTER);
    pqkit_hpke_context_free(NULL);
  }
  {
    /* Auth mode needs a DHKEM: ML-KEM-768 refuses it */
    size_t skl = 0, pkl = 0, encl = 0, n = 0;
    uint8_t *sk, *pk, *enc;
    PqkitHpkeContext *c = NULL;
    PqkitHpkeMode m;
    CHECK_STATUS(pqkit_hpke_kem_lengths(0x0041, &skl, &pkl, &encl), PQKIT_STATUS_OK);
    sk = malloc(skl);
    pk = malloc(pkl);
    enc = malloc(encl);
    CHECK_STATUS(pqkit_hpke_generate_key_pair(0x0041, sk, skl, pk, pkl), PQKIT_STATUS_OK);
    memset(&m, 0, sizeof m);
    m.mode = PQKIT_HPKE_MODE_ID_AUTH;
    m.auth_key = sk;
    m.auth_key_len = skl;
    CHECK_STATUS(pqkit_hpke_sender_new(0x0041, 0x0001, 0x0001, pk, pkl, NULL, 0, &m, enc, encl, &n, &c),
                 PQKIT_STATUS_INVALID_PARAMETER);
    CHECK(c == NULL);
    free(sk);
    free(pk);
    free(enc);
  }
}

void test_kem(void) {
  test_hybrid();
  test_hpke();
}

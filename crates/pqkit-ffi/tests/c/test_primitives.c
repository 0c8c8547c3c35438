/*
 * Incremental SHAKE, the stream ciphers, the Threefish-512 block cipher and Skein-512 from C: every function
 * and its rejections (NULL, wrong key, nonce, tweak or block lengths, unknown ids, input after output).
 * Their known answers are checked in tests/primitives_vectors.rs.
 */
#include "check.h"

static void test_xof_incremental(void) {
  PqkitXof *x = NULL;
  uint8_t a[64], b[64];
  const uint8_t msg[] = "incremental SHAKE";
  CHECK_STATUS(pqkit_xof_new(3, &x), PQKIT_STATUS_UNKNOWN_ALGORITHM);
  CHECK_STATUS(pqkit_xof_new(PQKIT_XOF_ALG_SHAKE256, NULL), PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_xof_new(PQKIT_XOF_ALG_SHAKE256, &x), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_xof_update(x, msg, 5), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_xof_update(x, NULL, 0), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_xof_update(x, NULL, 1), PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_xof_update(x, msg + 5, sizeof msg - 5), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_xof_squeeze(x, a, 10), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_xof_squeeze(x, a + 10, 54), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_xof_squeeze(x, NULL, 3), PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_xof_update(x, msg, 1), PQKIT_STATUS_BAD_STATE);
  CHECK_STATUS(pqkit_xof(PQKIT_XOF_ALG_SHAKE256, msg, sizeof msg, b, 64), PQKIT_STATUS_OK);
  CHECK(memcmp(a, b, 64) == 0);
  pqkit_xof_free(x);
  pqkit_xof_free(NULL);
  CHECK_STATUS(pqkit_xof_update(NULL, msg, 1), PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_xof_squeeze(NULL, a, 1), PQKIT_STATUS_NULL_POINTER);
}

static void test_stream_ciphers(void) {
  uint8_t key[64], nonce[16], data[300], copy[300];
  size_t i;
  const uint32_t algs[2] = {PQKIT_CIPHER_ALG_KUSUMI512, PQKIT_CIPHER_ALG_THREEFISH512_CTR};
  const size_t nonce_len[2] = {12, 16};
  for (i = 0; i < sizeof key; i++) key[i] = (uint8_t)i;
  memset(nonce, 9, sizeof nonce);
  for (i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i * 3);
  for (i = 0; i < 2; i++) {
    PqkitCipher *c = NULL, *d = NULL;
    memcpy(copy, data, sizeof data);
    CHECK_STATUS(pqkit_cipher_new(algs[i], key, 64, nonce, nonce_len[i], 0, &c), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_cipher_apply_keystream(c, copy, sizeof copy), PQKIT_STATUS_OK);
    CHECK(memcmp(copy, data, sizeof data) != 0);
    /* decrypting is the same operation, from the start again */
    CHECK_STATUS(pqkit_cipher_seek(c, 0), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_cipher_apply_keystream(c, copy, 150), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_cipher_new(algs[i], key, 64, nonce, nonce_len[i], 0, &d), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_cipher_seek(d, 150), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_cipher_apply_keystream(d, copy + 150, 150), PQKIT_STATUS_OK);
    CHECK(memcmp(copy, data, sizeof data) == 0);
    CHECK_STATUS(pqkit_cipher_apply_keystream(c, NULL, 0), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_cipher_apply_keystream(c, NULL, 4), PQKIT_STATUS_NULL_POINTER);
    CHECK_STATUS(pqkit_cipher_apply_keystream(NULL, copy, 4), PQKIT_STATUS_NULL_POINTER);
    CHECK_STATUS(pqkit_cipher_seek(NULL, 0), PQKIT_STATUS_NULL_POINTER);
    pqkit_cipher_free(c);
    pqkit_cipher_free(d);
    c = NULL;
    CHECK_STATUS(pqkit_cipher_new(algs[i], key, 63, nonce, nonce_len[i], 0, &c), PQKIT_STATUS_INVALID_LENGTH);
    CHECK_STATUS(pqkit_cipher_new(algs[i], key, 64, nonce, nonce_len[i] - 1, 0, &c), PQKIT_STATUS_INVALID_LENGTH);
    CHECK_STATUS(pqkit_cipher_new(algs[i], NULL, 64, nonce, nonce_len[i], 0, &c), PQKIT_STATUS_NULL_POINTER);
    CHECK_STATUS(pqkit_cipher_new(algs[i], key, 64, nonce, nonce_len[i], 0, NULL), PQKIT_STATUS_NULL_POINTER);
    CHECK(c == NULL);
  }
  {
    PqkitCipher *c = NULL;
    CHECK_STATUS(pqkit_cipher_new(3, key, 64, nonce, 12, 0, &c), PQKIT_STATUS_UNKNOWN_ALGORITHM);
    CHECK(c == NULL);
  }
  pqkit_cipher_free(NULL);
}

static void test_threefish_skein(void) {
  uint8_t key[64], tweak[16], block[64], orig[64], out[200];
  size_t i;
  for (i = 0; i < 64; i++) key[i] = (uint8_t)(0x10 + i);
  for (i = 0; i < 16; i++) tweak[i] = (uint8_t)i;
  for (i = 0; i < 64; i++) block[i] = orig[i] = (uint8_t)(0xFF - i);
  CHECK_STATUS(pqkit_threefish512_encrypt_block(key, 64, tweak, 16, block, 64), PQKIT_STATUS_OK);
  CHECK(block[0] == 0xe3 && block[63] == 0x3d); /* Skein 1.3 Appendix C */
  CHECK_STATUS(pqkit_threefish512_decrypt_block(key, 64, tweak, 16, block, 64), PQKIT_STATUS_OK);
  CHECK(memcmp(block, orig, 64) == 0);
  CHECK_STATUS(pqkit_threefish512_encrypt_block(key, 32, tweak, 16, block, 64), PQKIT_STATUS_INVALID_LENGTH);
  CHECK_STATUS(pqkit_threefish512_encrypt_block(key, 64, tweak, 15, block, 64), PQKIT_STATUS_INVALID_LENGTH);
  CHECK_STATUS(pqkit_threefish512_decrypt_block(key, 64, tweak, 16, block, 63), PQKIT_STATUS_INVALID_LENGTH);
  CHECK_STATUS(pqkit_threefish512_decrypt_block(key, 64, NULL, 16, block, 64), PQKIT_STATUS_NULL_POINTER);
  CHECK(memcmp(block, orig, 64) == 0);
  /* Skein-512: any output length; 32 bytes are not a prefix of 64 */
  CHECK_STATUS(pqkit_skein512(orig, 1, out, 64), PQKIT_STATUS_OK);
  CHECK(out[0] == 0x71 && out[63] == 0x7a);
  CHECK_STATUS(pqkit_skein512(orig, 1, out + 64, 32), PQKIT_STATUS_OK);
  CHECK(memcmp(out, out + 64, 32) != 0);
  CHECK_STATUS(pqkit_skein512(NULL, 0, out, 200), PQKIT_STATUS_OK);
  CHECK(pqkit_skein512(orig, 1, out, 0) != PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_skein512(NULL, 1, out, 64), PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_skein512(orig, 1, NULL, 64), PQKIT_STATUS_NULL_POINTER);
}

void test_primitives(void) {
  test_xof_incremental();
  test_stream_ciphers();
  test_threefish_skein();
}

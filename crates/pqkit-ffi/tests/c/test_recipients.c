/*
 * Encryption to recipients from C: identities (generate, text form, recipient string), encrypt to several
 * recipients, decrypt with any one identity, and the rejections (no recipients, a malformed or mistyped
 * recipient, no matching identity, modified or truncated files, short buffers, NULL). Interop with the
 * pqkit command line is checked in tests/recipients_cli.rs.
 */
#include "check.h"

static size_t text_of(PqkitIdentity *id, uint8_t *buf, size_t cap, int recipient) {
  size_t n = 0;
  if (recipient)
    CHECK_STATUS(pqkit_identity_recipient(id, buf, cap, &n), PQKIT_STATUS_OK);
  else
    CHECK_STATUS(pqkit_identity_to_text(id, buf, cap, &n), PQKIT_STATUS_OK);
  return n;
}

void test_recipients(void) {
  PqkitIdentity *a = NULL, *b = NULL, *c = NULL, *a2 = NULL;
  uint8_t *list = malloc(8192), *text = malloc(4096), *file = malloc(8192), *back = malloc(8192);
  const uint8_t msg[] = "to alice and bob";
  size_t la, lb, tl, fl = 0, bl = 0, need = 0;
  const PqkitIdentity *ids[2];
  CHECK_STATUS(pqkit_identity_generate(&a), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_identity_generate(&b), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_identity_generate(&c), PQKIT_STATUS_OK);
  /* "pqkit-xwing1" recipients, one per line */
  la = text_of(a, list, 8192, 1);
  CHECK(la > 12 && memcmp(list, "pqkit-xwing1", 12) == 0);
  list[la++] = '\n';
  lb = text_of(b, list + la, 8192 - la, 1);
  la += lb;
  CHECK_STATUS(pqkit_identity_recipient(a, list, 10, &need), PQKIT_STATUS_BUFFER_TOO_SMALL);
  CHECK(need == lb);
  /* the identity's text round-trips */
  tl = text_of(a, text, 4096, 0);
  CHECK_STATUS(pqkit_identity_from_text(text, tl, &a2), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_identity_from_text(text, 10, NULL), PQKIT_STATUS_NULL_POINTER);
  {
    PqkitIdentity *x = NULL;
    CHECK_STATUS(pqkit_identity_from_text((const uint8_t *)"no key here", 11, &x), PQKIT_STATUS_INVALID_ENCODING);
    CHECK(x == NULL);
  }

  CHECK_STATUS(pqkit_recipients_encrypt(PQKIT_STREAM_ALG_X_CHACHA20_POLY1305, list, la, msg, sizeof msg, file, 10, &fl),
               PQKIT_STATUS_BUFFER_TOO_SMALL);
  CHECK(fl > sizeof msg && fl < 8192);
  CHECK_STATUS(pqkit_recipients_encrypt(PQKIT_STREAM_ALG_X_CHACHA20_POLY1305, list, la, msg, sizeof msg, file, 8192, &fl),
               PQKIT_STATUS_OK);
  CHECK(fl > 9 && memcmp(file, "PQKITENC\x02", 9) == 0);
  ids[0] = c;
  ids[1] = a2; /* the copy of a made from its text */
  CHECK_STATUS(pqkit_recipients_decrypt(ids, 2, file, fl, back, 8192, &bl), PQKIT_STATUS_OK);
  CHECK(bl == sizeof msg && memcmp(back, msg, bl) == 0);
  ids[0] = b;
  CHECK_STATUS(pqkit_recipients_decrypt(ids, 1, file, fl, back, 8192, &bl), PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_recipients_decrypt(ids, 1, file, fl, back, sizeof msg - 1, &bl), PQKIT_STATUS_BUFFER_TOO_SMALL);
  CHECK(bl == sizeof msg);
  ids[0] = c;
  CHECK_STATUS(pqkit_recipients_decrypt(ids, 1, file, fl, back, 8192, &bl), PQKIT_STATUS_AUTHENTICATION_FAILED);
  ids[0] = a;
  file[fl - 1] ^= 1;
  memset(back, 0, 64);
  CHECK_STATUS(pqkit_recipients_decrypt(ids, 1, file, fl, back, 8192, &bl), PQKIT_STATUS_AUTHENTICATION_FAILED);
  CHECK(all_zero(back, 64));
  file[fl - 1] ^= 1;
  CHECK(pqkit_recipients_decrypt(ids, 1, file, fl - 1, back, 8192, &bl) != PQKIT_STATUS_OK);
  CHECK(pqkit_recipients_decrypt(ids, 1, file, 100, back, 8192, &bl) != PQKIT_STATUS_OK);
  CHECK_STATUS(pqkit_recipients_decrypt(ids, 0, file, fl, back, 8192, &bl), PQKIT_STATUS_INVALID_PARAMETER);
  CHECK_STATUS(pqkit_recipients_decrypt(NULL, 1, file, fl, back, 8192, &bl), PQKIT_STATUS_NULL_POINTER);
  ids[1] = NULL;
  CHECK_STATUS(pqkit_recipients_decrypt(ids, 2, file, fl, back, 8192, &bl), PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_recipients_decrypt(ids, 1, file, fl, back, 8192, NULL), PQKIT_STATUS_NULL_POINTER);

  /* recipient lists: none, not a recipient, one character changed, an unknown algorithm */
  CHECK_STATUS(pqkit_recipients_encrypt(1, (const uint8_t *)"# nobody\n\n", 10, msg, sizeof msg, file, 8192, &fl),
               PQKIT_STATUS_INVALID_PARAMETER);
  CHECK_STATUS(pqkit_recipients_encrypt(1, (const uint8_t *)"age1xyz", 7, msg, sizeof msg, file, 8192, &fl),
               PQKIT_STATUS_INVALID_ENCODING);
  list[100] = (uint8_t)(list[100] == 'A' ? 'B' : 'A');
  CHECK_STATUS(pqkit_recipients_encrypt(1, list, la, msg, sizeof msg, file, 8192, &fl), PQKIT_STATUS_INVALID_ENCODING);
  CHECK_STATUS(pqkit_recipients_encrypt(9, list, la, msg, sizeof msg, file, 8192, &fl), PQKIT_STATUS_UNKNOWN_ALGORITHM);
  CHECK_STATUS(pqkit_recipients_encrypt(1, NULL, 5, msg, sizeof msg, file, 8192, &fl), PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_identity_recipient(NULL, list, 8192, &fl), PQKIT_STATUS_NULL_POINTER);
  CHECK_STATUS(pqkit_identity_generate(NULL), PQKIT_STATUS_NULL_POINTER);
  /* streaming: the section, the stream, and the reader taking the section from a prefix */
  {
    PqkitStreamEncryptor *e = NULL;
    PqkitStreamDecryptor *d = NULL;
    size_t sl = 0, n = 0, consumed = 0, total;
    const PqkitIdentity *one[1];
    la = text_of(a, list, 8192, 1);
    CHECK_STATUS(pqkit_recipients_encryptor_new(1, list, la, file, 10, &sl, &e), PQKIT_STATUS_BUFFER_TOO_SMALL);
    CHECK(sl == 11 + 1178 && e == NULL);
    CHECK_STATUS(pqkit_recipients_encryptor_new(1, list, la, file, 8192, &sl, NULL), PQKIT_STATUS_NULL_POINTER);
    CHECK_STATUS(pqkit_recipients_encryptor_new(7, list, la, file, 8192, &sl, &e), PQKIT_STATUS_UNKNOWN_ALGORITHM);
    CHECK_STATUS(pqkit_recipients_encryptor_new(1, list, la, file, 8192, &sl, &e), PQKIT_STATUS_OK);
    CHECK_STATUS(pqkit_stream_encryptor_update(e, msg, sizeof msg, file + sl, 8192 - sl, &n), PQKIT_STATUS_OK);
    total = sl + n;
    CHECK_STATUS(pqkit_stream_encryptor_finish(e, file + total, 8192 - total, &n), PQKIT_STATUS_OK);
    total += n;
    pqkit_stream_encryptor_free(e);
    one[0] = a;
    CHECK_STATUS(pqkit_recipients_decrypt(one, 1, file, total, back, 8192, &bl), PQKIT_STATUS_OK);
    CHECK(bl == sizeof msg && memcmp(back, msg, bl) == 0);
    CHECK_STATUS(pqkit_recipients_decryptor_new(one, 1, file, 5, &consumed, &d), PQKIT_STATUS_BUFFER_TOO_SMALL);
    CHECK(consumed == 11 && d == NULL);
    CHECK_STATUS(pqkit_recipients_decryptor_new(one, 1, file, 12, &consumed, &d), PQKIT_STATUS_BUFFER_TOO_SMALL);
    CHECK(consumed > 12 && consumed <= sl);
    CHECK_STATUS(pqkit_recipients_decryptor_new(one, 1, file, sl - 1, &consumed, &d), PQKIT_STATUS_BUFFER_TOO_SMALL);
    CHECK(consumed == sl);
    CHECK_STATUS(pqkit_recipients_decryptor_new(one, 1, file, total, &consumed, &d), PQKIT_STATUS_OK);
    CHECK(consumed == sl);
    CHECK_STATUS(pqkit_stream_decryptor_update(d, file + sl, total - sl, back, 8192, &n), PQKIT_STATUS_OK);
    bl = n;
    CHECK_STATUS(pqkit_stream_decryptor_finish(d, back + bl, 8192 - bl, &n), PQKIT_STATUS_OK);
    bl += n;
    CHECK(bl == sizeof msg && memcmp(back, msg, bl) == 0);
    pqkit_stream_decryptor_free(d);
    d = NULL;
    one[0] = c;
    CHECK_STATUS(pqkit_recipients_decryptor_new(one, 1, file, total, &consumed, &d), PQKIT_STATUS_AUTHENTICATION_FAILED);
    file[0] = 'X';
    one[0] = a;
    CHECK_STATUS(pqkit_recipients_decryptor_new(one, 1, file, total, &consumed, &d), PQKIT_STATUS_INVALID_ENCODING);
    CHECK_STATUS(pqkit_recipients_decryptor_new(one, 0, file, total, &consumed, &d), PQKIT_STATUS_INVALID_PARAMETER);
    CHECK_STATUS(pqkit_recipients_decryptor_new(one, 1, file, total, NULL, &d), PQKIT_STATUS_NULL_POINTER);
    CHECK(d == NULL);
  }
  pqkit_identity_free(a);
  pqkit_identity_free(a2);
  pqkit_identity_free(b);
  pqkit_identity_free(c);
  pqkit_identity_free(NULL);
  free(list);
  free(text);
  free(file);
  free(back);
}

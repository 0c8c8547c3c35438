/*
 * pqkit from C: an ML-KEM-768 key exchange whose shared secret, through HKDF-SHA-256, keys an
 * XChaCha20-Poly1305 message; then a tampered message is rejected. Build: see README.md in this directory.
 */
#include <pqkit.h>

#include <stdio.h>
#include <string.h>

#define TRY(expr)                                                                  \
  do {                                                                             \
    PqkitStatus s_ = (expr);                                                       \
    if (s_ != PQKIT_STATUS_OK) {                                                   \
      fprintf(stderr, "%s: %s (%s)\n", #expr, pqkit_status_string(s_),             \
              pqkit_last_error() ? pqkit_last_error() : "");                       \
      return 1;                                                                    \
    }                                                                              \
  } while (0)

int main(void) {
  const uint32_t kem = PQKIT_MLKEM_ALG_MLKEM768;
  size_t ek_len, dk_len, ct_len;
  TRY(pqkit_mlkem_lengths(kem, &ek_len, &dk_len, &ct_len));
  uint8_t ek[1184], dk[2400], kem_ct[1088], ss_sender[32], ss_receiver[32];
  if (ek_len != sizeof ek || dk_len != sizeof dk || ct_len != sizeof kem_ct) return 1;

  /* Receiver: a key pair. Sender: encapsulate to the public key. Receiver: decapsulate. */
  TRY(pqkit_mlkem_keygen(kem, ek, sizeof ek, dk, sizeof dk));
  TRY(pqkit_mlkem_encapsulate(kem, ek, sizeof ek, kem_ct, sizeof kem_ct, ss_sender, sizeof ss_sender));
  TRY(pqkit_mlkem_decapsulate(kem, dk, sizeof dk, kem_ct, sizeof kem_ct, ss_receiver, sizeof ss_receiver));

  /* Both sides derive the AEAD key from the shared secret. */
  uint8_t key[32];
  const uint8_t info[] = "pqkit demo v1";
  TRY(pqkit_hkdf(PQKIT_HASH_ALG_SHA256, NULL, 0, ss_sender, 32, info, sizeof info - 1, key, sizeof key));

  PqkitAead *aead = NULL;
  TRY(pqkit_aead_new(PQKIT_AEAD_ALG_X_CHACHA20_POLY1305, key, sizeof key, &aead));
  uint8_t nonce[24];
  TRY(pqkit_random_bytes(nonce, sizeof nonce)); /* 24-byte nonces may be drawn at random */
  const char *msg = "attack at dawn";
  uint8_t sealed[64], opened[64];
  size_t sealed_len = 0, opened_len = 0;
  TRY(pqkit_aead_seal(aead, nonce, sizeof nonce, NULL, 0, (const uint8_t *)msg, strlen(msg), sealed, sizeof sealed,
                      &sealed_len));

  /* The receiver, with its own copy of the secret. */
  uint8_t key2[32];
  PqkitAead *aead2 = NULL;
  TRY(pqkit_hkdf(PQKIT_HASH_ALG_SHA256, NULL, 0, ss_receiver, 32, info, sizeof info - 1, key2, sizeof key2));
  TRY(pqkit_aead_new(PQKIT_AEAD_ALG_X_CHACHA20_POLY1305, key2, sizeof key2, &aead2));
  TRY(pqkit_aead_open(aead2, nonce, sizeof nonce, NULL, 0, sealed, sealed_len, opened, sizeof opened, &opened_len));
  printf("decrypted: %.*s\n", (int)opened_len, (const char *)opened);

  sealed[0] ^= 1;
  PqkitStatus s = pqkit_aead_open(aead2, nonce, sizeof nonce, NULL, 0, sealed, sealed_len, opened, sizeof opened,
                                  &opened_len);
  if (s != PQKIT_STATUS_AUTHENTICATION_FAILED) return 1;
  printf("tampered message rejected: %s\n", pqkit_last_error());

  pqkit_aead_free(aead); /* wipes the key schedules */
  pqkit_aead_free(aead2);
  return 0;
}

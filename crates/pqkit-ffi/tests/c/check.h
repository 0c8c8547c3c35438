/*
 * What every C test source shares: the CHECK macros and their counters (defined in test_pqkit.c), hex
 * decoding, and the test functions of the other sources.
 */
#ifndef PQKIT_TEST_CHECK_H
#define PQKIT_TEST_CHECK_H

#include "pqkit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int failures;
extern int checks;


#define CHECK(cond)                                                              \
  do {                                                                           \
    checks++;                                                                    \
    if (!(cond)) {                                                               \
      failures++;                                                                \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
    }                                                                            \
  } while (0)

#define CHECK_STATUS(expr, want)                                                 \
  do {                                                                           \
    int got_ = (int)(expr);                                                      \
    checks++;                                                                    \
    if (got_ != (int)(want)) {                                                   \
      failures++;                                                                \
      const char *m_ = pqkit_last_error();                                       \
      fprintf(stderr, "%s:%d: %s returned %d (%s), want %d; last error: %s\n",  \
              __FILE__, __LINE__, #expr, got_, pqkit_status_string(got_),        \
              (int)(want), m_ ? m_ : "(none)");                                  \
    }                                                                            \
  } while (0)

size_t unhex(const char *hex, uint8_t *out, size_t cap);
int all_zero(const uint8_t *p, size_t n);

void test_keys(void);
void test_rsa(void);
void test_primitives(void);
void test_kem(void);
void test_recipients(void);
void test_bus(void);

#endif

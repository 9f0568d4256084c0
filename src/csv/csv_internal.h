/* SPDX-License-Identifier: MIT */
/* Private: what the csv module's files share. */
#ifndef TK_CSV_INTERNAL_H
#define TK_CSV_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tracekit/csv.h"

/* Parses [s, s+len) as a decimal integer without sign into *out: 0, TK_EFORMAT, TK_ERANGE. */
int tk__csv_parse_u64(const char *s, size_t len, uint64_t *out);
/* A counter value: [-]digits[.digits][(e|E)[+-]digits], integer when no '.' or exponent. */
int tk__csv_parse_value(const char *s, size_t len, tk_csv_value *out);

#endif

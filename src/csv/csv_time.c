/* SPDX-License-Identifier: MIT */
/*
 * csv: timestamp domains, timestamps and counter values as text, and VTune's file names.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "csv/csv_internal.h"

static const char *const clock_names[] = {"QPC", "CLOCK_MONOTONIC_RAW", "RDTSC", "TSC", "UTC"};

const char *tk_csv_clock_name(tk_csv_clock clock)
{
	if ((unsigned)clock >= sizeof(clock_names) / sizeof(clock_names[0]))
		return NULL;
	return clock_names[clock];
}

int tk_csv_clock_parse(const char *name, tk_csv_clock *out)
{
	if (name == NULL || out == NULL)
		return TK_EINVAL;
	for (unsigned i = 0; i < sizeof(clock_names) / sizeof(clock_names[0]); i++)
		if (strcmp(name, clock_names[i]) == 0) {
			*out = (tk_csv_clock)i;
			return 0;
		}
	return TK_EINVAL;
}

int tk__csv_parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0)
		return TK_EFORMAT;
	int range = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned char)s[i] - '0';
		if (d > 9)
			return TK_EFORMAT;
		if (i < 19) { /* 19 digits cannot overflow */
			v = v * 10 + d;
		} else if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, d, &v)) {
			range = 1; /* still read on: a letter later makes it "not a number" */
		}
	}
	if (range)
		return TK_ERANGE;
	*out = v;
	return 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static int digits(const char *s, size_t n, unsigned *out)
{
	unsigned v = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned char)s[i] - '0';
		if (d > 9)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

static int parse_utc(const char *s, size_t len, uint64_t *out)
{
	unsigned y, mo, d, h, mi, sec;
	static const unsigned mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	/* YYYY-MM-DD hh:mm:ss */
	if (len < 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':')
		return TK_EFORMAT;
	if (digits(s, 4, &y) || digits(s + 5, 2, &mo) || digits(s + 8, 2, &d) || digits(s + 11, 2, &h) ||
	    digits(s + 14, 2, &mi) || digits(s + 17, 2, &sec))
		return TK_EFORMAT;
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || sec > 59)
		return TK_EFORMAT;
	if (mo == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		return TK_EFORMAT;
	uint64_t ns = 0;
	if (len > 19) {
		if (s[19] != '.' || len == 20)
			return TK_EFORMAT;
		uint64_t scale = 100000000;
		for (size_t i = 20; i < len; i++) {
			unsigned dg = (unsigned char)s[i] - '0';
			if (dg > 9)
				return TK_EFORMAT;
			ns += dg * scale; /* digits beyond nanoseconds are read and dropped */
			scale /= 10;
		}
	}
	int64_t days = days_from_civil(y, mo, d);
	uint64_t secs = (uint64_t)days * 86400u + h * 3600u + mi * 60u + sec;
	if (secs > UINT64_MAX / 1000000000u - 1)
		return TK_ERANGE;
	*out = secs * 1000000000u + ns;
	return 0;
}

int tk_csv_parse_time(const char *s, size_t len, tk_csv_clock clock, uint64_t *out)
{
	if (s == NULL || out == NULL)
		return TK_EINVAL;
	if (clock == TK_CSV_UTC)
		return parse_utc(s, len, out);
	if (len > 0 && s[0] == '-') {
		uint64_t dummy;
		return tk__csv_parse_u64(s + 1, len - 1, &dummy) == TK_EFORMAT ? TK_EFORMAT : TK_EINVAL;
	}
	return tk__csv_parse_u64(s, len, out);
}

size_t tk_csv_format_time(char *buf, size_t cap, tk_csv_clock clock, uint64_t t)
{
	int n;

	if (clock != TK_CSV_UTC) {
		n = snprintf(buf, cap, "%" PRIu64, t);
	} else {
		int64_t y;
		unsigned mo, d;
		uint64_t secs = t / 1000000000u, ns = t % 1000000000u;
		civil_from_days((int64_t)(secs / 86400u), &y, &mo, &d);
		unsigned sod = (unsigned)(secs % 86400u);
		n = snprintf(buf, cap, "%04" PRId64 "-%02u-%02u %02u:%02u:%02u.%09" PRIu64, y, mo, d, sod / 3600,
			     sod / 60 % 60, sod % 60, ns);
	}
	return n < 0 ? 0 : (size_t)n;
}

int tk__csv_parse_value(const char *s, size_t len, tk_csv_value *out)
{
	size_t i = 0;
	int is_float = 0, any = 0;

	memset(out, 0, sizeof(*out));
	if (len == 0)
		return 0; /* not present */
	if (len > 64)
		return TK_EFORMAT;
	if (s[i] == '-' || s[i] == '+')
		i++;
	while (i < len && s[i] >= '0' && s[i] <= '9')
		i++, any = 1;
	if (i < len && s[i] == '.') {
		is_float = 1;
		i++;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++, any = 1;
	}
	if (!any)
		return TK_EFORMAT;
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		is_float = 1;
		i++;
		if (i < len && (s[i] == '-' || s[i] == '+'))
			i++;
		if (i == len || s[i] < '0' || s[i] > '9')
			return TK_EFORMAT;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	if (i != len)
		return TK_EFORMAT;
	char tmp[72];
	memcpy(tmp, s, len);
	tmp[len] = 0;
	errno = 0;
	if (!is_float) {
		long long v = strtoll(tmp, NULL, 10);
		if (errno == ERANGE)
			return TK_ERANGE;
		out->i = v;
	} else {
		double v = strtod(tmp, NULL);
		if (!isfinite(v))
			return TK_ERANGE;
		out->d = v;
		out->is_float = 1;
	}
	out->present = 1;
	return 0;
}

size_t tk_csv_format_value(char *buf, size_t cap, const tk_csv_value *v)
{
	int n;

	if (!v->present || (v->is_float && !isfinite(v->d))) {
		/* NaN and infinities have no text the reader (or VTune) takes: no sample */
		n = snprintf(buf, cap, "%s", "");
	} else if (!v->is_float) {
		n = snprintf(buf, cap, "%" PRId64, v->i);
	} else {
		/* shortest of %.15g..%.17g that reads back exactly; always with a '.' or 'e' so it
		 * stays a floating-point value when read again */
		char tmp[40];
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(tmp, sizeof(tmp), "%.*g", prec, v->d);
			if (strtod(tmp, NULL) == v->d)
				break;
		}
		if (strpbrk(tmp, ".eE") == NULL)
			strcat(tmp, ".0");
		n = snprintf(buf, cap, "%s", tmp);
	}
	return n < 0 ? 0 : (size_t)n;
}

int tk_csv_parse_file_name(const char *path, char *user, size_t user_cap, char *host, size_t host_cap)
{
	const char *base, *h, *end;
	size_t blen;

	if (path == NULL || user == NULL || host == NULL || user_cap == 0 || host_cap == 0)
		return TK_EINVAL;
	user[0] = host[0] = 0;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	blen = strlen(base);
	end = base + blen;
	if (blen >= 4 && strcmp(end - 4, ".csv") == 0)
		end -= 4;
	/* the last "-hostname-": a user part may hold the text too */
	h = NULL;
	for (const char *p = base; (p = strstr(p, "-hostname-")) != NULL && p < end; p++)
		h = p;
	if (h == NULL || h + 10 >= end)
		return 0;
	size_t ulen = (size_t)(h - base), hlen = (size_t)(end - (h + 10));
	if (ulen >= user_cap || hlen >= host_cap)
		return TK_EOVERFLOW;
	memcpy(user, base, ulen);
	user[ulen] = 0;
	memcpy(host, h + 10, hlen);
	host[hlen] = 0;
	return 1;
}

int tk_csv_file_name(char *buf, size_t cap, const char *user, const char *host)
{
	if (buf == NULL || user == NULL || host == NULL)
		return TK_EINVAL;
	int n = snprintf(buf, cap, "%s-hostname-%s.csv", user, host);
	if (n < 0 || (size_t)n >= cap)
		return TK_EOVERFLOW;
	return 0;
}

static int host_ok(const char *h)
{
	return h != NULL && h[0] != 0 && strchr(h, '/') == NULL;
}

int tk_csv_default_host(char *buf, size_t cap, const char *trace_host)
{
	const char *h = NULL;

	if (buf == NULL || cap == 0)
		return TK_EINVAL;
	if (host_ok(trace_host))
		h = trace_host;
	else if (host_ok(getenv("VTUNE_HOSTNAME")))
		h = getenv("VTUNE_HOSTNAME");
	else if (host_ok(getenv("AMPLXE_HOSTNAME")))
		h = getenv("AMPLXE_HOSTNAME");
	if (h == NULL) {
		char tmp[256];
		if (gethostname(tmp, sizeof(tmp)) != 0)
			return tk_error_from_errno(errno);
		tmp[sizeof(tmp) - 1] = 0;
		if (!host_ok(tmp))
			snprintf(tmp, sizeof(tmp), "localhost");
		h = tmp;
		if (strlen(h) >= cap)
			return TK_EOVERFLOW;
		strcpy(buf, h);
		return 0;
	}
	if (strlen(h) >= cap)
		return TK_EOVERFLOW;
	strcpy(buf, h);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * Corpus replay: runs a fuzz target's LLVMFuzzerTestOneInput() over every file of the
 * directories (or files) given, so the corpora are regression tests under plain ctest and
 * the sanitizer builds, without libFuzzer.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (f == NULL) {
		perror(path);
		return 1;
	}
	do {
		if (cap - len < 65536) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			if (buf == NULL) {
				fclose(f);
				return 1;
			}
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int i, failures = 0, files = 0;

	for (i = 1; i < argc; i++) {
		struct stat sb;
		DIR *d;
		struct dirent *e;
		if (stat(argv[i], &sb) != 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(sb.st_mode)) {
			failures += run_file(argv[i]);
			files++;
			continue;
		}
		d = opendir(argv[i]);
		while (d != NULL && (e = readdir(d)) != NULL) {
			char path[4096];
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			failures += run_file(path);
			files++;
		}
		if (d != NULL)
			closedir(d);
	}
	printf("replayed %d inputs\n", files);
	return failures != 0 || files == 0;
}

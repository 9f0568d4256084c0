/* SPDX-License-Identifier: MIT */
/*
 * Prints an HDF5 file written by bfbin2hdf5 as text for the golden tests, reading it with
 * the HDF5 library: per dataset of the root group (in name order) its extent, maximum
 * extent, chunk size, filters, compound members with their types, and every row.
 * Usage: bfbin_h5dump FILE.h5
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

static void print_member_type(hid_t t)
{
	H5T_class_t cls = H5Tget_class(t);
	hid_t native;

	switch (cls) {
	case H5T_INTEGER:
		printf("%s %zu-byte integer (%s)", H5Tget_sign(t) == H5T_SGN_NONE ? "unsigned" : "signed", H5Tget_size(t),
		       H5Tget_order(t) == H5T_ORDER_LE ? "little-endian" : "big-endian");
		break;
	case H5T_STRING:
		printf("%s string, %s, %s", H5Tis_variable_str(t) > 0 ? "variable-length" : "fixed-length",
		       H5Tget_strpad(t) == H5T_STR_NULLTERM ? "NUL-terminated" : "padded",
		       H5Tget_cset(t) == H5T_CSET_ASCII ? "ASCII" : "UTF-8");
		break;
	case H5T_ENUM: {
		int i, n = H5Tget_nmembers(t);
		native = H5Tget_super(t);
		printf("enum of %zu-byte %s integer {", H5Tget_size(native),
		       H5Tget_sign(native) == H5T_SGN_NONE ? "unsigned" : "signed");
		for (i = 0; i < n; i++) {
			char *name = H5Tget_member_name(t, (unsigned)i);
			uint8_t v = 0;
			H5Tget_member_value(t, (unsigned)i, &v);
			printf("%s%s=%u", i ? ", " : "", name, (unsigned)v);
			H5free_memory(name);
		}
		printf("}");
		H5Tclose(native);
		break;
	}
	default:
		printf("class %d", (int)cls);
	}
}

static herr_t dump_dataset(hid_t group, const char *name, const H5L_info_t *info, void *data)
{
	hid_t dset, type, space, dcpl, mtype;
	hsize_t dims = 0, maxdims = 0, chunk = 0, r;
	int i, n, nfilters;
	size_t size;
	unsigned char *buf;

	(void)info;
	(void)data;
	dset = H5Dopen2(group, name, H5P_DEFAULT);
	type = H5Dget_type(dset);
	space = H5Dget_space(dset);
	dcpl = H5Dget_create_plist(dset);
	H5Sget_simple_extent_dims(space, &dims, &maxdims);
	printf("dataset \"%s\": %llu rows, max %s", name, (unsigned long long)dims,
	       maxdims == H5S_UNLIMITED ? "unlimited" : "fixed");
	if (H5Pget_layout(dcpl) == H5D_CHUNKED) {
		H5Pget_chunk(dcpl, 1, &chunk);
		printf(", chunks of %llu", (unsigned long long)chunk);
	}
	nfilters = H5Pget_nfilters(dcpl);
	for (i = 0; i < nfilters; i++) {
		unsigned flags, cd[4] = { 0 };
		size_t ncd = 4;
		char fname[64];
		H5Z_filter_t f = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof(fname), fname, NULL);
		printf(", %s%s", f == H5Z_FILTER_DEFLATE ? "deflate " : fname, "");
		if (f == H5Z_FILTER_DEFLATE && ncd > 0)
			printf("%u", cd[0]);
	}
	size = H5Tget_size(type);
	printf("\n  compound of %zu bytes%s\n", size, "");
	n = H5Tget_nmembers(type);
	for (i = 0; i < n; i++) {
		char *mname = H5Tget_member_name(type, (unsigned)i);
		hid_t mt = H5Tget_member_type(type, (unsigned)i);
		printf("  member %d \"%s\" at %zu: ", i, mname, H5Tget_member_offset(type, (unsigned)i));
		print_member_type(mt);
		printf("\n");
		H5Tclose(mt);
		H5free_memory(mname);
	}
	/* Read with the file's own (packed, native) compound: it is what bfbin2hdf5 wrote. */
	mtype = H5Tget_native_type(type, H5T_DIR_ASCEND);
	size = H5Tget_size(mtype);
	buf = malloc(size * (dims ? dims : 1));
	if (dims > 0 && H5Dread(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
		printf("  (read failed)\n");
		dims = 0;
	}
	for (r = 0; r < dims; r++) {
		printf("  row %llu:", (unsigned long long)r + 1);
		for (i = 0; i < n; i++) {
			hid_t mt = H5Tget_member_type(mtype, (unsigned)i);
			const unsigned char *p = buf + r * size + H5Tget_member_offset(mtype, (unsigned)i);
			if (H5Tget_class(mt) == H5T_INTEGER) {
				uint64_t v;
				memcpy(&v, p, sizeof(v));
				printf(" %llu", (unsigned long long)v);
			} else if (H5Tget_class(mt) == H5T_STRING) {
				const char *s;
				memcpy(&s, p, sizeof(s));
				printf(" \"%s\"", s ? s : "(null)");
			} else {
				char ename[16] = "?";
				H5Tenum_nameof(mt, p, ename, sizeof(ename));
				printf(" %s", ename);
			}
			H5Tclose(mt);
		}
		printf("\n");
	}
	if (dims > 0)
		H5Dvlen_reclaim(mtype, space, H5P_DEFAULT, buf);
	free(buf);
	H5Tclose(mtype);
	H5Pclose(dcpl);
	H5Sclose(space);
	H5Tclose(type);
	H5Dclose(dset);
	return 0;
}

int main(int argc, char **argv)
{
	hid_t file;

	if (argc != 2) {
		fputs("usage: bfbin_h5dump FILE.h5\n", stderr);
		return 2;
	}
	file = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
	if (file < 0) {
		fprintf(stderr, "bfbin_h5dump: cannot open %s\n", argv[1]);
		return 1;
	}
	H5Literate(file, H5_INDEX_NAME, H5_ITER_INC, NULL, dump_dataset, NULL);
	H5Fclose(file);
	return 0;
}

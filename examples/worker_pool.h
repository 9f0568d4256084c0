/* SPDX-License-Identifier: MIT */
/* worker_pool's instrumented part (worker_pool_hot.c). */
#ifndef WORKER_POOL_H
#define WORKER_POOL_H
#include <stddef.h>
#include <stdint.h>

/* Fills scratch with item's data and returns its hash. */
uint64_t wp_process_item(unsigned item, unsigned char *scratch, size_t size);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * odf_types.h - the one place where the ODF headers differ between the
 * kernel and userland: fixed-width little-endian types and the static
 * size assertion.
 */
#ifndef _ODF_TYPES_H
#define _ODF_TYPES_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/build_bug.h>
#define ODF_STATIC_ASSERT(expr, msg) static_assert(expr, msg)
#else
#include <linux/types.h>	/* __le16/__le32/__le64/__u8 from linux-libc-dev */
#define ODF_STATIC_ASSERT(expr, msg) _Static_assert(expr, msg)
#endif

/* Assert the exact on-disk size of a structure. */
#define ODF_ASSERT_SIZE(type, size) \
	ODF_STATIC_ASSERT(sizeof(type) == (size), \
			  #type " must be " #size " bytes on disk")

#endif /* _ODF_TYPES_H */

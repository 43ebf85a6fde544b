// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of dm-extverity: the rules whose failures need inputs a test
 * VM cannot make, tested on the helpers the target itself calls
 * (dm-extverity.h).
 *
 *	check_at_most_once	refused past INT_MAX data blocks (an 8 TiB
 *				image with 4 KiB blocks)
 *	per-bio data size	a multiple of the alignment of struct
 *				extverity_io for any hash descriptor size
 *				(x86's are all multiples of 8)
 *	corruption uevents	the count saturates at the cap rather than
 *				wrapping after 2^31 corrupt reads
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/limits.h>
#include <linux/module.h>

#include "dm-extverity.h"

/*
 * Every block number of a check_at_most_once device must fit the bitops'
 * index: the largest device accepted has INT_MAX blocks, one more and the
 * sizes that alias a lower block through a 32-bit index are refused.
 */
static void extverity_at_most_once_fits_test(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, extverity_at_most_once_fits(1));
	KUNIT_EXPECT_TRUE(test, extverity_at_most_once_fits(INT_MAX));
	KUNIT_EXPECT_FALSE(test, extverity_at_most_once_fits((u64)INT_MAX + 1));
	KUNIT_EXPECT_FALSE(test, extverity_at_most_once_fits(U32_MAX));
	KUNIT_EXPECT_FALSE(test, extverity_at_most_once_fits(BIT_ULL(32) + 6));
	KUNIT_EXPECT_FALSE(test, extverity_at_most_once_fits(U64_MAX));
}

/*
 * For every descriptor size a hash driver may report (every residue modulo
 * the alignment, a few times over), the per-bio data size holds the
 * structure, the descriptor and its context, is a multiple of the
 * structure's alignment, and wastes less than one alignment unit.
 */
static void extverity_per_io_data_size_test(struct kunit *test)
{
	const unsigned int align = __alignof__(struct extverity_io);
	unsigned int descsize;

	for (descsize = 0; descsize <= 4 * align + 1; descsize++) {
		unsigned int need = sizeof(struct extverity_io) +
				    sizeof(struct shash_desc) + descsize;
		unsigned int size = extverity_per_io_data_size(descsize);

		KUNIT_ASSERT_EQ_MSG(test, size % align, 0,
				    "descsize %u: size %u misaligns struct extverity_io (alignment %u)",
				    descsize, size, align);
		KUNIT_ASSERT_GE_MSG(test, size, need, "descsize %u", descsize);
		KUNIT_ASSERT_LT_MSG(test, size - need, align,
				    "descsize %u", descsize);
	}
}

/*
 * The first EXTVERITY_UEVENT_MAX corruption uevents of a device are sent,
 * numbered 1 to the maximum (the last one is logged as such); none after.
 */
static void extverity_uevent_cap_test(struct kunit *test)
{
	atomic_t sent = ATOMIC_INIT(0);
	int i;

	for (i = 1; i <= EXTVERITY_UEVENT_MAX; i++)
		KUNIT_ASSERT_EQ(test, extverity_uevent_take(&sent), i);
	for (i = 0; i < 1000; i++)
		KUNIT_ASSERT_EQ(test, extverity_uevent_take(&sent), 0);
}

/*
 * Once the cap is reached the count stays there, however many corrupt
 * reads follow: confined to 0..EXTVERITY_UEVENT_MAX, it can never wrap to
 * a negative value that would let uevents through again.  (2^31 reads
 * would take too long here; a count that moves at all past the cap gets
 * there.)
 */
static void extverity_uevent_saturates_test(struct kunit *test)
{
	atomic_t sent = ATOMIC_INIT(0);
	int i;

	for (i = 0; i < EXTVERITY_UEVENT_MAX; i++)
		extverity_uevent_take(&sent);
	KUNIT_ASSERT_EQ(test, atomic_read(&sent), EXTVERITY_UEVENT_MAX);
	for (i = 0; i < 65536; i++)
		extverity_uevent_take(&sent);
	KUNIT_EXPECT_EQ(test, atomic_read(&sent), EXTVERITY_UEVENT_MAX);
	KUNIT_EXPECT_EQ(test, extverity_uevent_take(&sent), 0);
}

static struct kunit_case extverity_test_cases[] = {
	KUNIT_CASE(extverity_at_most_once_fits_test),
	KUNIT_CASE(extverity_per_io_data_size_test),
	KUNIT_CASE(extverity_uevent_cap_test),
	KUNIT_CASE(extverity_uevent_saturates_test),
	{}
};

static struct kunit_suite extverity_test_suite = {
	.name = "dm_extverity",
	.test_cases = extverity_test_cases,
};

kunit_test_suite(extverity_test_suite);

MODULE_DESCRIPTION("KUnit tests for the dm-extverity target");
MODULE_LICENSE("GPL");

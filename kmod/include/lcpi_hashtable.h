/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * lcpi_hashtable.h - the per-CPU sample hash table and its two overflow
 * buffers, as in DCPI. The only implementation: it is compiled into
 * lcpi.ko's sample handler, into lcpid's perf source, into the unit tests
 * and into the simulator in bench/.
 *
 * A sample (pid, pc, event) is looked up in a set-associative table. On a
 * hit its count is incremented: the common, cheap case. On a miss a victim
 * is chosen by the replacement policy and written, as a struct lcpi_record,
 * into the active overflow buffer; the new key takes its place. When the
 * active buffer fills it is sealed (handed to the reader) and the other one
 * becomes active. If the reader has not yet released the other one, the
 * sample is counted in stats.dropped: never silently lost.
 *
 * No libc, no allocation, no locks: the caller provides one block of
 * memory (lcpi_ht_mem_size() bytes, 8-byte aligned) and guarantees that
 * only one writer runs at a time on a table: lcpid has one thread per
 * table; in the module the writers of a table all run on its CPU, where one
 * may interrupt another (an NMI the handler, the flush IPI a handler that
 * runs with interrupts on), so each writer takes the table with
 * lcpi_ht_enter() and an interrupting one that finds it taken leaves it
 * alone (lcpi_ht_flush() does this itself). Must be safe from any context,
 * NMI included.
 *
 * Writer/reader protocol for a buffer, with its two barriers:
 *
 *   writer (sample path)              reader (read() / daemon)
 *   fill records, nr_records          if (load_acquire(&state) == READY)  B
 *   store_release(&state, READY)  A       copy header and records
 *                                         nr_records = 0
 *   if (load_acquire(&state)==FREE) C     store_release(&state, FREE)     D
 *       reuse the buffer
 *
 * A pairs with B: the reader sees every record written before READY.
 * D pairs with C: the writer reuses the buffer only after the copy is done.
 */
#ifndef LCPI_HASHTABLE_H
#define LCPI_HASHTABLE_H

#include "lcpi_abi.h"

#ifdef __KERNEL__
#include <linux/compiler.h>
#include <asm/barrier.h>
/* acquire pairs with release as A-B and D-C in the diagram above */
#define lcpi_load_acquire(p) smp_load_acquire(p)
/* release pairs with acquire as A-B and D-C in the diagram above */
#define lcpi_store_release(p, v) smp_store_release(p, v)
/* the nesting guard: one CPU, so only the compiler must keep the order */
#define lcpi_read_once(p) READ_ONCE(*(p))
#define lcpi_write_once(p, v) WRITE_ONCE(*(p), v)
#define lcpi_compiler_barrier() barrier()
#else
#include <stddef.h>
#define lcpi_load_acquire(p) __atomic_load_n(p, __ATOMIC_ACQUIRE)
#define lcpi_store_release(p, v) __atomic_store_n(p, v, __ATOMIC_RELEASE)
#define lcpi_read_once(p) __atomic_load_n(p, __ATOMIC_RELAXED)
#define lcpi_write_once(p, v) __atomic_store_n(p, v, __ATOMIC_RELAXED)
#define lcpi_compiler_barrier() __atomic_signal_fence(__ATOMIC_SEQ_CST)
#endif

#define LCPI_HT_MAX_WAYS 16

/* How a victim is chosen and where a hit or a new key goes in its set. */
enum lcpi_ht_policy {
	/* victim rotates through the ways of each set; entries never move */
	LCPI_POLICY_ROUND_ROBIN = 0,
	/* a hit swaps with way 0; a new key goes to way 0, evicting the last */
	LCPI_POLICY_SWAP_TO_FRONT = 1,
	/* true LRU: a hit moves to way 0 shifting the others down */
	LCPI_POLICY_LRU = 2,
	LCPI_POLICY_MAX		/* not ABI */
};

enum lcpi_ht_hash {
	LCPI_HASH_MULTIPLY = 0,	/* Fibonacci hashing of pc, pid and event */
	LCPI_HASH_XOR_FOLD = 1,	/* DCPI-style: xor of shifted pc bits and pid */
	LCPI_HASH_MAX		/* not ABI */
};

struct lcpi_ht_config {
	__u32 ways;		/* 1..LCPI_HT_MAX_WAYS */
	__u32 set_bits;		/* sets = 1 << set_bits, 1..24 */
	__u32 policy;		/* enum lcpi_ht_policy */
	__u32 hash;		/* enum lcpi_ht_hash */
	__u32 buffer_records;	/* records per overflow buffer, >= 1 */
};

/* The defaults fit table plus both buffers in 512 KB per CPU. */
#define LCPI_HT_DEFAULT_WAYS 4
#define LCPI_HT_DEFAULT_SET_BITS 12	/* 4096 sets x 4 ways x 16 B = 256 KB */
#define LCPI_HT_DEFAULT_BUFFER_RECORDS 8000	/* 2 x (48 + 8000 x 16) B */

enum lcpi_buf_state {
	LCPI_BUF_FREE = 0,	/* owned by the writer */
	LCPI_BUF_READY = 1,	/* sealed: owned by the reader until released */
};

struct lcpi_ht_buffer {
	__u32 state;		/* enum lcpi_buf_state; see the protocol above */
	__u32 reserved;
	struct lcpi_buffer_header hdr;
	struct lcpi_record *records;
};

struct lcpi_ht {
	struct lcpi_ht_config cfg;
	__u32 cpu;
	__u32 active;		/* index of the buffer being filled */
	__u32 busy;		/* a writer is inside: lcpi_ht_enter() */
	__u32 reserved;
	__u64 next_seq;
	__u64 dropped_unreported;	/* goes into the next buffer's header */
	struct lcpi_record *entries;	/* sets * ways, set-major */
	__u8 *rr_next;		/* per set: next round-robin victim */
	struct lcpi_ht_buffer buf[2];
	struct lcpi_table_stats stats;
};

enum lcpi_ht_result {
	LCPI_HT_HIT = 0,
	LCPI_HT_MISS = 1,
	LCPI_HT_DROPPED = 2,
};

/* lcpi_ht_flush(): the buffers filled first; the table was in use */
#define LCPI_HT_FLUSH_FULL (-1)
#define LCPI_HT_FLUSH_BUSY (-2)

static inline __u32 lcpi_ht_sets(const struct lcpi_ht_config *cfg)
{
	return 1u << cfg->set_bits;
}

/* Returns 0 if the configuration is usable, -1 if not. */
static inline int lcpi_ht_config_check(const struct lcpi_ht_config *cfg)
{
	if (cfg->ways < 1 || cfg->ways > LCPI_HT_MAX_WAYS)
		return -1;
	if (cfg->set_bits < 1 || cfg->set_bits > 24)
		return -1;
	if (cfg->policy >= LCPI_POLICY_MAX || cfg->hash >= LCPI_HASH_MAX)
		return -1;
	if (cfg->buffer_records < 1 || cfg->buffer_records > (1u << 24))
		return -1;
	return 0;
}

static inline void lcpi_ht_zero(void *p, __u64 n)
{
	__u8 *b = (__u8 *)p;

	while (n--)
		*b++ = 0;
}

static inline __u64 lcpi_ht_align8(__u64 n)
{
	return (n + 7) & ~(__u64)7;
}

/* Bytes of memory lcpi_ht_init() needs for this configuration. */
static inline __u64 lcpi_ht_mem_size(const struct lcpi_ht_config *cfg)
{
	__u64 sets = lcpi_ht_sets(cfg);

	return sets * cfg->ways * sizeof(struct lcpi_record) +
	       2 * (__u64)cfg->buffer_records * sizeof(struct lcpi_record) +
	       lcpi_ht_align8(sets);
}

/*
 * Points @ht at @mem (lcpi_ht_mem_size() bytes, 8-byte aligned), zeroed:
 * an empty table and two free, empty buffers. The statistics, sequence
 * numbers and drop counts in @ht itself carry on, so a table can be given
 * new memory (the module's, when its CPU comes back online) without the
 * reader seeing a gap. Only while no writer or reader uses the old memory.
 */
static inline void lcpi_ht_attach(struct lcpi_ht *ht, void *mem)
{
	__u8 *p = (__u8 *)mem;
	__u64 nentries = (__u64)lcpi_ht_sets(&ht->cfg) * ht->cfg.ways;
	int b;

	lcpi_ht_zero(mem, lcpi_ht_mem_size(&ht->cfg));
	ht->entries = (struct lcpi_record *)p;
	p += nentries * sizeof(struct lcpi_record);
	for (b = 0; b < 2; b++) {
		ht->buf[b].records = (struct lcpi_record *)p;
		ht->buf[b].hdr.nr_records = 0;
		p += (__u64)ht->cfg.buffer_records * sizeof(struct lcpi_record);
	}
	ht->rr_next = p;
}

/*
 * Sets up @ht over @mem (lcpi_ht_mem_size() bytes, 8-byte aligned), or
 * with no memory yet if @mem is NULL (lcpi_ht_attach() gives it some).
 * Returns 0, or -1 if the configuration is invalid.
 */
static inline int lcpi_ht_init(struct lcpi_ht *ht,
			       const struct lcpi_ht_config *cfg, void *mem,
			       __u32 cpu)
{
	if (lcpi_ht_config_check(cfg))
		return -1;
	lcpi_ht_zero(ht, sizeof(*ht));
	ht->cfg = *cfg;
	ht->cpu = cpu;
	if (mem)
		lcpi_ht_attach(ht, mem);
	return 0;
}

static inline __u32 lcpi_ht_hash(const struct lcpi_ht *ht, __u32 pid, __u64 pc,
				 __u32 event)
{
	__u32 bits = ht->cfg.set_bits;
	__u64 h;

	if (ht->cfg.hash == LCPI_HASH_XOR_FOLD) {
		/* instructions are >= 1 byte apart; pc's low bits vary most */
		h = pc ^ (pc >> bits) ^ (pc >> (2 * bits)) ^ pid ^
		    ((__u64)event << (bits - 1));
		return (__u32)(h & (((__u64)1 << bits) - 1));
	}
	h = (pc ^ ((__u64)pid << 32) ^ ((__u64)event << 56)) *
	    0x9e3779b97f4a7c15ull;
	return (__u32)(h >> (64 - bits));
}

/*
 * Takes the table for a writer on its CPU. Returns 1, or 0 if a writer
 * this one interrupted is inside it: then the table must be left alone
 * (the module counts such a sample as nested). Between the test and the
 * set only a context that interrupts this one can run, and it leaves the
 * table before this one resumes.
 */
static inline int lcpi_ht_enter(struct lcpi_ht *ht)
{
	if (lcpi_read_once(&ht->busy))
		return 0;
	lcpi_write_once(&ht->busy, 1);
	lcpi_compiler_barrier();	/* busy is set before the table is touched */
	return 1;
}

static inline void lcpi_ht_leave(struct lcpi_ht *ht)
{
	lcpi_compiler_barrier();	/* the table is left before busy is cleared */
	lcpi_write_once(&ht->busy, 0);
}

static inline int lcpi_ht_key_eq(const struct lcpi_record *e, __u32 pid,
				 __u64 pc, __u32 event)
{
	return e->pc == pc && e->pid == pid && e->event == event;
}

/*
 * Seals the active buffer (even if partly filled) and makes the other one
 * active if the reader has released it. Returns 1 if a sealed buffer now
 * waits for the reader (wake it), else 0.
 */
static inline int lcpi_ht_seal(struct lcpi_ht *ht, __u64 now)
{
	struct lcpi_ht_buffer *b = &ht->buf[ht->active];
	struct lcpi_ht_buffer *other = &ht->buf[ht->active ^ 1];
	__u32 state = lcpi_load_acquire(&b->state); /* C, matches D */
	int sealed = 0;

	if (state == LCPI_BUF_FREE && b->hdr.nr_records > 0) {
		b->hdr.magic = LCPI_BUFFER_MAGIC;
		b->hdr.version = LCPI_ABI_VERSION;
		b->hdr.header_size = sizeof(struct lcpi_buffer_header);
		b->hdr.cpu = ht->cpu;
		b->hdr.seq = ht->next_seq++;
		b->hdr.t_last = now;
		b->hdr.dropped = ht->dropped_unreported;
		ht->dropped_unreported = 0;
		ht->stats.swaps++;
		lcpi_store_release(&b->state, LCPI_BUF_READY); /* A, matches B */
		state = LCPI_BUF_READY;
		sealed = 1;
	}
	/* C, matches D in lcpi_ht_release() */
	if (state == LCPI_BUF_READY &&
	    lcpi_load_acquire(&other->state) == LCPI_BUF_FREE)
		ht->active ^= 1;
	return sealed;
}

/*
 * Appends @rec to the active buffer, sealing it when it fills.
 * Returns 0 on success, -1 if both buffers wait for the reader.
 * *@wake is set when a buffer was sealed.
 */
static inline int lcpi_ht_emit(struct lcpi_ht *ht,
			       const struct lcpi_record *rec, __u64 now,
			       int *wake)
{
	struct lcpi_ht_buffer *b = &ht->buf[ht->active];

	/* C, matches D: the reader may just have released it */
	if (lcpi_load_acquire(&b->state) != LCPI_BUF_FREE) {
		lcpi_ht_seal(ht, now);	/* retry the switch */
		b = &ht->buf[ht->active];
		if (lcpi_load_acquire(&b->state) != LCPI_BUF_FREE)
			return -1;
	}
	if (b->hdr.nr_records == 0)
		b->hdr.t_first = now;
	b->records[b->hdr.nr_records++] = *rec;
	if (b->hdr.nr_records == ht->cfg.buffer_records)
		*wake |= lcpi_ht_seal(ht, now);
	return 0;
}

static inline void lcpi_ht_drop(struct lcpi_ht *ht)
{
	ht->stats.dropped++;
	ht->dropped_unreported++;
}

/*
 * Counts one sample. @flags (LCPI_RECORD_*) is stored with a new key.
 * @now is the perf clock, for the buffers' time windows. *@wake is set
 * when a buffer was sealed and the reader should be woken.
 */
static inline enum lcpi_ht_result
lcpi_ht_add(struct lcpi_ht *ht, __u32 pid, __u64 pc, __u32 event, __u32 flags,
	    __u64 now, int *wake)
{
	__u32 ways = ht->cfg.ways;
	__u32 set = lcpi_ht_hash(ht, pid, pc, event);
	struct lcpi_record *s = &ht->entries[(__u64)set * ways];
	struct lcpi_record tmp;
	__u32 i, slot = ways;

	ht->stats.samples++;
	for (i = 0; i < ways; i++) {
		if (s[i].count == 0) {
			if (slot == ways)
				slot = i;
			continue;
		}
		if (!lcpi_ht_key_eq(&s[i], pid, pc, event))
			continue;
		if (s[i].count == LCPI_RECORD_COUNT_MAX) {
			if (lcpi_ht_emit(ht, &s[i], now, wake)) {
				lcpi_ht_drop(ht);
				return LCPI_HT_DROPPED;
			}
			ht->stats.saturations++;
			s[i].count = 0;
		}
		s[i].count++;
		ht->stats.hits++;
		if (i == 0 || ht->cfg.policy == LCPI_POLICY_ROUND_ROBIN)
			return LCPI_HT_HIT;
		tmp = s[i];
		if (ht->cfg.policy == LCPI_POLICY_SWAP_TO_FRONT) {
			s[i] = s[0];
		} else {
			for (; i > 0; i--)
				s[i] = s[i - 1];
		}
		s[0] = tmp;
		return LCPI_HT_HIT;
	}

	if (slot == ways) {
		/* the set is full: write a victim out */
		if (ht->cfg.policy == LCPI_POLICY_ROUND_ROBIN) {
			slot = ht->rr_next[set];
			/* no divide on the miss path */
			ht->rr_next[set] = (__u8)(slot + 1 == ways ? 0 : slot + 1);
		} else {
			slot = ways - 1;
		}
		if (lcpi_ht_emit(ht, &s[slot], now, wake)) {
			lcpi_ht_drop(ht);
			return LCPI_HT_DROPPED;
		}
		ht->stats.evictions++;
	}
	ht->stats.misses++;
	if (ht->cfg.policy == LCPI_POLICY_SWAP_TO_FRONT) {
		s[slot] = s[0];
		slot = 0;
	} else if (ht->cfg.policy == LCPI_POLICY_LRU) {
		for (; slot > 0; slot--)
			s[slot] = s[slot - 1];
	}
	s[slot].pc = pc;
	s[slot].pid = pid;
	s[slot].event = (__u8)event;
	s[slot].flags = (__u8)flags;
	s[slot].count = 1;
	return LCPI_HT_MISS;
}

/* Entries in the table: lcpi_ht_flush_range()'s ranges lie below this. */
static inline __u64 lcpi_ht_entries(const struct lcpi_ht *ht)
{
	return (__u64)lcpi_ht_sets(&ht->cfg) * ht->cfg.ways;
}

/*
 * Writes the entries [@first, @first + @n) of the table out to the buffers
 * and, with @seal, then seals the active one, so the reader sees every
 * count: the last range of a flush seals. A flush in ranges bounds how
 * long each step runs (the module's run with interrupts off); samples
 * that arrive between steps stay in the table, counted once, for the
 * next flush. Returns 0 when the range is empty; LCPI_HT_FLUSH_FULL if
 * the buffers filled first: release them and call again (entries already
 * written are gone from the table, so nothing is written twice);
 * LCPI_HT_FLUSH_BUSY, touching nothing, if it interrupted a writer inside
 * the table (lcpi_ht_enter()): call again once that writer has left.
 * Filling and sealing the buffer such a writer was about to append to
 * would send its store past the buffer's end.
 */
static inline int lcpi_ht_flush_range(struct lcpi_ht *ht, __u64 first,
				      __u64 n, int seal, __u64 now, int *wake)
{
	__u64 end = lcpi_ht_entries(ht);
	__u64 i;
	int ret = 0;

	if (first < end && n < end - first)
		end = first + n;
	if (!lcpi_ht_enter(ht))
		return LCPI_HT_FLUSH_BUSY;
	for (i = first; i < end; i++) {
		if (ht->entries[i].count == 0)
			continue;
		if (lcpi_ht_emit(ht, &ht->entries[i], now, wake)) {
			ret = LCPI_HT_FLUSH_FULL;
			break;
		}
		ht->stats.flushed++;
		ht->entries[i].count = 0;
	}
	if (!ret && seal)
		*wake |= lcpi_ht_seal(ht, now);
	lcpi_ht_leave(ht);
	return ret;
}

/* The whole table in one step: lcpi_ht_flush_range() of every entry. */
static inline int lcpi_ht_flush(struct lcpi_ht *ht, __u64 now, int *wake)
{
	return lcpi_ht_flush_range(ht, 0, lcpi_ht_entries(ht), 1, now, wake);
}

/*
 * Reader side. Returns the index of the sealed buffer with the lowest
 * sequence number, or -1 if none waits. Its header and records may be
 * read until lcpi_ht_release().
 */
static inline int lcpi_ht_ready(struct lcpi_ht *ht)
{
	int r0 = lcpi_load_acquire(&ht->buf[0].state) == LCPI_BUF_READY; /* B */
	int r1 = lcpi_load_acquire(&ht->buf[1].state) == LCPI_BUF_READY; /* B */

	if (r0 && r1)
		return ht->buf[0].hdr.seq < ht->buf[1].hdr.seq ? 0 : 1;
	if (r0)
		return 0;
	return r1 ? 1 : -1;
}

/* Gives a sealed buffer back to the writer after it has been copied. */
static inline void lcpi_ht_release(struct lcpi_ht *ht, int idx)
{
	ht->buf[idx].hdr.nr_records = 0;
	lcpi_store_release(&ht->buf[idx].state, LCPI_BUF_FREE); /* D, matches C */
}

/* Sum of the counts still held in the table (for reconciliation). */
static inline __u64 lcpi_ht_pending(const struct lcpi_ht *ht)
{
	__u64 n = (__u64)lcpi_ht_sets(&ht->cfg) * ht->cfg.ways;
	__u64 i, sum = 0;

	for (i = 0; i < n; i++)
		sum += ht->entries[i].count;
	return sum;
}

/*
 * 1 if @ht holds no counts: its table is empty and neither buffer is being
 * filled or waits for the reader. A buffer the reader has released (C,
 * matches D) is no longer being copied, so the memory may then be freed
 * if no writer can run.
 */
static inline int lcpi_ht_drained(const struct lcpi_ht *ht)
{
	int b;

	for (b = 0; b < 2; b++)
		if (lcpi_load_acquire(&ht->buf[b].state) != LCPI_BUF_FREE ||
		    ht->buf[b].hdr.nr_records)
			return 0;
	return lcpi_ht_pending(ht) == 0;
}

#endif /* LCPI_HASHTABLE_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * lcpi_main.c - module load and unload for lcpi.ko, the sampling half of
 * lcpi (Linux Continuous Profiling Infrastructure).
 *
 * Load allocates a small state struct per possible CPU, and registers two
 * hotplug states: a prepare-stage one that gives each CPU coming up its
 * hash table and two overflow buffers (512 KB with the defaults of
 * lcpi_hashtable.h) and frees them once it is dead and they are drained,
 * and an online one that creates and releases a CPU's perf counters while
 * sampling; then /dev/lcpi. Unload undoes this in reverse order; the
 * per-CPU memory is freed last, after every counter that could write to it
 * is gone.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>

#include "lcpi.h"

/* config, start/stop, flush, stats, hotplug: see lcpi.h */
DEFINE_MUTEX(lcpi_mutex);
DECLARE_WAIT_QUEUE_HEAD(lcpi_wait);
struct lcpi_cpu **lcpi_cpus;

struct lcpi_ht_config lcpi_ht_cfg = {
	.ways = LCPI_HT_DEFAULT_WAYS,
	.set_bits = LCPI_HT_DEFAULT_SET_BITS,
	.policy = LCPI_POLICY_ROUND_ROBIN,
	.hash = LCPI_HASH_MULTIPLY,
	.buffer_records = LCPI_HT_DEFAULT_BUFFER_RECORDS,
};

static enum cpuhp_state lcpi_hp_state;
static enum cpuhp_state lcpi_prep_state;

/*
 * Testing only (root, via /sys/module/lcpi/parameters): while set, a CPU
 * coming up gets no table memory, as if vmalloc had failed (Debian's
 * kernels have no fault injection to make it fail for real).
 */
static bool lcpi_inject_nomem;
module_param_named(inject_nomem, lcpi_inject_nomem, bool, 0600);
MODULE_PARM_DESC(inject_nomem,
		 "testing: a CPU coming up gets no table memory (0: off)");

/*
 * Gives @c's table and buffers memory, unless it still has the memory of
 * an earlier time online (an offline CPU whose counts were not drained
 * yet). vmalloc: exactly the pages it needs (kmalloc would round 522,240
 * bytes up to 1 MiB), on the CPU's node. Process context, from the
 * prepare-stage hotplug callback or module load: it may sleep.
 */
static int lcpi_cpu_mem_get(struct lcpi_cpu *c)
{
	void *mem;

	if (c->mem)
		return 0;
	mem = READ_ONCE(lcpi_inject_nomem) ? NULL :
		vmalloc_node(lcpi_ht_mem_size(&lcpi_ht_cfg), cpu_to_node(c->id));
	if (!mem)
		return -ENOMEM;
	lcpi_ht_attach(&c->ht, mem);
	c->mem = mem;
	return 0;
}

/*
 * Frees the memory of @c's table and buffers if its CPU is offline and
 * they hold no counts; otherwise they stay, for FLUSH and read() to drain
 * (lcpi_sample_flush() and lcpi_read() call this again afterwards). No
 * writer can run: an offline CPU has no counters, and a flush of it runs
 * under lcpi_mutex. The reader copies a buffer only while it is sealed,
 * and lcpi_ht_drained() sees both released. Under the hotplug lock (read
 * or write) and lcpi_mutex.
 */
void lcpi_cpu_mem_trim(struct lcpi_cpu *c)
{
	void *mem = c->mem;
	int b;

	if (!mem || cpu_online(c->id) || !lcpi_ht_drained(&c->ht))
		return;
	c->ht.entries = NULL;
	c->ht.rr_next = NULL;
	for (b = 0; b < 2; b++)
		c->ht.buf[b].records = NULL;
	c->mem = NULL;
	vfree(mem);
}

static void lcpi_cpu_free(unsigned int cpu)
{
	struct lcpi_cpu *c = lcpi_cpus[cpu];

	if (!c)
		return;
	irq_work_sync(&c->wake_work);
	vfree(c->mem);
	kfree(c);
	lcpi_cpus[cpu] = NULL;
}

/* The small per-CPU state, for every possible CPU: it keeps the statistics. */
static int lcpi_cpu_alloc(unsigned int cpu)
{
	struct lcpi_cpu *c;

	c = kzalloc_node(sizeof(*c), GFP_KERNEL, cpu_to_node(cpu));
	if (!c)
		return -ENOMEM;
	if (lcpi_ht_init(&c->ht, &lcpi_ht_cfg, NULL, cpu)) {
		kfree(c);
		return -EINVAL;
	}
	c->id = cpu;
	c->rnd = get_random_u64() | 1;	/* xorshift state must not be 0 */
	init_irq_work(&c->wake_work, lcpi_wake_func);
	lcpi_cpus[cpu] = c;
	return 0;
}

/*
 * CPUHP_BP_PREPARE_DYN: runs on a control CPU, in process context, before
 * @cpu boots (failing cancels the bring-up) and after it is dead; the
 * hotplug lock is held for writing. Allocating here rather than in the
 * online callback means the memory is there before any counter of the CPU
 * exists (the online state comes later going up and is torn down first
 * going down), and the allocation may sleep.
 */
static int lcpi_hp_prepare(unsigned int cpu)
{
	int ret;

	mutex_lock(&lcpi_mutex);
	ret = lcpi_cpu_mem_get(lcpi_cpus[cpu]);
	mutex_unlock(&lcpi_mutex);
	return ret;
}

static int lcpi_hp_dead(unsigned int cpu)
{
	mutex_lock(&lcpi_mutex);
	lcpi_cpu_mem_trim(lcpi_cpus[cpu]);
	mutex_unlock(&lcpi_mutex);
	return 0;
}

static int lcpi_hp_online(unsigned int cpu)
{
	return lcpi_sample_cpu_online(cpu);
}

static int lcpi_hp_offline(unsigned int cpu)
{
	lcpi_sample_cpu_offline(cpu);
	return 0;
}

static void lcpi_check_abi(void)
{
	BUILD_BUG_ON(sizeof(struct lcpi_record) != 16);
	BUILD_BUG_ON(sizeof(struct lcpi_buffer_header) != 48);
	BUILD_BUG_ON(sizeof(struct lcpi_table_stats) != 64);
	BUILD_BUG_ON(sizeof(struct lcpi_event_config) != 32);
	BUILD_BUG_ON(sizeof(struct lcpi_config) != LCPI_CONFIG_SIZE_VER1);
	BUILD_BUG_ON(sizeof(struct lcpi_info) != LCPI_INFO_SIZE_VER2);
	BUILD_BUG_ON(sizeof(struct lcpi_cpu_stats) != LCPI_CPU_STATS_SIZE_VER4);
	BUILD_BUG_ON(sizeof(struct lcpi_periods) != LCPI_PERIODS_SIZE_VER1);
	BUILD_BUG_ON(LCPI_MAX_EVENTS > 255);	/* lcpi_record.event is a u8 */
}

static int __init lcpi_init(void)
{
	unsigned int cpu;
	int ret;

	lcpi_check_abi();
	lcpi_sample_init();
	lcpi_cpus = kcalloc(nr_cpu_ids, sizeof(*lcpi_cpus), GFP_KERNEL);
	if (!lcpi_cpus)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		ret = lcpi_cpu_alloc(cpu);
		if (ret)
			goto err_free;
	}
	/* memory for every CPU already up, then for each that comes up */
	ret = cpuhp_setup_state(CPUHP_BP_PREPARE_DYN, "lcpi:prepare",
				lcpi_hp_prepare, lcpi_hp_dead);
	if (ret < 0)
		goto err_free;
	lcpi_prep_state = ret;
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "lcpi:online",
				lcpi_hp_online, lcpi_hp_offline);
	if (ret < 0)
		goto err_prep;
	lcpi_hp_state = ret;
	ret = lcpi_dev_register();
	if (ret)
		goto err_hp;
	pr_info("loaded: %u-way x %u sets, 2 x %u records, %llu bytes per online CPU\n",
		lcpi_ht_cfg.ways, lcpi_ht_sets(&lcpi_ht_cfg),
		lcpi_ht_cfg.buffer_records, lcpi_ht_mem_size(&lcpi_ht_cfg));
	return 0;

err_hp:
	cpuhp_remove_state(lcpi_hp_state);
err_prep:
	cpuhp_remove_state_nocalls(lcpi_prep_state);
err_free:
	for_each_possible_cpu(cpu)
		lcpi_cpu_free(cpu);
	kfree(lcpi_cpus);
	return ret;
}

static void __exit lcpi_exit(void)
{
	unsigned int cpu;

	lcpi_dev_unregister();
	/* releases the counters of every online CPU (none should be left) */
	cpuhp_remove_state(lcpi_hp_state);
	cpus_read_lock();
	mutex_lock(&lcpi_mutex);
	lcpi_sample_stop();
	mutex_unlock(&lcpi_mutex);
	cpus_read_unlock();
	/* no counters are left: every table is freed below, drained or not */
	cpuhp_remove_state_nocalls(lcpi_prep_state);
	for_each_possible_cpu(cpu)
		lcpi_cpu_free(cpu);
	kfree(lcpi_cpus);
	pr_info("unloaded\n");
}

module_init(lcpi_init);
module_exit(lcpi_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("lcpi developers");
MODULE_DESCRIPTION("lcpi: system-wide continuous sampling into per-CPU hash tables");

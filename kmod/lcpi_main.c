// SPDX-License-Identifier: GPL-2.0
/*
 * lcpi_main.c - module load and unload for lcpi.ko, the sampling half of
 * lcpi (Linux Continuous Profiling Infrastructure).
 *
 * Load allocates one hash table and two overflow buffers per possible CPU
 * (512 KB with the defaults of lcpi_hashtable.h), registers the hotplug
 * callbacks that create and release a CPU's perf counters while sampling,
 * and then /dev/lcpi. Unload undoes this in reverse order; the per-CPU
 * memory is freed last, after every counter that could write to it is gone.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/mm.h>

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

static void lcpi_cpu_free(unsigned int cpu)
{
	struct lcpi_cpu *c = lcpi_cpus[cpu];

	if (!c)
		return;
	irq_work_sync(&c->wake_work);
	kvfree(c->mem);
	kfree(c);
	lcpi_cpus[cpu] = NULL;
}

static int lcpi_cpu_alloc(unsigned int cpu)
{
	int node = cpu_to_node(cpu);
	struct lcpi_cpu *c;

	c = kzalloc_node(sizeof(*c), GFP_KERNEL, node);
	if (!c)
		return -ENOMEM;
	c->mem = kvzalloc_node(lcpi_ht_mem_size(&lcpi_ht_cfg), GFP_KERNEL,
			       node);
	if (!c->mem) {
		kfree(c);
		return -ENOMEM;
	}
	if (lcpi_ht_init(&c->ht, &lcpi_ht_cfg, c->mem, cpu)) {
		kvfree(c->mem);
		kfree(c);
		return -EINVAL;
	}
	c->id = cpu;
	c->rnd = get_random_u64() | 1;	/* xorshift state must not be 0 */
	init_irq_work(&c->wake_work, lcpi_wake_func);
	lcpi_cpus[cpu] = c;
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
	BUILD_BUG_ON(sizeof(struct lcpi_info) != LCPI_INFO_SIZE_VER1);
	BUILD_BUG_ON(sizeof(struct lcpi_cpu_stats) != LCPI_CPU_STATS_SIZE_VER1);
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
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "lcpi:online",
				lcpi_hp_online, lcpi_hp_offline);
	if (ret < 0)
		goto err_free;
	lcpi_hp_state = ret;
	ret = lcpi_dev_register();
	if (ret)
		goto err_hp;
	pr_info("loaded: %u-way x %u sets, 2 x %u records, %llu bytes per CPU\n",
		lcpi_ht_cfg.ways, lcpi_ht_sets(&lcpi_ht_cfg),
		lcpi_ht_cfg.buffer_records, lcpi_ht_mem_size(&lcpi_ht_cfg));
	return 0;

err_hp:
	cpuhp_remove_state(lcpi_hp_state);
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

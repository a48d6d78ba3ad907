// SPDX-License-Identifier: GPL-2.0
/*
 * lcpi_dev.c - /dev/lcpi, the one door between lcpi.ko and its reader.
 *
 * A strict interface: opening needs CAP_SYS_ADMIN (and the node is 0600),
 * there is one reader at a time (-EBUSY for a second open), and read()
 * hands out exactly one sealed overflow buffer, header and records, never
 * part of one: a read shorter than the largest buffer fails with -EINVAL.
 * read() blocks (or fails with -EAGAIN under O_NONBLOCK) until some CPU has
 * a sealed buffer; poll() says when. Closing the device stops sampling;
 * the tables keep their counts for the next reader to flush.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cpu.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/nospec.h>
#include <linux/poll.h>
#include <linux/uaccess.h>

#include "lcpi.h"
#include "include/lcpi_attr.h"

static unsigned long lcpi_open_bit;
static DEFINE_MUTEX(lcpi_read_mutex);
static unsigned int lcpi_read_next;	/* CPU to look at first, for fairness */

static size_t lcpi_buffer_bytes(void)
{
	return sizeof(struct lcpi_buffer_header) +
	       (size_t)lcpi_ht_cfg.buffer_records * sizeof(struct lcpi_record);
}

/* A CPU with a sealed buffer, trying each in turn; -1 if none. */
static int lcpi_find_ready(struct lcpi_cpu **cp)
{
	unsigned int n, cpu = READ_ONCE(lcpi_read_next);
	struct lcpi_cpu *c;
	int idx;

	for (n = 0; n < nr_cpu_ids; n++, cpu++) {
		if (cpu >= nr_cpu_ids)
			cpu = 0;
		c = lcpi_cpus[cpu];
		if (!c)
			continue;
		idx = lcpi_ht_ready(&c->ht);
		if (idx >= 0) {
			*cp = c;
			return idx;
		}
	}
	return -1;
}

static bool lcpi_any_ready(void)
{
	struct lcpi_cpu *c;

	return lcpi_find_ready(&c) >= 0;
}

static int lcpi_open(struct inode *inode, struct file *file)
{
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (test_and_set_bit_lock(0, &lcpi_open_bit))
		return -EBUSY;
	return stream_open(inode, file);
}

static int lcpi_release(struct inode *inode, struct file *file)
{
	cpus_read_lock();
	mutex_lock(&lcpi_mutex);
	lcpi_sample_stop();
	mutex_unlock(&lcpi_mutex);
	cpus_read_unlock();
	clear_bit_unlock(0, &lcpi_open_bit);
	return 0;
}

/*
 * The last buffer of an offline CPU may just have been read: its memory can
 * go (lcpi_cpu_mem_trim() checks again under the locks it needs, taken in
 * their order; lcpi_read_mutex is not held).
 */
static void lcpi_trim_offline(struct lcpi_cpu *c)
{
	cpus_read_lock();
	mutex_lock(&lcpi_mutex);
	lcpi_cpu_mem_trim(c);
	mutex_unlock(&lcpi_mutex);
	cpus_read_unlock();
}

static ssize_t lcpi_read(struct file *file, char __user *ubuf, size_t len,
			 loff_t *ppos)
{
	const size_t hsize = sizeof(struct lcpi_buffer_header);
	struct lcpi_ht_buffer *b;
	struct lcpi_cpu *c;
	size_t rsize;
	int idx, ret;

	if (len < lcpi_buffer_bytes())
		return -EINVAL;
	if (mutex_lock_interruptible(&lcpi_read_mutex))
		return -ERESTARTSYS;
	while ((idx = lcpi_find_ready(&c)) < 0) {
		mutex_unlock(&lcpi_read_mutex);
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		ret = wait_event_interruptible(lcpi_wait, lcpi_any_ready());
		if (ret)
			return ret;
		if (mutex_lock_interruptible(&lcpi_read_mutex))
			return -ERESTARTSYS;
	}
	/* B in lcpi_ht_ready() ordered these loads after the seal */
	b = &c->ht.buf[idx];
	if (WARN_ON_ONCE(b->hdr.nr_records > lcpi_ht_cfg.buffer_records)) {
		ret = -EIO;
		goto out;
	}
	rsize = (size_t)b->hdr.nr_records * sizeof(struct lcpi_record);
	if (copy_to_user(ubuf, &b->hdr, hsize) ||
	    copy_to_user(ubuf + hsize, b->records, rsize)) {
		ret = -EFAULT;	/* the buffer stays sealed for the next read */
		goto out;
	}
	lcpi_ht_release(&c->ht, idx);	/* D, matches C in the writer */
	c->buffers_read++;
	WRITE_ONCE(lcpi_read_next, c->id + 1);
	ret = hsize + rsize;
out:
	mutex_unlock(&lcpi_read_mutex);
	if (ret > 0 && !cpu_online(c->id))
		lcpi_trim_offline(c);
	return ret;
}

static __poll_t lcpi_poll(struct file *file, poll_table *wait)
{
	poll_wait(file, &lcpi_wait, wait);
	return lcpi_any_ready() ? EPOLLIN | EPOLLRDNORM : 0;
}

/*
 * 0 if @cfg is usable, else -EINVAL. Unused event slots must be zero.
 *
 * Of the software events only the two clocks are accepted: perf's init and
 * destroy of the others take a static key (static_key_slow_inc() and _dec()
 * take cpus_read_lock()), and lcpi creates and releases its events in its
 * hotplug callbacks, where the hotplug lock is held for writing, and under
 * cpus_read_lock() at START and STOP: a CPU going on- or offline while such
 * an event is sampled would deadlock. Their handlers would also run in
 * process context. The clocks are hrtimers: no static key, irq context.
 *
 * Each mean period has a floor (lcpi_abi.h): 10 us for the clocks, the
 * shortest hrtimer period perf programs anyway, and LCPI_MIN_PERIOD_EVENTS
 * for a PMU event, so no configuration asks for an interrupt storm.
 */
int lcpi_config_check(const struct lcpi_config *cfg)
{
	static const struct lcpi_event_config zero;
	const struct lcpi_event_config *ev;
	u32 i;

	if (cfg->size != LCPI_CONFIG_SIZE_VER1)
		return -EINVAL;
	if (cfg->nr_events < 1 || cfg->nr_events > LCPI_MAX_EVENTS)
		return -EINVAL;
	for (i = 0; i < LCPI_MAX_EVENTS; i++) {
		ev = &cfg->events[i];
		if (i >= cfg->nr_events) {
			if (memcmp(ev, &zero, sizeof(zero)))
				return -EINVAL;
			continue;
		}
		if (lcpi_attr_check(ev))
			return -EINVAL;
	}
	return 0;
}

static long lcpi_ioc_set_config(void __user *uarg)
{
	struct lcpi_config cfg;
	u32 size;
	int ret;

	if (get_user(size, (u32 __user *)uarg))
		return -EFAULT;
	if (size != sizeof(cfg))
		return -EINVAL;
	if (copy_from_user(&cfg, uarg, sizeof(cfg)))
		return -EFAULT;
	ret = lcpi_config_check(&cfg);
	if (ret)
		return ret;
	mutex_lock(&lcpi_mutex);
	if (lcpi_running) {
		ret = -EBUSY;
	} else {
		/*
		 * time_enabled/time_running keep counting: user space
		 * subtracts them as u64 from a baseline (a reset wrapped it)
		 */
		lcpi_sample_configure(&cfg);
		ret = 0;
	}
	mutex_unlock(&lcpi_mutex);
	return ret;
}

/*
 * SET_PERIODS: untrusted, so checked whole before anything changes: the
 * size, nr_events equal to the configured number (checked under lcpi_mutex
 * with the configuration it names), each period within the bounds
 * SET_CONFIG enforces for the event really sampled (lcpi_real: a cycles
 * event fallen back to cpu-clock is a clock, in ns), unused slots zero.
 * Answers with the periods in effect.
 */
static long lcpi_ioc_set_periods(void __user *uarg)
{
	struct lcpi_periods p;
	u32 i;
	int ret = 0;

	if (copy_from_user(&p, uarg, sizeof(p)))
		return -EFAULT;
	if (p.size != sizeof(p) || p.nr_events < 1 ||
	    p.nr_events > LCPI_MAX_EVENTS)
		return -EINVAL;
	for (i = p.nr_events; i < LCPI_MAX_EVENTS; i++)
		if (p.period[i])
			return -EINVAL;
	cpus_read_lock();
	mutex_lock(&lcpi_mutex);
	if (p.nr_events != lcpi_cfg.nr_events)
		ret = -EINVAL;
	for (i = 0; !ret && i < p.nr_events; i++)
		if (lcpi_attr_check_period(&lcpi_real[i], p.period[i]))
			ret = -EINVAL;
	if (!ret)
		ret = lcpi_sample_set_periods(p.period);
	for (i = 0; !ret && i < p.nr_events; i++)
		p.period[i] = lcpi_sample_period(i);
	mutex_unlock(&lcpi_mutex);
	cpus_read_unlock();
	if (ret)
		return ret;
	if (copy_to_user(uarg, &p, sizeof(p)))
		return -EFAULT;
	return 0;
}

/* GET_INFO: VER1 or VER2, the size the ioctl number says */
static long lcpi_ioc_get_info(unsigned int cmd, void __user *uarg)
{
	const struct perf_event *event;
	struct lcpi_info info;
	u32 size, i;

	if (get_user(size, (u32 __user *)uarg))
		return -EFAULT;
	if (size != _IOC_SIZE(cmd))
		return -EINVAL;
	memset(&info, 0, sizeof(info));
	info.size = size;
	info.abi_version = LCPI_ABI_VERSION;
	info.nr_cpus = nr_cpu_ids;
	info.ways = lcpi_ht_cfg.ways;
	info.sets = lcpi_ht_sets(&lcpi_ht_cfg);
	info.buffer_records = lcpi_ht_cfg.buffer_records;
	info.buffer_bytes = lcpi_buffer_bytes();
	info.sizeof_record = sizeof(struct lcpi_record);
	info.sizeof_buffer_header = sizeof(struct lcpi_buffer_header);
	info.sizeof_cpu_stats = sizeof(struct lcpi_cpu_stats);
	info.sizeof_config = sizeof(struct lcpi_config);
	mutex_lock(&lcpi_mutex);
	info.running = lcpi_running;
	info.nr_events = lcpi_cfg.nr_events;
	memcpy(info.events, lcpi_real, sizeof(info.events));
	/* how each event was really opened, while it is */
	for (i = 0; i < LCPI_MAX_EVENTS; i++) {
		event = lcpi_sample_first_event(i);
		if (!event)
			continue;
		if (event->attr.exclude_guest)
			info.events[i].flags |= LCPI_EVENT_INFO_EXCLUDE_GUEST;
		if (lcpi_not_running & BIT(i))
			info.events[i].flags |= LCPI_EVENT_INFO_NOT_RUNNING;
		info.precise_ip[i] = event->attr.precise_ip;
	}
	mutex_unlock(&lcpi_mutex);
	if (copy_to_user(uarg, &info, size))
		return -EFAULT;
	return 0;
}

static long lcpi_ioc_get_stats(unsigned int cmd, void __user *uarg)
{
	struct lcpi_cpu_stats st;
	u32 size;
	struct lcpi_cpu *c;
	unsigned int cpu;
	u32 i;

	if (copy_from_user(&st, uarg, 2 * sizeof(u32)))
		return -EFAULT;
	/* the size the ioctl number says, VER1 to VER4 */
	size = st.size;
	if (size != _IOC_SIZE(cmd))
		return -EINVAL;
	if (st.cpu >= nr_cpu_ids)
		return -EINVAL;
	cpu = array_index_nospec(st.cpu, nr_cpu_ids);
	if (!cpu_possible(cpu) || !lcpi_cpus[cpu])
		return -EINVAL;
	c = lcpi_cpus[cpu];
	memset(&st, 0, sizeof(st));
	st.size = size;
	st.cpu = cpu;

	cpus_read_lock();
	mutex_lock(&lcpi_mutex);
	for (i = 0; i < LCPI_MAX_EVENTS; i++)
		if (c->events[i])
			st.online = 1;
	/* the handler may be updating these: a snapshot, exact once stopped */
	st.table = c->ht.stats;
	st.nested = local64_read(&c->nested);
	st.throttle_events = local64_read(&c->throttle_events);
	st.throttled_lost_estimate = READ_ONCE(c->throttled_lost);
	st.nmi_samples = READ_ONCE(c->nmi_samples);
	st.handler_ns_hit = READ_ONCE(c->handler_ns_hit);
	st.handler_ns_miss = READ_ONCE(c->handler_ns_miss);
	st.buffers_read = READ_ONCE(c->buffers_read);
	st.flush_irqoff_ns_max = min_t(u64, c->flush_irqoff_ns_max, U32_MAX);
	lcpi_sample_times(c, st.time_enabled, st.time_running);
	mutex_unlock(&lcpi_mutex);
	cpus_read_unlock();

	if (copy_to_user(uarg, &st, size))
		return -EFAULT;
	return 0;
}

static long lcpi_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	long ret;
	u64 gen;

	switch (cmd) {
	case LCPI_IOC_GET_VERSION:
		return put_user((u32)LCPI_ABI_VERSION, (u32 __user *)uarg);
	case LCPI_IOC_SET_CONFIG:
		return lcpi_ioc_set_config(uarg);
	case LCPI_IOC_START:
		cpus_read_lock();
		mutex_lock(&lcpi_mutex);
		ret = lcpi_sample_start(&gen);
		mutex_unlock(&lcpi_mutex);
		cpus_read_unlock();
		if (ret)
			return ret;
		/* the not-running probe's wait, hotplug and ioctls free */
		msleep(LCPI_RUNNING_PROBE_MS);
		cpus_read_lock();
		mutex_lock(&lcpi_mutex);
		lcpi_probe_running_end(gen);
		mutex_unlock(&lcpi_mutex);
		cpus_read_unlock();
		return 0;
	case LCPI_IOC_STOP:
	case LCPI_IOC_FLUSH:
		cpus_read_lock();
		mutex_lock(&lcpi_mutex);
		if (cmd == LCPI_IOC_STOP) {
			lcpi_sample_stop();
			ret = 0;
		} else {
			ret = lcpi_sample_flush();
		}
		mutex_unlock(&lcpi_mutex);
		cpus_read_unlock();
		return ret;
	case LCPI_IOC_SET_PERIODS:
		return lcpi_ioc_set_periods(uarg);
	case LCPI_IOC_GET_INFO:
	case LCPI_IOC_GET_INFO_VER1:
		return lcpi_ioc_get_info(cmd, uarg);
	case LCPI_IOC_GET_STATS:
	case LCPI_IOC_GET_STATS_VER1:
	case LCPI_IOC_GET_STATS_VER2:
	case LCPI_IOC_GET_STATS_VER3:
		return lcpi_ioc_get_stats(cmd, uarg);
	default:
		return -ENOTTY;
	}
}

/*
 * No .llseek: lcpi_open() makes the file a stream (stream_open() clears
 * FMODE_LSEEK, FMODE_PREAD and FMODE_PWRITE), so vfs_llseek() fails with
 * -ESPIPE without calling ->llseek, and pread() with -ESPIPE too. 6.1's
 * fs.h already has "#define no_llseek NULL", so this is the same
 * file_operations as before there; 6.12 removed the macro, and naming it
 * no longer builds.
 */
static const struct file_operations lcpi_fops = {
	.owner = THIS_MODULE,
	.open = lcpi_open,
	.release = lcpi_release,
	.read = lcpi_read,
	.poll = lcpi_poll,
	.unlocked_ioctl = lcpi_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice lcpi_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "lcpi",
	.fops = &lcpi_fops,
	.mode = 0600,
};

int lcpi_dev_register(void)
{
	return misc_register(&lcpi_misc);
}

void lcpi_dev_unregister(void)
{
	misc_deregister(&lcpi_misc);
}

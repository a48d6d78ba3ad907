-- 009_window_cost_stacks.sql - the call stacks' interrupts in each window's
-- cost (issue #29: stacks counted in the cost budget). A stack sample is a
-- cpu-clock sample of its own, beside the flat ones: from this migration
-- on, interrupt_ns and interrupt_ci95_ns sum over both, and stack_samples
-- counts the stacks, so the reports' interrupt cost per sample divides by
-- samples + stack_samples. lcpid's CPU unwinding them was in daemon_ns
-- already. Rows written before have 0 (their stacks' interrupts were not
-- counted).
ALTER TABLE window_costs ADD COLUMN
  stack_samples INTEGER NOT NULL DEFAULT 0 CHECK (stack_samples >= 0);

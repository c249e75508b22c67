// Per-execution cost of the journey rollup triggers (migration JourneyRollups) on the write path:
// N executions written as the engine writes them, each commit with 2 steps (bench/lib/write-path.mjs),
// in batches of B executions per statement, one client, in a database of its own. Rounds alternate
// between the journey triggers enabled and disabled (every other rollup trigger on in both); prints the
// median ms per execution of each, and the server time of each journey trigger per execution from
// EXPLAIN ANALYZE's trigger lines.
// After `npm run build`:  node bench/journey-write-cost.mjs [executions-per-round=2000] [batch=1] [rounds=5]
import { median, withWritePath } from './lib/write-path.mjs';

const [n = 2000, batch = 1, rounds = 5] = process.argv.slice(2).map(Number);
const JOURNEY_TRIGGERS = [
  ...['insert', 'update', 'delete'].map((op) => ['workflow_executions', `workflow_executions_journey_${op}`]),
  ...['insert', 'update', 'delete'].map((op) => ['execution_steps', `execution_steps_journey_${op}`]),
  ['workflow_executions', '"A_workflow_executions_journey_forget_steps"'],
];
// JOURNEY_TABLE=workflow_executions or execution_steps toggles only that table's journey triggers.
const toggled = JOURNEY_TRIGGERS.filter(([table]) => !process.env.JOURNEY_TABLE || table === process.env.JOURNEY_TABLE);

await withWritePath({ prefix: 'was_journey_write', n, batch, steps: true }, async ({ db, round, explain }) => {
  const setJourneyTriggers = async (on) => {
    for (const [table, trigger] of toggled) await db.query(`ALTER TABLE ${table} ${on ? 'ENABLE' : 'DISABLE'} TRIGGER ${trigger}`);
  };
  // Server time of each journey trigger per execution (median over the statements), and the other rollup triggers for scale.
  const samples = {};
  const runs = Math.min(n, 300);
  for (let i = 0; i < runs; i += batch) {
    for (const [phase, trigger, ms] of await explain()) {
      if (/journey|rollup/.test(trigger)) (samples[`${phase}: ${trigger}`] ??= []).push(ms);
    }
  }
  const medians = Object.entries(samples).map(([k, v]) => [k, median(v)]);
  const total = (re) => medians.filter(([k]) => re.test(k)).reduce((a, [, v]) => a + v, 0).toFixed(3);
  console.log(`trigger ms per execution (batch ${batch}, median of ${runs / batch} statements): journey triggers ${total(/journey/)}, other rollup triggers ${total(/rollup/)}`);
  for (const [k, v] of medians) console.log(`  ${k.padEnd(56)} ${v.toFixed(3)}`);

  // JOURNEY_OFF=1: every journey trigger off throughout (a reference for the rounds' drift).
  if (process.env.JOURNEY_OFF) for (const [table, trigger] of JOURNEY_TRIGGERS) await db.query(`ALTER TABLE ${table} DISABLE TRIGGER ${trigger}`);
  const results = { with: [], without: [] };
  for (let r = 0; r < rounds; r++) {
    for (const mode of r % 2 === 0 ? ['with', 'without'] : ['without', 'with']) {
      if (!process.env.JOURNEY_OFF) await setJourneyTriggers(mode === 'with');
      await db.query('CHECKPOINT');
      results[mode].push(await round());
    }
  }
  if (!process.env.JOURNEY_OFF) await setJourneyTriggers(true);
  const without = median(results.without);
  for (const [mode, times] of Object.entries(results)) {
    const m = median(times);
    console.log(`${mode.padEnd(8)} journey triggers: ${m.toFixed(3)} ms/execution (rounds ${times.map((t) => t.toFixed(3)).join(', ')})` +
      (mode === 'with' ? `, +${(m - without).toFixed(3)} ms = +${(((m - without) / without) * 100).toFixed(1)}%` : ''));
  }
});

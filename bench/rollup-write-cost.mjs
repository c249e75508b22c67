// Per-execution cost of the rollup triggers on the write path: N executions written as the engine
// writes them (bench/lib/write-path.mjs), in batches of B executions per statement (and a commit
// writing no row), one client, in a database of its own.
// Rounds alternate between: the triggers of the previous release (the last migration undone), the
// current triggers, and no rollup triggers; prints the median ms per execution of each.
// After `npm run build`:  node bench/rollup-write-cost.mjs [executions-per-round=2000] [batch=1] [rounds=3]
import { median, withWritePath } from './lib/write-path.mjs';

const [n = 2000, batch = 1, rounds = 3] = process.argv.slice(2).map(Number);
// Since migration RollupFolding these append to the change logs; the rollups themselves are folded later (src/rollups/README.md).
const ROLLUP_TRIGGERS = ['workflow_executions', 'trigger_executions', 'messages'].flatMap((t) =>
  ['insert', 'update', 'delete'].map((op) => `ALTER TABLE ${t} %s TRIGGER ${t}_rollup_${op}`),
);
// A commit that finishes nothing and sends nothing still fires these (statement triggers).
const EMPTY_COMMIT = ({ org, customer }) => [[
  'empty',
  `WITH t AS (UPDATE trigger_executions SET status = 'success' WHERE id = ANY (ARRAY[]::uuid[]))
   INSERT INTO messages (organization_id, customer_id, channel, direction, content) SELECT $1, $2, 'whatsapp', 'outbound', 'x' WHERE false`,
  [org, customer],
]];

await withWritePath({ prefix: 'was_rollup_write', n, batch }, async ({ db, ds, round, explain }) => {
  // Server time of each rollup trigger per execution, from EXPLAIN ANALYZE's trigger lines: the
  // median over the statements (robust to the machine's other load), alternating the two versions.
  const samples = { previous: {}, current: {} };
  async function triggerTimes(mode) {
    for (let i = 0; i < Math.min(n, 300); i += batch) {
      for (const [phase, trigger, ms] of await explain(EMPTY_COMMIT)) {
        if (trigger.includes('rollup')) (samples[mode][`${phase}: ${trigger}`] ??= []).push(ms);
      }
    }
  }
  for (let r = 0; r < rounds; r++) {
    await ds.undoLastMigration({ transaction: 'each' });
    await triggerTimes('previous');
    await ds.runMigrations({ transaction: 'each' });
    await triggerTimes('current');
  }
  for (const [mode, byTrigger] of Object.entries(samples)) {
    const medians = Object.entries(byTrigger).map(([k, v]) => [k, median(v)]);
    console.log(`${mode}: rollup trigger ms per execution (batch ${batch}, median of ${Object.values(byTrigger)[0].length} statements), total ${medians.reduce((a, [, v]) => a + v, 0).toFixed(3)}`);
    for (const [k, v] of medians) console.log(`  ${k.padEnd(48)} ${v.toFixed(3)}`);
  }

  const results = { previous: [], current: [], none: [] };
  for (let r = 0; r < rounds; r++) {
    for (const mode of ['previous', 'current', 'none']) {
      if (mode === 'previous') await ds.undoLastMigration({ transaction: 'each' });
      if (mode === 'current') await ds.runMigrations({ transaction: 'each' });
      if (mode === 'none') for (const s of ROLLUP_TRIGGERS) await db.query(s.replace('%s', 'DISABLE'));
      await db.query('CHECKPOINT');
      results[mode].push(await round());
      if (mode === 'none') for (const s of ROLLUP_TRIGGERS) await db.query(s.replace('%s', 'ENABLE'));
    }
  }
  const none = median(results.none);
  for (const [mode, times] of Object.entries(results)) {
    const m = median(times);
    console.log(`${mode.padEnd(9)} ${m.toFixed(3)} ms/execution (rounds ${times.map((t) => t.toFixed(3)).join(', ')})${mode === 'none' ? '' : `, triggers +${(m - none).toFixed(3)} ms`}`);
  }
});

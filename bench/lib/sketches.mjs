// The workers' first sketch pass (SketchLoop, src/execution-metrics) over a seeded year, run by the bench itself
// before it measures: what a year of service leaves stored, and a worker's own first pass (30 s after it starts)
// then finds nothing to fold in the middle of a measurement.
import { join } from 'node:path';

/** The build's own SketchLoop pass over the last 366 days, on a connection of its own, timed. */
export async function firstSketchPass(ctx) {
  const dist = join(ctx.build.root, 'dist', 'src');
  const { dataSourceOptions } = await import(join(dist, 'database', 'data-source.options.js'));
  const { SketchLoop } = await import(join(dist, 'execution-metrics', 'sketch.loop.js'));
  const { RollupFolder } = await import(join(dist, 'rollups', 'rollup-folder.js'));
  const { DataSource } = await import('typeorm');
  const ds = new DataSource({ ...dataSourceOptions({ databaseUrl: ctx.databaseUrl }), migrationsRun: false });
  await ds.initialize();
  try {
    const started = performance.now();
    const report = await new SketchLoop(ds, new RollupFolder(ds)).pass(new Date(), 366);
    return { days: report.folded.day, months: report.folded.month, ms: performance.now() - started };
  } finally {
    await ds.destroy();
  }
}

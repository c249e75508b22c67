import { useEffect, useRef } from 'preact/hooks';
import type uPlot from 'uplot';

/**
 * A uPlot chart, loaded on first use (uPlot and its stylesheet stay out of the first page's bundle).
 * `x` is in seconds (uPlot's time scale); each series one line or bars.
 */
export function Chart(props: { title: string; x: number[]; series: { label: string; values: (number | null)[]; bars?: boolean; scale?: string; color: string }[] }) {
  const el = useRef<HTMLDivElement>(null);
  useEffect(() => {
    let plot: uPlot | undefined;
    let live = true;
    void (async () => {
      const [{ default: UPlot }] = await Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')]);
      if (!live || !el.current) return;
      const bars = UPlot.paths.bars?.({ size: [0.6, 40] });
      plot = new UPlot(
        {
          title: props.title,
          width: Math.min(900, el.current.clientWidth || 700),
          height: 260,
          series: [{}, ...props.series.map((s) => ({ label: s.label, stroke: s.color, fill: s.bars ? s.color : undefined, paths: s.bars ? bars : undefined, scale: s.scale ?? 'y' }))],
          axes: [{}, { scale: 'y' }, ...(props.series.some((s) => s.scale === '%') ? [{ scale: '%', side: 1, grid: { show: false } }] : [])],
          scales: { '%': { range: [0, 100] } },
        },
        [props.x, ...props.series.map((s) => s.values)] as uPlot.AlignedData,
        el.current,
      );
      el.current.dataset.drawn = 'true';
    })();
    return () => {
      live = false;
      plot?.destroy();
    };
  }, [JSON.stringify(props)]);
  return <div class="chart" ref={el} role="img" aria-label={props.title} />;
}

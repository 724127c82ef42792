import { useEffect, useRef } from 'react';
import * as Plot from '@observablehq/plot';

export interface Bar {
  x: number;
  label: string;
  tasks: number;
  succeeded: number;
}

/** Stacked bars of tasks (succeeded / other) per bin, drawn by Observable Plot. */
export function BarChart({ bars, xLabel, name }: { bars: Bar[]; xLabel: string; name: string }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const data = bars.flatMap((bar) => [
      { label: bar.label, x: bar.x, outcome: 'succeeded', tasks: bar.succeeded },
      { label: bar.label, x: bar.x, outcome: 'other', tasks: bar.tasks - bar.succeeded },
    ]);
    const chart = Plot.plot({
      height: 200,
      width: ref.current?.clientWidth || 480,
      marginLeft: 44,
      // Every bin keeps its place; with many bins only every fifth is labelled.
      x: {
        label: xLabel,
        type: 'band',
        domain: bars.map((bar) => bar.label),
        ticks:
          bars.length > 16 ? bars.filter((_, i) => i % 5 === 0).map((bar) => bar.label) : undefined,
      },
      y: { label: 'tasks', grid: true },
      color: { domain: ['succeeded', 'other'], range: ['#2e7d32', '#b0bec5'], legend: true },
      marks: [
        Plot.barY(data, { x: 'label', y: 'tasks', fill: 'outcome', tip: true }),
        Plot.ruleY([0]),
      ],
    });
    ref.current?.replaceChildren(chart);
    return () => chart.remove();
  }, [bars, xLabel]);
  return <div ref={ref} className="chart" data-chart={name} />;
}

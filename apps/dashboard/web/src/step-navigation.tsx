/** Previous / next buttons of a trajectory; the keys are bound by the trajectory itself. */
export function StepNavigation({
  index,
  count,
  onIndex,
}: {
  index: number;
  count: number;
  onIndex: (i: number) => void;
}) {
  return (
    <div className="step-nav">
      <button type="button" onClick={() => onIndex(index - 1)} disabled={index === 0}>
        ← previous
      </button>
      <button type="button" onClick={() => onIndex(index + 1)} disabled={index === count - 1}>
        next →
      </button>
      <span className="muted small">← / → (or k / j) move between steps</span>
    </div>
  );
}

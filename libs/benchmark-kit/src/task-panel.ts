// What a benchmark hands the dashboard to draw, as plain data: the dashboard owns the panels, the
// benchmark chooses among them and fills them. The browser code reads these types as they are.

/**
 * The dashboard's trajectory panels. `screenshots`: a frame per step with the step's computer-use
 * tool calls (`action.tool_calls`, Bytebot's vocabulary) drawn on it; `pages`: the text page each
 * step led to, with the action string, its validity and the actions on offer (`action.action`,
 * `action.valid`, `action.available_actions`); `steps`: every step as a row of its recorded
 * columns (action JSON, text, observation, reward, tokens, latency), for a benchmark with no other.
 */
export type TrajectoryPanel = 'screenshots' | 'pages' | 'steps';

/** What a benchmark that chooses no trajectory panel gets. */
export const DEFAULT_TRAJECTORY_PANEL: TrajectoryPanel = 'steps';

/**
 * A run of text in a panel: plain, code, a chip (a name: value pair), an aside in grey, or a link
 * to a file of the artifact store the task recorded (`artifact`: its URI; the dashboard serves
 * only URIs its panels name).
 */
export type TaskPanelText =
  | string
  | { readonly code: string }
  | { readonly chip: string }
  | { readonly muted: readonly TaskPanelText[] }
  | { readonly artifact: string; readonly label: string };

/** A cell: text as given; a number with three decimals; null for a value nobody recorded (`–`); runs of text (links). */
export type TaskPanelCell = string | number | null | { readonly text: readonly TaskPanelText[] };

interface TaskPanelColumn {
  readonly key: string;
  readonly label: string;
  readonly numeric?: boolean;
  /** Marks the column's cells `data-<attribute>`, for people and tests that read the page. */
  readonly attribute?: string;
}

export interface TaskPanelRow {
  /** Goes into the row's `data-<rowAttribute>`. */
  readonly key: string;
  /** By column key; a column the row leaves out is an empty cell. */
  readonly cells: Readonly<Record<string, TaskPanelCell>>;
  /** A row that sums the others, set apart. */
  readonly total?: boolean;
}

export interface TaskPanelTable {
  /** The table's `data-table`. */
  readonly name: string;
  readonly rowAttribute: string;
  readonly columns: readonly TaskPanelColumn[];
  readonly rows: readonly TaskPanelRow[];
}

interface TaskPanelParagraph {
  /** The paragraph's `data-field`. */
  readonly field?: string;
  readonly text: readonly TaskPanelText[];
}

/**
 * A panel of the task page that a benchmark fills from its own tables and results (WebShop: the
 * purchase and its reward component by component); the dashboard draws it below the trajectory,
 * with the SQL of the queries that filled it under "Show SQL".
 */
export interface TaskPanel {
  /** The panel's `data-panel`, unique on the page. */
  readonly id: string;
  readonly title: string;
  readonly paragraphs?: readonly TaskPanelParagraph[];
  readonly table?: TaskPanelTable;
  /** Shown behind a "show the raw …" toggle. */
  readonly raw?: { readonly label: string; readonly value: unknown };
}

import type {
  TaskDetailContext,
  TaskPanel,
  TaskPanelRow,
  TaskPanelText,
} from '@benchfleet/benchmark-kit';
import { defineQuery } from '@benchfleet/db';

// WebShop's own panel of a task page: the purchase and its reward, component by component, as the
// official reward function computed it, next to what the goal asked for (from `webshop_goals`).

export const webshopGoalQuery = defineQuery({
  name: 'webshop_goal',
  title: 'What the WebShop goal asked for',
  params: ['run', 'task'],
  sql: `
select g.goal->'attributes' as attributes, g.goal->'goal_options' as options, (g.goal->>'price_upper')::float8 as price_upper,
       g.goal->>'query' as query, g.goal->>'product_category' as category, g.asin as target_asin
from tasks t
join runs r on r.id = t.run_id
join webshop_goals g on g.catalog_id = r.config->>'catalog_id' and g.goal_index = (t.spec->>'goal_index')::int
where t.run_id = :run and t.task_id = :task`,
});

interface WebshopGoalRow {
  attributes: string[] | null;
  options: string[] | Record<string, string> | null;
  price_upper: number | null;
  query: string | null;
  category: string | null;
  target_asin: string;
}

/** `tasks.result.reward_info` as the reward function wrote it; read as stored, fields may be missing. */
type RewardInfo = Partial<
  Record<
    'r_type' | 'r_att' | 'w_att' | 'r_option' | 'w_option' | 'w_price' | 'title_score',
    number | null
  >
> & {
  r_price?: boolean;
  query_match?: boolean;
  category_match?: boolean;
};

const threeDecimals = (value: number | null | undefined): string =>
  value === null || value === undefined || Number.isNaN(value) ? '–' : value.toFixed(3);

const yesNo = (value: boolean | undefined): string => (value ? 'yes' : 'no');

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function purchaseText(
  result: Record<string, unknown>,
  asin: string,
  goal: WebshopGoalRow | undefined,
): TaskPanelText[] {
  const options = (result['purchased_options'] ?? {}) as Record<string, string>;
  const chips = Object.entries(options).map(([name, value]) => ({ chip: `${name}: ${value}` }));
  return [
    'Bought ',
    { code: asin },
    ` at $${String(result['price'] ?? '–')}`,
    ...(goal ? [{ muted: [" (the goal's product was ", { code: goal.target_asin }, ')'] }] : []),
    ...(chips.length > 0 ? [' with options ', ...chips] : []),
  ];
}

/** The weighted components, each with what the goal asked; their contributions sum to the reward's second factor. */
function weightedRows(
  info: RewardInfo,
  result: Record<string, unknown>,
  goal: WebshopGoalRow | undefined,
): TaskPanelRow[] {
  const rows: TaskPanelRow[] = [
    {
      key: 'attribute',
      cells: {
        component: 'attributes matched (r_att)',
        asked: (goal?.attributes ?? []).join(', '),
        value: info.r_att ?? null,
        weight: info.w_att ?? null,
        contribution: (info.r_att ?? 0) * (info.w_att ?? 0),
      },
    },
  ];
  if (info.r_option !== undefined) {
    const wanted = goal?.options
      ? Array.isArray(goal.options)
        ? goal.options
        : Object.values(goal.options)
      : [];
    const chosen =
      Object.values((result['purchased_options'] ?? {}) as Record<string, string>).join(', ') ||
      'none chosen';
    rows.push({
      key: 'option',
      cells: {
        component: 'options matched (r_option)',
        asked: `${wanted.join(', ')} (chosen: ${chosen})`,
        value: info.r_option,
        weight: info.w_option ?? null,
        contribution: (info.r_option ?? 0) * (info.w_option ?? 0),
      },
    });
  }
  const limit = goal?.price_upper ?? null;
  rows.push({
    key: 'price',
    cells: {
      component: 'price within budget (r_price)',
      asked: limit === null ? '' : `$${String(result['price'] ?? '–')} against at most $${limit}`,
      value: info.r_price ? 'yes (1)' : 'no (0)',
      weight: info.w_price ?? null,
      contribution: (info.r_price ? 1 : 0) * (info.w_price ?? 0),
    },
  });
  return rows;
}

/** The type match that multiplies the sum, and the reward it makes against the one recorded. */
function productRows(
  info: RewardInfo,
  sum: number,
  reward: number | null,
  goal: WebshopGoalRow | undefined,
): TaskPanelRow[] {
  return [
    {
      key: 'type',
      cells: {
        component: 'product type match (r_type)',
        asked: `${goal?.query ? `"${goal.query}"; ` : ''}query match ${yesNo(info.query_match)}, category match ${yesNo(info.category_match)}, title score ${threeDecimals(info.title_score)}`,
        value: info.r_type ?? null,
        weight: '× all',
      },
    },
    {
      key: 'total',
      total: true,
      cells: {
        component: `reward = r_type × (sum of contributions) = ${threeDecimals(info.r_type)} × ${threeDecimals(sum)}`,
        value: (info.r_type ?? 0) * sum,
        contribution: `recorded: ${threeDecimals(reward)}`,
      },
    },
  ];
}

/** The purchase panel of one task (`result` as stored, `goal` when the run's catalog has it). */
function webshopPurchasePanel(
  result: Record<string, unknown>,
  reward: number | null,
  goal: WebshopGoalRow | undefined,
): TaskPanel {
  const asin = result['purchased_asin'];
  if (!asin)
    return {
      id: 'purchase',
      title: 'Purchase',
      paragraphs: [
        {
          field: 'purchase',
          text: ['No purchase: the episode ended without buying (reward 0).'],
        },
      ],
    };
  const info = (result['reward_info'] ?? null) as RewardInfo | null;
  const weighted = info ? weightedRows(info, result, goal) : [];
  const sum = weighted.reduce((total, row) => total + Number(row.cells['contribution'] ?? 0), 0);
  return {
    id: 'purchase',
    title: 'Purchase and reward',
    paragraphs: [{ field: 'purchase', text: purchaseText(result, String(asin), goal) }],
    ...(info
      ? {
          table: {
            name: 'reward',
            rowAttribute: 'reward-component',
            columns: [
              { key: 'component', label: 'Component' },
              { key: 'asked', label: 'The goal asked', attribute: 'asked' },
              { key: 'value', label: 'Value', numeric: true, attribute: 'value' },
              { key: 'weight', label: 'Weight', numeric: true, attribute: 'weight' },
              { key: 'contribution', label: 'Contribution', numeric: true },
            ],
            rows: [...weighted, ...productRows(info, sum, reward, goal)],
          },
        }
      : {}),
    raw: { label: 'result', value: result },
  };
}

/** WebShop's `display.taskDetail`: the goal row, then the purchase panel; nothing for a task with no result yet. */
export async function webshopTaskDetail({ task, query }: TaskDetailContext): Promise<TaskPanel[]> {
  if (!isRecord(task.result)) return [];
  const [goal] = await query<WebshopGoalRow>(webshopGoalQuery);
  return [webshopPurchasePanel(task.result, task.reward, goal)];
}
